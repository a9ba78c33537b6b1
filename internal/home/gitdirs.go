package home

import (
	"path/filepath"
	"strings"
)

// GitDirs are the directories in home that a git config names for every
// repository: the template init copies hooks from, the global hooks.
func GitDirs(config []byte, home string) []string {
	var dirs []string
	for _, line := range strings.Split(string(config), "\n") {
		key, val, ok := strings.Cut(strings.TrimSpace(line), "=")
		key = strings.ToLower(strings.TrimSpace(key))
		if !ok || key != "templatedir" && key != "hookspath" {
			continue
		}
		val = strings.Trim(strings.TrimSpace(val), `"`)
		if rest, ok := strings.CutPrefix(val, "~/"); ok {
			val = filepath.Join(home, rest)
		}
		if val = filepath.Clean(val); filepath.IsAbs(val) && strings.HasPrefix(val, home+"/") {
			dirs = append(dirs, val)
		}
	}
	return dirs
}
