package output

import "strings"

const (
	spillIDLen   = 32 // hex digits of the random id
	spillExt     = ".log"
	maxNameLen   = 64
	fallbackName = "output"
)

// cleanName makes Options.Name safe for a file name: ASCII letters, digits, '-' and
// '_' only, so that it can never add a path element and Sweep can recognise the file.
func cleanName(name string) string {
	if name == "" {
		return fallbackName
	}
	if len(name) > maxNameLen {
		name = name[:maxNameLen]
	}
	return strings.Map(func(r rune) rune {
		if isNameByte(r) {
			return r
		}
		return '_'
	}, name)
}

func isNameByte[T rune | byte](r T) bool {
	return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '-' || r == '_'
}

// isSpillName reports whether a file name is one createSpill makes:
// 32 lowercase hex digits, '.', a cleaned name, ".log"; or, in a Gate's own
// directory (inSession), where every file is shellgate's, a number in place
// of the hex digits.
func isSpillName(s string, inSession bool) bool {
	rest, ok := strings.CutSuffix(s, spillExt)
	if !ok {
		return false
	}
	id, name, ok := strings.Cut(rest, ".")
	if !ok || name == "" || len(name) > maxNameLen {
		return false
	}
	switch {
	case len(id) == spillIDLen && strings.Trim(id, "0123456789abcdef") == "":
	case inSession && id != "" && len(id) <= 20 && id[0] != '0' && strings.Trim(id, "0123456789") == "":
	default:
		return false
	}
	for i := range len(name) {
		if !isNameByte(name[i]) {
			return false
		}
	}
	return true
}
