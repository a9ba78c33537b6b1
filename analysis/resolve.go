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
	missing := false
	for rest := p; rest != ""; {
		var comp string
		comp, rest, _ = strings.Cut(rest, "/")
		switch comp {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		if missing {
			// Nothing below a missing directory exists: the rest is lexical.
			return filepath.Join(cur, comp, rest)
		}
		next := filepath.Join(cur, comp)
		fi, err := os.Lstat(next)
		if err != nil {
			missing = true
			cur = next
			continue
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			cur = next
			continue
		}
		*links++
		target, err := os.Readlink(next)
		if err != nil || *links > maxLinks {
			cur = next
			missing = true
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
