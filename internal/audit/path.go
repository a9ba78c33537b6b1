package audit

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
)

// FileName is the log's name in its directory.
const FileName = "audit.jsonl"

// DefaultPath returns where the log goes by default, the user's state directory:
// $XDG_STATE_HOME/shellgate/audit.jsonl, else ~/.local/state/shellgate/audit.jsonl;
// ~/Library/Logs/shellgate/audit.jsonl on macOS; %LocalAppData%\shellgate\audit.jsonl
// on Windows.
func DefaultPath() (string, error) {
	home, _ := os.UserHomeDir()
	return defaultPath(runtime.GOOS, home, os.Getenv)
}

func defaultPath(goos, home string, getenv func(string) string) (string, error) {
	var dir string
	switch goos {
	case "windows":
		dir = getenv("LocalAppData")
		if dir == "" && home != "" {
			dir = filepath.Join(home, "AppData", "Local")
		}
	case "darwin", "ios":
		if home != "" {
			dir = filepath.Join(home, "Library", "Logs")
		}
	default:
		// The XDG spec: a relative XDG_STATE_HOME is invalid and ignored.
		if x := getenv("XDG_STATE_HOME"); x != "" && filepath.IsAbs(x) {
			dir = x
		} else if home != "" {
			dir = filepath.Join(home, ".local", "state")
		}
	}
	if dir == "" {
		return "", errors.New("no home directory for the default audit log; set a path")
	}
	return filepath.Join(dir, "shellgate", FileName), nil
}
