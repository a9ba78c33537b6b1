package sandbox

import (
	"io"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/shellgate/shellgate/internal/fresh"
	"github.com/shellgate/shellgate/internal/hostscan"
	"github.com/shellgate/shellgate/internal/idmap"
	"github.com/shellgate/shellgate/internal/sandbox/helper"
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
func HostFacts() Facts { return hostFacts.Get(gatherFacts) }

var hostFacts fresh.Shared[Facts]

// rootDirs are the system directories that hold what only root may read.
var rootDirs = helper.RootDirs

func gatherFacts() Facts {
	f := Facts{Host: osHost{}, Sockets: hostscan.ListeningSockets()}
	if os.Geteuid() == 0 {
		var walk []string
		for _, d := range rootDirs {
			if idmap.Works(d) {
				f.AsOthers = append(f.AsOthers, d)
			} else {
				walk = append(walk, d)
			}
		}
		f.Private = hostscan.RootPrivate(walk, 4, 20000)
	}
	return f
}

// SessionFacts are HostFacts for a session of spec, with the directories of
// those shown as others see them that others may not enter but that hold
// something the view puts there (a project in /var/lib/private/proj, a
// directory the user's git config names): the view shows an empty
// directory there, holding only those. What the view puts there is read
// from its plan, not listed: whatever a step mounts beneath such a
// directory, except beneath a tmpfs of the view's own (/var/tmp).
func SessionFacts(spec Spec) Facts { return sessionFacts(spec, HostFacts()) }

func sessionFacts(spec Spec, f Facts) Facts {
	// A session's start plans two or three times (here, to find what others
	// may not enter; then with what it found; again if idmap's trees fail),
	// and each plan asks the same paths: the home's entries, each secret,
	// each cache, each settings file. The host is asked once; f is
	// HostFacts' shared value, so the session's own copy remembers.
	f.Host = remember(f.Host)
	if len(f.AsOthers) == 0 {
		return f
	}
	steps := Plan(spec, f)
	var own []string
	for _, st := range steps {
		if st.Op == OpTmpfs {
			own = append(own, st.Path)
		}
	}
	for _, st := range steps {
		if st.Op == OpMask || st.Op == OpReadOnly {
			continue // a mask out of reach is out of the commands' too
		}
		for _, d := range f.AsOthers {
			if c := hostscan.ClosedWay(d, st.Path, own); c != "" && !slices.ContainsFunc(f.Closed, func(o string) bool { return c == o || strings.HasPrefix(c, o+"/") }) {
				f.Closed = append(slices.Clip(f.Closed), c)
			}
		}
	}
	return f
}

// rememberedHost answers each of Host's questions once, for one session's
// plans: what they ask is the host as it was at the session's start.
type rememberedHost struct {
	host  Host
	mu    sync.Mutex
	stats map[string]lstat
	files map[string][]byte // nil: ReadFile was not ok
}

type lstat struct {
	kind   Kind
	target string
}

func remember(h Host) Host {
	if h == nil {
		return nil
	}
	if r, ok := h.(*rememberedHost); ok {
		h = r.host // a fresh memory for this session
	}
	return &rememberedHost{host: h, stats: map[string]lstat{}, files: map[string][]byte{}}
}

func (r *rememberedHost) Lstat(path string) (Kind, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	v, ok := r.stats[path]
	if !ok {
		v.kind, v.target = r.host.Lstat(path)
		r.stats[path] = v
	}
	return v.kind, v.target
}

func (r *rememberedHost) ReadFile(path string) ([]byte, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	data, ok := r.files[path]
	if !ok {
		if d, ok := r.host.ReadFile(path); ok {
			data = append(make([]byte, 0, len(d)), d...) // never nil
		}
		r.files[path] = data
	}
	if data == nil {
		return nil, false
	}
	return slices.Clone(data), true // a plan may change what it is given
}
