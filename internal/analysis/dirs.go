package analysis

import "strings"

// dirs is the set of directories a command may start in. Nil means unknown.
// Following both outcomes of every command (cd may fail) keeps "cd a || cd .."
// from hiding a ".." taken from the starting directory.
type dirs []string

// maxDirs caps the set; past it the directory counts as unknown.
const maxDirs = 8

func union(a, b dirs) dirs {
	if a == nil || b == nil {
		return nil
	}
	out := a
	copied := false
	for _, d := range b {
		if contains(out, d) {
			continue
		}
		if !copied {
			out = append(dirs(nil), a...)
			copied = true
		}
		out = append(out, d)
	}
	if len(out) > maxDirs {
		return nil
	}
	return out
}

func contains(ds dirs, d string) bool {
	for _, x := range ds {
		if x == d {
			return true
		}
	}
	return false
}

// join makes p absolute against every directory of ds: nil when p is relative
// and the directory is unknown. It does not clean the result: ".." after a
// symlink must be left for realpath.Resolve to follow.
func (ds dirs) join(p string) []string {
	if strings.HasPrefix(p, "/") {
		return []string{p}
	}
	if ds == nil {
		return nil
	}
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = strings.TrimSuffix(d, "/") + "/" + p
	}
	return out
}

// Abs makes p absolute against the directories the command may start in. It
// returns nil when p is relative and the directory is unknown. Symlinks are not
// followed and ".." is kept (see realpath.Resolve).
func (c *Command) Abs(p string) []string { return dirs(c.Dirs).join(p) }
