package analysis

import (
	"os"
	"path/filepath"
	"strings"
)

// maxLinks bounds symlink hops, as the kernel does (ELOOP).
const maxLinks = 40

// ResolvePath follows symlinks in the absolute path p the way the kernel would
// open it: ".." after a link goes to the link target's parent. Components that
// do not exist yet are taken as written (they cannot be links), so a file about
// to be created resolves to where it would be created.
func ResolvePath(p string) string {
	links := 0
	return resolve("/", p, &links)
}

func resolve(base, p string, links *int) string {
	cur := base
	if strings.HasPrefix(p, "/") {
		cur = "/"
	}
	// missing is the first component that does not exist (or is not
	// followed): below it everything is lexical, until ".." climbs above it
	// (mkdir -p new/../link/x creates new, then follows link).
	missing := ""
	for rest := p; rest != ""; {
		var comp string
		comp, rest, _ = strings.Cut(rest, "/")
		switch comp {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			if missing != "" && !strings.HasPrefix(cur+"/", missing+"/") {
				missing = ""
			}
			continue
		}
		if missing != "" {
			cur = filepath.Join(cur, comp)
			continue
		}
		next := filepath.Join(cur, comp)
		if isProcMagic(next) {
			// Its target is another process's view (shellgate's own fds, cwd
			// and root, not the command's): the rest is lexical, and the
			// path stays under /proc, which is outside every project.
			missing, cur = next, next
			continue
		}
		fi, err := os.Lstat(next)
		if err != nil {
			missing, cur = next, next
			continue
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			cur = next
			continue
		}
		*links++
		target, err := os.Readlink(next)
		if err != nil || *links > maxLinks {
			missing, cur = next, next
			continue
		}
		cur = resolve(cur, target, links)
	}
	return cur
}

// ResolveIn is ResolvePath for rel taken from base, a directory whose own path
// is already resolved: only the components of rel are looked at.
func ResolveIn(base, rel string) string {
	links := 0
	return resolve(base, rel, &links)
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

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
