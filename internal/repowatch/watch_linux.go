package repowatch

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// watcher is the process's one inotify instance: the user has 128 at most, and
// a server runs many sessions. Events are read when a Tree asks (no
// goroutine), each handed to the Trees watching that directory.
type watcher struct {
	drainMu sync.Mutex // one drain at a time: what it read is handled when it returns
	mu      sync.Mutex // held while adding or dropping watches and reading events
	fd      int        // -1: no inotify here
	share   int        // the watches one Tree may take
	total   int        // the watches all Trees may take
	wds     map[int32][]watchOf
	count   map[*Tree]int
}

// watchOf is a Tree's name for a watched directory.
type watchOf struct {
	t   *Tree
	rel string
}

var shared = sync.OnceValue(func() *watcher {
	w := &watcher{fd: -1, wds: map[int32][]watchOf{}, count: map[*Tree]int{}}
	limit := 8192 // the old kernels' default
	if b, err := os.ReadFile("/proc/sys/fs/inotify/max_user_watches"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && n > 0 {
			limit = n
		}
	}
	// A quarter of the user's watches for all of shellgate, and at most
	// 2048 for one project, the levels nearest its top (see walk), where
	// repositories are made: the user's editor and other tools need theirs,
	// and the checkpoints watch the same root (package checkpoint).
	w.total, w.share = limit/4, min(limit/16, 2048)
	if fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK); err == nil {
		w.fd = fd
	}
	return w
})

// add watches dir, the Tree's rel, with t.mu held; false past the Tree's
// share or without inotify.
func (w *watcher) add(t *Tree, rel, dir string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fd < 0 || w.count[t] >= w.share || w.watching() >= w.total {
		return false
	}
	wd, err := unix.InotifyAddWatch(w.fd, dir, unix.IN_CREATE|unix.IN_MOVED_TO|unix.IN_ONLYDIR)
	if err != nil {
		return false
	}
	for i, o := range w.wds[int32(wd)] {
		if o.t == t { // the same directory again, moved: this is its name now
			w.wds[int32(wd)][i].rel = rel
			return true
		}
	}
	w.wds[int32(wd)] = append(w.wds[int32(wd)], watchOf{t, rel})
	w.count[t]++
	return true
}

// watching is how many watches the Trees hold, with w.mu held.
func (w *watcher) watching() int {
	n := 0
	for _, c := range w.count {
		n += c
	}
	return n
}

// forget drops t's watches, with t.mu held; a directory another Tree
// watches keeps its watch.
func (w *watcher) forget(t *Tree) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for wd, list := range w.wds {
		kept := list[:0]
		for _, o := range list {
			if o.t != t {
				kept = append(kept, o)
			}
		}
		switch {
		case len(kept) == len(list):
		case len(kept) == 0:
			delete(w.wds, wd)
			unix.InotifyRmWatch(w.fd, uint32(wd))
		default:
			w.wds[wd] = kept
		}
	}
	delete(w.count, t)
}

// drain reads every queued event and hands each to its Trees.
func (w *watcher) drain() {
	if w.fd < 0 {
		return
	}
	w.drainMu.Lock()
	defer w.drainMu.Unlock()
	w.mu.Lock()
	type ev struct {
		to        []watchOf
		name      string
		dir, lost bool
	}
	var evs []ev
	var buf [64 << 10]byte
	for {
		n, err := unix.Read(w.fd, buf[:])
		if err == unix.EINTR {
			continue
		}
		if n <= 0 || err != nil {
			break
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			e := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			end := off + unix.SizeofInotifyEvent + int(e.Len)
			name := string(bytes.TrimRight(buf[off+unix.SizeofInotifyEvent:min(end, n)], "\x00"))
			off = end
			switch {
			case e.Mask&unix.IN_Q_OVERFLOW != 0:
				evs = append(evs, ev{lost: true})
			case e.Mask&unix.IN_IGNORED != 0: // the directory is gone
				for _, o := range w.wds[e.Wd] {
					w.count[o.t]--
				}
				delete(w.wds, e.Wd)
			case name != "":
				evs = append(evs, ev{to: append([]watchOf(nil), w.wds[e.Wd]...), name: name, dir: e.Mask&unix.IN_ISDIR != 0})
			}
		}
	}
	// Handled without w.mu: a Tree walks what was made, adding watches.
	w.mu.Unlock()
	for _, e := range evs {
		if e.lost {
			for t := range w.trees() {
				t.mu.Lock()
				t.lost = true
				t.mu.Unlock()
			}
			continue
		}
		for _, o := range e.to {
			o.t.mu.Lock()
			o.t.event(o.rel, e.name, e.dir)
			o.t.mu.Unlock()
		}
	}
}

// trees are the Trees watching, taken with w.mu.
func (w *watcher) trees() map[*Tree]bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	ts := map[*Tree]bool{}
	for t := range w.count {
		ts[t] = true
	}
	return ts
}
