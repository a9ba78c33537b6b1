package sandbox

import (
	"io"
	"os"

	"github.com/shellgate/shellgate/internal/hostscan"
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
	f := Facts{Host: osHost{}, Sockets: hostscan.ListeningSockets()}
	if os.Geteuid() == 0 {
		f.Private = hostscan.RootPrivate([]string{"/etc", "/var"}, 4, 20000)
	}
	return f
}
