package checkpoint

import (
	"bytes"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// dirWatch tells which directories of the root (and of its .git) changed
// since the last checkpoint, from inotify: a directory walked once is
// watched, so the next checkpoint reads again only the directories something
// happened in (a file written, made, removed, renamed, its mode or times
// changed) and takes the others as they were. An overflow of the kernel's
// queue, a changed ignore file, or a watch that could not be added makes the
// next walk a whole one; so does every process's first.
type dirWatch struct {
	fd *watchFD

	mu      sync.Mutex
	paths   map[int32]string // watch descriptor → pass ('w' or 'g') and path in it
	dirty   map[string]bool  // keys as in paths, since the last drain
	full    [2]bool          // work, git: the next walk of the pass is a whole one
	broken  bool             // inotify failed: every walk is a whole one
	healthy [2]bool          // the pass's last walk left every directory watched
}

// watchFD closes the inotify descriptor when its Store is collected.
type watchFD struct{ fd int }

const watchMask = unix.IN_MODIFY | unix.IN_ATTRIB | unix.IN_CLOSE_WRITE | unix.IN_CREATE | unix.IN_DELETE |
	unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_ONLYDIR | unix.IN_DONT_FOLLOW

// watchShare bounds the directories one Store watches: an eighth of the
// user's inotify watches, at most 4096 (with the 2048 of package repowatch's
// watch of the same root, under the 8192 of the old kernels' default). A
// project with more directories is walked whole at each checkpoint.
var watchShare = sync.OnceValue(func() int {
	limit := 8192
	if b, err := os.ReadFile("/proc/sys/fs/inotify/max_user_watches"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && n > 0 {
			limit = n
		}
	}
	return min(limit/8, 4096)
})

func newDirWatch(owner *Store) *dirWatch {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil
	}
	w := &dirWatch{fd: &watchFD{fd}, paths: map[int32]string{}, dirty: map[string]bool{}}
	runtime.AddCleanup(owner, func(f *watchFD) { unix.Close(f.fd) }, w.fd)
	return w
}

func passIndex(pass byte) int {
	if pass == 'g' {
		return 1
	}
	return 0
}

// add watches directory abs, path rel of pass; called before the directory
// is read, so that nothing done to it after the read goes unseen.
func (w *dirWatch) add(pass byte, rel, abs string) {
	if w == nil {
		return
	}
	w.mu.Lock()
	full := len(w.paths) >= watchShare()
	w.mu.Unlock()
	wd, err := -1, error(unix.ENOSPC)
	if !full {
		wd, err = unix.InotifyAddWatch(w.fd.fd, abs, watchMask)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		// Out of watches (or the directory went): this pass is walked whole
		// next time.
		w.full[passIndex(pass)] = true
		return
	}
	w.paths[int32(wd)] = string(pass) + rel
}

// plan drains the events and says how the pass's next walk goes: nil, a
// whole walk; else what it may take as it was.
func (w *dirWatch) plan(pass byte) *walkPlan {
	if w == nil {
		return nil
	}
	w.drain()
	w.mu.Lock()
	defer w.mu.Unlock()
	i := passIndex(pass)
	full := w.broken || w.full[i] || !w.healthy[i]
	w.full[i] = false
	w.healthy[i] = true // until a watch fails during this walk (add sets full)
	p := &walkPlan{dirty: map[string]bool{}, below: map[string]bool{}}
	for k := range w.dirty {
		if k[0] != pass {
			continue
		}
		delete(w.dirty, k)
		rel := k[1:]
		p.dirty[rel] = true
		for {
			j := bytes.LastIndexByte([]byte(rel), '/')
			if j < 0 {
				break
			}
			rel = rel[:j]
			p.below[rel] = true
		}
		if k[1:] != "" {
			p.below[""] = true
		}
	}
	if full {
		return nil
	}
	return p
}

// failed marks the pass's walk as one that did not finish: walked whole
// next time.
func (w *dirWatch) failed(pass byte) {
	if w == nil {
		return
	}
	w.mu.Lock()
	w.healthy[passIndex(pass)] = false
	w.mu.Unlock()
}

// drain reads every event queued.
func (w *dirWatch) drain() {
	var buf [64 << 10]byte
	for {
		n, err := unix.Read(w.fd.fd, buf[:])
		if err == unix.EINTR {
			continue
		}
		if n <= 0 || err != nil {
			if err != nil && err != unix.EAGAIN {
				w.mu.Lock()
				w.broken = true
				w.mu.Unlock()
			}
			return
		}
		w.mu.Lock()
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(ev.Len)]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			off += unix.SizeofInotifyEvent + int(ev.Len)
			w.event(ev.Wd, ev.Mask, string(name))
		}
		w.mu.Unlock()
	}
}

func (w *dirWatch) event(wd int32, mask uint32, name string) {
	if mask&unix.IN_Q_OVERFLOW != 0 {
		w.full = [2]bool{true, true}
		return
	}
	key, ok := w.paths[wd]
	if !ok {
		return
	}
	if mask&unix.IN_IGNORED != 0 {
		delete(w.paths, wd)
	}
	w.dirty[key] = true
	if name == "" {
		return
	}
	child := key + "/" + name
	if len(key) == 1 {
		child = key + name
	}
	// The entry itself: a directory made again under the same name has no
	// watch of its own yet.
	w.dirty[child] = true
	switch {
	case name == ".gitignore" && key[0] == 'w':
		w.full[0] = true // ignore rules changed: every directory may be concerned
	case key == "w" && name == ".git":
		w.full[1] = true // a new .git has no watches yet
	case key == "ginfo" && name == "exclude":
		w.full[0] = true
	}
}
