package hint

import (
	"path/filepath"
	"runtime"
	"testing"
)

// The user file is named where shellgate reads it, the home written ~: on
// Linux under $XDG_CONFIG_HOME when it is set, else ~/.config; on macOS under
// ~/Library/Application Support.
func TestUserConfig(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	switch runtime.GOOS {
	case "linux":
		if got := UserConfig(); got != "~/.config/shellgate/config.toml" {
			t.Errorf("UserConfig() = %q, want ~/.config/shellgate/config.toml", got)
		}
		xdg := filepath.Join(t.TempDir(), "cfg")
		t.Setenv("XDG_CONFIG_HOME", xdg)
		if got, want := UserConfig(), filepath.Join(xdg, "shellgate", "config.toml"); got != want {
			t.Errorf("with XDG_CONFIG_HOME: UserConfig() = %q, want %q", got, want)
		}
		t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "etc"))
		if got := UserConfig(); got != "~/etc/shellgate/config.toml" {
			t.Errorf("XDG_CONFIG_HOME under the home: UserConfig() = %q, want ~/etc/shellgate/config.toml", got)
		}
	case "darwin":
		if got := UserConfig(); got != "~/Library/Application Support/shellgate/config.toml" {
			t.Errorf("UserConfig() = %q, want ~/Library/Application Support/shellgate/config.toml", got)
		}
	}
	if got, want := UserConfigFile(), filepath.Join(home, "etc", "shellgate", "config.toml"); runtime.GOOS == "linux" && got != want {
		t.Errorf("UserConfigFile() = %q, want %q", got, want)
	}
}
