package sandbox

import (
	"bufio"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// osHost is the running host, as Plan asks about it.
type osHost struct{}

func (osHost) Lstat(path string) (Kind, string) {
	fi, err := os.Lstat(path)
	if err != nil {
		return Absent, ""
	}
	switch m := fi.Mode(); {
	case m.IsDir():
		return Dir, ""
	case m&os.ModeSymlink != 0:
		t, _ := os.Readlink(path)
		return Symlink, t
	case m&os.ModeSocket != 0:
		return Socket, ""
	case m.IsRegular():
		return File, ""
	}
	return Other, ""
}

// maxSettingsFile bounds a settings file the plan reads to scrub.
const maxSettingsFile = 1 << 20

func (osHost) ReadFile(path string) ([]byte, bool) {
	// Only a regular file: a FIFO would hang the start.
	if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() {
		return nil, false
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() || fi.Size() > maxSettingsFile {
		return nil, false
	}
	data, err := io.ReadAll(io.LimitReader(f, maxSettingsFile))
	return data, err == nil
}

// HostFacts gathers what Plan needs to know about this machine (on Linux;
// elsewhere no plan is applied, and doctor --plan shows what Linux would do).
func HostFacts() Facts {
	f := Facts{Host: osHost{}, Sockets: listeningSockets()}
	if os.Geteuid() == 0 {
		f.Private = rootPrivate([]string{"/etc", "/var"}, 4, 20000)
	}
	return f
}

// rootPrivate lists what below dirs (to depth levels, at most max entries
// looked at) others may not read: a directory so found is listed whole.
func rootPrivate(dirs []string, depth, max int) []string {
	var private []string
	for _, top := range dirs {
		filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
			if max--; err != nil || max < 0 {
				return filepath.SkipAll
			}
			if d.Type()&fs.ModeSymlink != 0 || p == top {
				return nil
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

// listeningSockets reads the pathname sockets bound in the caller's network
// namespace (the host's, before the session has one): the daemons there.
func listeningSockets() []string {
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
