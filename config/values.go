package config

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// parseDuration reads a duration written as a string with a unit ("90s", "2m", "1500ms").
// A bare number is refused rather than guessed: seconds or milliseconds would both be
// plausible readings.
func parseDuration(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, fmt.Errorf("empty duration; write it with a unit, e.g. \"90s\" or \"2m\"")
	}
	if _, err := strconv.ParseFloat(t, 64); err == nil {
		return 0, fmt.Errorf("%q has no unit; write e.g. \"%ss\" or \"%sms\"", s, t, t)
	}
	d, err := time.ParseDuration(t)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration; write e.g. \"500ms\", \"90s\" or \"2m\"", s)
	}
	return d, nil
}

// sizeUnits are binary multiples: "50KB" is 50×1024, as the seeds' "50 KB" output limit.
var sizeUnits = []struct {
	suffix string
	factor int64
}{
	// Longest suffixes first so "KB" is not read as "B".
	{"KIB", 1 << 10}, {"MIB", 1 << 20}, {"GIB", 1 << 30}, {"TIB", 1 << 40},
	{"KB", 1 << 10}, {"MB", 1 << 20}, {"GB", 1 << 30}, {"TB", 1 << 40},
	{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40},
	{"B", 1},
}

// parseSize reads a byte count: a TOML integer, or a string such as "512B", "50KB", "1GB".
func parseSize(v any) (int64, error) {
	switch v := v.(type) {
	case int64:
		if v < 0 {
			return 0, fmt.Errorf("%d is negative", v)
		}
		return v, nil
	case string:
		return parseSizeString(v)
	default:
		return 0, fmt.Errorf("want a byte count (an integer) or a string such as \"50KB\", got %s", tomlKind(v))
	}
}

func parseSizeString(s string) (int64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	factor := int64(1)
	for _, u := range sizeUnits {
		if rest, ok := strings.CutSuffix(t, u.suffix); ok {
			t, factor = strings.TrimSpace(rest), u.factor
			break
		}
	}
	bad := fmt.Errorf("%q is not a size; write e.g. \"512B\", \"50KB\", \"4MB\" or \"1GB\"", s)
	if t == "" {
		return 0, bad
	}
	n, err := strconv.ParseFloat(t, 64)
	if err != nil || n < 0 || math.IsNaN(n) {
		return 0, bad
	}
	bytes := n * float64(factor)
	if bytes > 1<<62 {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return int64(bytes), nil
}

// tomlKind names the TOML type of a decoded value for error messages.
func tomlKind(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case int64:
		return "an integer"
	case float64:
		return "a float"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "a table"
	case nil:
		return "nothing"
	default:
		return "a date or time"
	}
}

// resolvePath makes a path from a file absolute: "~" and "~/…" are taken from home,
// anything else relative to the directory of the file that names it.
func resolvePath(p, fileDir, home string) (string, error) {
	if strings.TrimSpace(p) == "" {
		return "", fmt.Errorf("empty path")
	}
	if strings.ContainsRune(p, 0) {
		return "", fmt.Errorf("path %q contains a NUL byte", p)
	}
	if p == "~" || strings.HasPrefix(p, "~/") || strings.HasPrefix(p, `~`+string(os.PathSeparator)) {
		if home == "" {
			return "", fmt.Errorf("cannot expand %q: no home directory known", p)
		}
		p = filepath.Join(home, p[1:])
	} else if strings.HasPrefix(p, "~") {
		// ~user is a shell feature we do not imitate; refuse rather than make a directory named "~user".
		return "", fmt.Errorf("cannot expand %q: only ~ and ~/… are supported", p)
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(fileDir, p)
	}
	return filepath.Clean(p), nil
}
