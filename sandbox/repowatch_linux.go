package sandbox

import (
	"bytes"
	"path/filepath"
	"strconv"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// maxWatched bounds the directories one session watches: inotify watches
// are counted per user, and the user's editor needs its own.
const maxWatched = 1 << 15

// Bounds on one walk: how deep it goes (each level holds two open files),
// and how many directories it reads.
const (
	maxWalkDepth = 256
	maxWalked    = 200000
)

// repoWatch finds the directories of the root where a repository may have
// appeared — one holding an entry named .git, or a HEAD (a bare repository,
// which git enters as well) — wherever no index names it: git on the host
// runs such a repository's config and hooks once the user runs git in that
// directory, or once `git add .` makes it a gitlink of the root.
//
// inotify reports each name made or moved into a watched directory; a
// directory made or moved in is watched, then read whole, so what was put in
// it before the watch counts too. A goroutine keeps the kernel's queue
// drained; a pass drains it again itself, so whatever a command made before
// it ended is seen. The first walk runs beside the first command; a pass at
// a command's end or the session's close waits for it. Past maxWatched
// directories, or without inotify, the rest is found by a walk when the
// session closes; if the kernel dropped events, the whole root is walked
// again.
type repoWatch struct {
	fd         int // inotify
	rootFD     int // O_PATH
	quarantine string
	limit      int // maxWatched

	mu        sync.Mutex       // held while events are read and handled, and while walking
	wds       map[int32]string // watch → its directory, relative to the root
	marked    map[string]bool  // directories that held a .git or a HEAD when last seen
	unwatched []string         // directories (and all beneath) not watched
	budget    int              // directories the walk under way may still read
	snapshot  struct {         // marked, for a pass that does not wait
		sync.Mutex
		dirs []string
	}
}

// watchRepos starts watching the root for repositories.
func (m *mounter) watchRepos() error {
	if len(m.spec.Writable) == 0 || m.spec.Quarantine == "" {
		return nil
	}
	// What a command makes from now on has a later change time.
	unix.ClockGettime(unix.CLOCK_REALTIME_COARSE, &m.started)
	w, err := newRepoWatch(m.spec.Writable[0], m.spec.Quarantine)
	if w == nil {
		return err
	}
	m.repos = w
	w.mu.Lock() // a pass that waits waits for the first walk
	go w.run()
	return err
}

// newRepoWatch makes a watch of root that has not walked yet; without
// inotify (err), one that finds repositories by walking at the close.
func newRepoWatch(root, quarantine string) (*repoWatch, error) {
	rootFD, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		fd = -1 // the user's limit on instances
	}
	w := &repoWatch{fd: fd, rootFD: rootFD, limit: maxWatched, wds: map[int32]string{}, marked: map[string]bool{}}
	if fd < 0 {
		w.unwatched = []string{"."}
	}
	if rel, err := filepath.Rel(root, quarantine); err == nil {
		w.quarantine = rel
	}
	return w, err
}

// run walks the root once, then handles events as they come.
func (w *repoWatch) run() {
	w.walk(".", true)
	w.drain()
	w.mu.Unlock()
	if w.fd < 0 {
		return
	}
	fds := []unix.PollFd{{Fd: int32(w.fd), Events: unix.POLLIN}}
	for {
		if _, err := unix.Poll(fds, -1); err != nil && err != unix.EINTR {
			return
		}
		w.mu.Lock()
		w.drain()
		w.mu.Unlock()
	}
}

// dirs lists the directories that may hold a repository: with wait, after
// the first walk and every event queued so far; without, as last known.
func (w *repoWatch) dirs(wait, final bool) []string {
	if wait {
		w.mu.Lock()
	} else if !w.mu.TryLock() {
		w.snapshot.Lock()
		defer w.snapshot.Unlock()
		return w.snapshot.dirs
	}
	defer w.mu.Unlock()
	w.drain()
	if final {
		for _, dir := range w.unwatched {
			w.walk(dir, false)
		}
	}
	for dir := range w.marked {
		if !hasEntry(w.rootFD, dir, ".git") && !hasEntry(w.rootFD, dir, "HEAD") {
			delete(w.marked, dir) // removed since, or moved (found where it went)
		}
	}
	w.publish()
	return w.snapshot.dirs
}

// hasEntry reports whether the directory rel, beneath rootFD, holds name.
func hasEntry(rootFD int, rel, name string) bool {
	var st unix.Stat_t
	return unix.Fstatat(rootFD, filepath.Join(rel, name), &st, unix.AT_SYMLINK_NOFOLLOW) == nil
}

// drain handles every event queued, with w.mu held.
func (w *repoWatch) drain() {
	var buf [64 << 10]byte
	for w.fd >= 0 {
		n, err := unix.Read(w.fd, buf[:])
		if err == unix.EINTR {
			continue
		}
		if n <= 0 || err != nil {
			break
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			end := off + unix.SizeofInotifyEvent + int(ev.Len)
			name := string(bytes.TrimRight(buf[off+unix.SizeofInotifyEvent:min(end, n)], "\x00"))
			off = end
			switch {
			case ev.Mask&unix.IN_Q_OVERFLOW != 0:
				w.walk(".", true) // what was dropped is unknown: all of it again
			case ev.Mask&unix.IN_IGNORED != 0:
				delete(w.wds, ev.Wd)
			default:
				dir, ok := w.wds[ev.Wd]
				if !ok || name == "" {
					continue
				}
				if name == ".git" || name == "HEAD" {
					w.marked[dir] = true
				}
				if ev.Mask&unix.IN_ISDIR != 0 {
					w.walk(filepath.Join(dir, name), true)
				}
			}
		}
	}
	w.publish()
}

// walk reads rel and every directory beneath it (but .git directories and
// the quarantine), marking those that hold a .git or a HEAD and, with watch,
// watching each before it is read.
func (w *repoWatch) walk(rel string, watch bool) {
	if rel == "." && watch {
		w.unwatched = nil // all of it again
	}
	w.budget = maxWalked
	w.walkDepth(rel, watch, 0)
}

func (w *repoWatch) walkDepth(rel string, watch bool, depth int) {
	if filepath.Base(rel) == ".git" {
		return
	}
	if depth > maxWalkDepth || w.budget <= 0 {
		return // see README's known limits
	}
	w.budget--
	fd, err := beneath(w.rootFD, rel)
	if err != nil {
		return // gone already, or reached through a symlink: git does not walk it
	}
	defer unix.Close(fd)
	// What the quarantine holds was judged and is read-only; anything else
	// a command put in the quarantine directory is looked at like the rest.
	var fs unix.Statfs_t
	if filepath.Dir(rel) == w.quarantine && unix.Fstatfs(fd, &fs) == nil && fs.Flags&unix.ST_RDONLY != 0 {
		return
	}
	if watch {
		wd, err := -1, error(unix.ENOSPC)
		if len(w.wds) < w.limit {
			wd, err = unix.InotifyAddWatch(w.fd, "/proc/self/fd/"+strconv.Itoa(fd), unix.IN_CREATE|unix.IN_MOVED_TO|unix.IN_ONLYDIR)
		}
		if err == nil {
			// A directory moved within the root keeps its watch: this is
			// where it is now.
			w.wds[int32(wd)] = rel
		} else { // past the bound, or the user's limit
			w.unwatched = append(w.unwatched, rel)
			watch = false // nor anything beneath
		}
	}
	f, err := openAt(fd, ".", unix.O_DIRECTORY)
	if err != nil {
		return
	}
	defer f.Close()
	entries, _ := f.ReadDir(-1)
	delete(w.marked, rel)
	for _, e := range entries {
		switch name := e.Name(); {
		case name == ".git" || name == "HEAD":
			w.marked[rel] = true
		case e.IsDir():
			w.walkDepth(filepath.Join(rel, name), watch, depth+1)
		}
	}
}

// publish copies marked for passes that do not wait.
func (w *repoWatch) publish() {
	dirs := make([]string, 0, len(w.marked))
	for d := range w.marked {
		dirs = append(dirs, d)
	}
	w.snapshot.Lock()
	w.snapshot.dirs = dirs
	w.snapshot.Unlock()
}
