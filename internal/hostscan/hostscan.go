// Package hostscan reads what the host holds that a sandbox's view must
// hide though it shows the directory: the pathname sockets daemons listen
// on, and the files only root may read. It also tells whether a TCP port
// listens in a process's network namespace (TCPListening): a session's
// server, which cannot be dialled from the host; and which process holds the
// client's end of a connection made there (SocketOf, HoldsSocket).
package hostscan

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// ListeningSockets reads the pathname sockets bound in the caller's network
// namespace (the host's, before the session has one): the daemons there.
func ListeningSockets() []string {
	f, err := os.Open("/proc/net/unix")
	if err != nil {
		return nil
	}
	defer f.Close()
	var paths []string
	sc := bufio.NewScanner(f)
	sc.Scan() // the header
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		// Num RefCount Protocol Flags Type St Inode Path
		if len(fields) < 8 || !strings.HasPrefix(fields[7], "/") {
			continue
		}
		paths = append(paths, filepath.Clean(fields[7]))
	}
	return paths
}

// RootPrivate lists what below dirs (to depth levels, at most max entries
// looked at) others may not read: a directory so found is listed whole.
func RootPrivate(dirs []string, depth, max int) []string {
	var private []string
	for _, top := range dirs {
		filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
			if max--; err != nil || max < 0 {
				return filepath.SkipAll
			}
			if d.Type()&fs.ModeSymlink != 0 || p == top {
				return nil
			}
			if d.IsDir() && p == "/var/tmp" {
				return filepath.SkipDir // a view shows a /var/tmp of its own
			}
			info, err := d.Info()
			switch {
			case err != nil:
				return nil
			case info.Mode().Perm()&0o004 == 0:
				private = append(private, p)
				if d.IsDir() {
					return filepath.SkipDir
				}
			case d.IsDir() && strings.Count(p[len(top):], "/") >= depth:
				return filepath.SkipDir
			}
			return nil
		})
	}
	return private
}

// ClosedWay is the highest directory between dir and path (both excluded)
// that others may not search, or "" if there is none, if path is not beneath
// dir, or if it is beneath one of skip.
func ClosedWay(dir, path string, skip []string) string {
	beneath := func(p, d string) bool { return strings.HasPrefix(p, d+"/") }
	if path == "" || !beneath(path, dir) || slices.ContainsFunc(skip, func(o string) bool { return beneath(path, o) }) {
		return ""
	}
	at := dir
	for _, name := range strings.Split(strings.TrimPrefix(filepath.Dir(path), dir+"/"), "/") {
		at = filepath.Join(at, name)
		if fi, err := os.Stat(at); err == nil && fi.Mode().Perm()&0o001 == 0 {
			return at
		}
	}
	return ""
}
