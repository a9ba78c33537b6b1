package hint

import (
	"os"
	"path/filepath"
	"strings"
)

// UserConfigFile is the user's configuration file, where shellgate reads it:
// os.UserConfigDir()/shellgate/config.toml ($XDG_CONFIG_HOME or ~/.config on
// Linux, ~/Library/Application Support on macOS, %AppData% on Windows), or ""
// if the system has no user configuration directory.
func UserConfigFile() string {
	dir, err := os.UserConfigDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "shellgate", "config.toml")
}

// UserConfig is UserConfigFile as a note names it to the user (Tilde), and
// where there is no such file, the one Linux reads by default.
func UserConfig() string {
	p := UserConfigFile()
	if p == "" {
		return "~/.config/shellgate/config.toml"
	}
	return Tilde(p)
}

// Tilde is path p as a note names it to the user: under the home directory,
// written ~/…
func Tilde(p string) string {
	if home, err := os.UserHomeDir(); err == nil && home != "" && home != string(filepath.Separator) {
		if rel, ok := strings.CutPrefix(p, home+string(filepath.Separator)); ok {
			return "~" + string(filepath.Separator) + rel
		}
	}
	return p
}
