// Package realpath resolves paths as the kernel would open them, for a command
// about to run: symlinks followed, ".." after a link taken from its target, and
// components that do not exist yet taken as written.
package realpath

import (
	"os"
	"path/filepath"
	"strings"
)

// maxLinks bounds symlink hops, as the kernel does (ELOOP).
const maxLinks = 40

// Resolve follows symlinks in the absolute path p the way the kernel would
// open it: ".." after a link goes to the link target's parent. Components that
// do not exist yet are taken as written (they cannot be links), so a file about
// to be created resolves to where it would be created.
func Resolve(p string) string {
	links := 0
	return resolve("/", p, &links)
}

func resolve(base, p string, links *int) string {
	cur := base
	if strings.HasPrefix(p, "/") {
		cur = "/"
	}
	// missing: cur does not exist (or is not followed), and below is what
	// lies under it, taken lexically, until ".." climbs above cur again
	// (mkdir -p new/../link/x creates new, then follows link).
	missing := false
	var below []string
	for rest := p; rest != ""; {
		var comp string
		comp, rest, _ = strings.Cut(rest, "/")
		switch {
		case comp == "" || comp == ".":
			continue
		case missing && comp == "..":
			if len(below) > 0 {
				below = below[:len(below)-1]
			} else {
				cur, missing = filepath.Dir(cur), false
			}
			continue
		case missing:
			if len(below) == 0 && !hasDotDot(rest) {
				return filepath.Join(cur, comp, rest) // all lexical from here
			}
			below = append(below, comp)
			continue
		case comp == "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, comp)
		if isProcMagic(next) {
			// Its target is another process's view (shellgate's own fds, cwd
			// and root, not the command's): the rest is lexical, and the
			// path stays under /proc, which is outside every project.
			missing, cur = true, next
			continue
		}
		fi, err := os.Lstat(next)
		if err != nil {
			missing, cur = true, next
			continue
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			cur = next
			continue
		}
		*links++
		target, err := os.Readlink(next)
		if err != nil || *links > maxLinks {
			missing, cur = true, next
			continue
		}
		cur = resolve(cur, target, links)
	}
	if len(below) > 0 {
		return filepath.Join(append([]string{cur}, below...)...)
	}
	return cur
}

// ResolveIn is Resolve for rel taken from base, a directory whose own path
// is already resolved: only the components of rel are looked at.
func ResolveIn(base, rel string) string {
	links := 0
	return resolve(base, rel, &links)
}

// ResolveAll resolves each of paths as Resolve does, looking at each
// directory they share once: a list of paths under one home (the secrets,
// ~40 of them) costs an lstat for each path's last components instead of
// one for every component of every path (~200 lstats, a third of a
// millisecond, in every hook call before). A path that is not absolute
// and clean, or climbs with "..", is resolved on its own.
func ResolveAll(paths []string) []string {
	dirs := map[string]string{"/": "/"}
	var dir func(d string) string
	dir = func(d string) string {
		if r, ok := dirs[d]; ok {
			return r
		}
		parent, name := filepath.Split(d)
		r := ResolveIn(dir(filepath.Clean(parent)), name)
		dirs[d] = r
		return r
	}
	out := make([]string, len(paths))
	for i, p := range paths {
		if !strings.HasPrefix(p, "/") || filepath.Clean(p) != p || hasDotDot(p) || p == "/" {
			out[i] = Resolve(p)
			continue
		}
		parent, name := filepath.Split(p)
		out[i] = ResolveIn(dir(filepath.Clean(parent)), name)
	}
	return out
}

// isProcMagic reports the links of /proc whose target depends on the process
// that looks: /proc/PID/{cwd,root,exe}, /proc/PID/fd/N, /proc/PID/map_files/…,
// for PID a number, self or thread-self, and the same under task/TID.
func isProcMagic(p string) bool {
	rest, ok := strings.CutPrefix(p, "/proc/")
	if !ok {
		return false
	}
	pid, rest, _ := strings.Cut(rest, "/")
	if pid != "self" && pid != "thread-self" && !isDigits(pid) {
		return false
	}
	if t, ok := strings.CutPrefix(rest, "task/"); ok {
		tid, r, _ := strings.Cut(t, "/")
		if !isDigits(tid) {
			return false
		}
		rest = r
	}
	switch dir, entry, _ := strings.Cut(rest, "/"); dir {
	case "cwd", "root", "exe":
		return entry == ""
	case "fd", "map_files":
		return entry != "" && !strings.Contains(entry, "/")
	}
	return false
}

// IsDescriptor reports a command's own file descriptor written exactly:
// /dev/fd/3, /proc/self/fd/1, /proc/thread-self/fd/2 (not /dev/fd/../x).
func IsDescriptor(p string) bool {
	for _, prefix := range []string{"/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/"} {
		if n, ok := strings.CutPrefix(p, prefix); ok {
			return isDigits(n)
		}
	}
	return false
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// hasDotDot reports a ".." component in the slash-separated p.
func hasDotDot(p string) bool {
	for p != "" {
		var comp string
		comp, p, _ = strings.Cut(p, "/")
		if comp == ".." {
			return true
		}
	}
	return false
}
