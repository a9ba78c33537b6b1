package sandbox

import (
	"bytes"
	"maps"
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
	maxUnwatched = 4096 // directories the close's walk goes on from
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
	marked    map[string]mark  // directories that held a .git or a HEAD when last seen
	unwatched []string         // directories (and all beneath) not watched
	budget    int              // directories the walk under way may still read
	started   unix.Timespec    // the session's start, as change times count it
	snapshot  struct {         // marked, for a pass that does not wait
		sync.Mutex
		dirs map[string]mark
	}
}

// watchRepos starts watching the root for repositories.
func (m *mounter) watchRepos() error {
	if len(m.spec.Writable) == 0 || m.spec.Quarantine == "" {
		return nil
	}
	// What a command makes from now on has a later change time.
	var started unix.Timespec
	unix.ClockGettime(unix.CLOCK_REALTIME_COARSE, &started)
	w, err := newRepoWatch(m.spec.Writable[0], m.spec.Quarantine, started)
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
func newRepoWatch(root, quarantine string, started unix.Timespec) (*repoWatch, error) {
	rootFD, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		fd = -1 // the user's limit on instances
	}
	w := &repoWatch{fd: fd, rootFD: rootFD, started: started, limit: maxWatched, wds: map[int32]string{}, marked: map[string]mark{}}
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
	w.walk(".", true, walkStart)
	w.drain()
	w.publish()
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
		w.publish()
		w.mu.Unlock()
	}
}

// dirs lists the directories that may hold a repository, and how each was
// found: with wait, after the first walk and every event queued so far (and,
// if final, after a walk of what is not watched); without, as last known.
func (w *repoWatch) dirs(wait, final bool) map[string]mark {
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
		// The list grows as walks stop at their bounds; so much and no more.
		for i := 0; i < len(w.unwatched) && i < maxUnwatched; i++ {
			w.walk(w.unwatched[i], false, walkClose)
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
				w.walk(".", true, walkStart) // what was dropped is unknown: all of it again
			case ev.Mask&unix.IN_IGNORED != 0:
				delete(w.wds, ev.Wd)
			default:
				dir, ok := w.wds[ev.Wd]
				if !ok || name == "" {
					continue
				}
				if name == ".git" || name == "HEAD" {
					w.mark(dir, markMade)
				}
				if ev.Mask&unix.IN_ISDIR != 0 {
					w.walk(filepath.Join(dir, name), true, walkMade)
				}
			}
		}
	}
}

// walk reads rel and every directory beneath it (but .git directories and
// the quarantine), marking those that hold a .git or a HEAD and, with watch,
// watching each before it is read.
func (w *repoWatch) walk(rel string, watch bool, how walkKind) {
	if rel == "." && watch {
		w.unwatched = nil // all of it again
	}
	w.budget = maxWalked
	w.walkDepth(rel, watch, how, 0)
}

// walkKind says what a walk finds: what was there at the start (or made
// since, by its change time), what was made or moved in since the start,
// what the close's walk finds where nothing watched.
type walkKind int

const (
	walkStart walkKind = iota
	walkMade
	walkClose
)

// mark says how a directory holding a repository was found.
type mark int

const (
	markOld    mark = iota // its .git or HEAD there since before the session
	markMade               // made or moved there while the session ran
	markUnseen             // made while the session ran, where nothing watched: found at the close
)

// mark marks rel, never taking back what an earlier look found.
func (w *repoWatch) mark(rel string, m mark) {
	w.marked[rel] = max(w.marked[rel], m)
}

func (w *repoWatch) walkDepth(rel string, watch bool, how walkKind, depth int) {
	if filepath.Base(rel) == ".git" {
		return
	}
	if depth > maxWalkDepth || w.budget <= 0 {
		w.unwatched = append(w.unwatched, rel) // the close's walk goes on from here
		return
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
	for _, e := range entries {
		switch name := e.Name(); {
		case name == ".git" || name == "HEAD":
			// A rename sets the change time of what it moves: a .git moved
			// in whole, files and all older than the session, is new here.
			var st unix.Stat_t
			switch {
			case how == walkMade:
				w.mark(rel, markMade)
			case unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || !later(w.started, st.Ctim):
				if how == walkClose {
					w.mark(rel, markUnseen)
				} else {
					w.mark(rel, markMade)
				}
			default:
				w.mark(rel, markOld)
			}
		case e.IsDir():
			w.walkDepth(filepath.Join(rel, name), watch, how, depth+1)
		}
	}
}

// publish copies marked for passes that do not wait, with w.mu held.
func (w *repoWatch) publish() {
	dirs := maps.Clone(w.marked)
	w.snapshot.Lock()
	w.snapshot.dirs = dirs
	w.snapshot.Unlock()
}
