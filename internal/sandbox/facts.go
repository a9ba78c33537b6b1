package sandbox

import (
	"io"
	"os"
	"sync"

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
// Sessions that start together (an HTTP server's burst of new clients)
// share gatherings: as root each walks /etc and /var.
func HostFacts() Facts { return hostFacts.get(gatherFacts) }

var hostFacts sharedFacts

func gatherFacts() Facts {
	f := Facts{Host: osHost{}, Sockets: hostscan.ListeningSockets()}
	if os.Geteuid() == 0 {
		f.Private = hostscan.RootPrivate([]string{"/etc", "/var"}, 4, 20000)
	}
	return f
}

// sharedFacts shares gatherings among concurrent callers without handing
// anyone facts older than its call: a caller that arrives while a gathering
// runs waits for the next one, which every caller arriving meanwhile shares.
type sharedFacts struct {
	mu      sync.Mutex
	running bool
	next    *factsCall // what callers arriving now get; not started yet
}

type factsCall struct {
	done chan struct{}
	f    Facts
}

func (s *sharedFacts) get(gather func() Facts) Facts {
	s.mu.Lock()
	if s.next == nil {
		s.next = &factsCall{done: make(chan struct{})}
	}
	c := s.next
	if !s.running {
		s.running, s.next = true, nil
		go s.run(c, gather)
	}
	s.mu.Unlock()
	<-c.done
	return c.f
}

// run gathers for c, then for whoever arrived meanwhile, until nobody did.
func (s *sharedFacts) run(c *factsCall, gather func() Facts) {
	for c != nil {
		c.f = gather()
		close(c.done)
		s.mu.Lock()
		c, s.next = s.next, nil
		s.running = c != nil
		s.mu.Unlock()
	}
}
