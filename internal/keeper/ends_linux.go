package keeper

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"unsafe"

	"golang.org/x/sys/unix"
)

// endWatch wakes an idle keeper when one of the things it ends on may have
// happened — its root or store removed or moved, its socket or the store's
// HEAD removed or replaced, its executable replaced or touched — so that it
// sleeps, rather than looking every second, between them. An inotify
// instance of its own (not the process's shared one, whose events the
// store's watch drains): a wake is only a cue to look again, and what is
// looked at is what decides.
type endWatch struct {
	f     *os.File
	names map[string]bool // the entries of the watched directories that matter
	wake  chan struct{}
	done  chan struct{}
}

const (
	selfGone   = unix.IN_DELETE_SELF | unix.IN_MOVE_SELF
	entryMoved = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO
)

// watchEnds watches root, the store's directory dir (its socket and git/
// in it), git/ (its HEAD) and the executable exe (the file and its
// directory, where an install renames a new one over it).
func watchEnds(root, dir, exe string) (*endWatch, error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, err
	}
	for _, w := range []struct {
		path string
		mask uint32
	}{
		{root, selfGone | unix.IN_ONLYDIR},
		{dir, selfGone | entryMoved | unix.IN_ONLYDIR},
		{filepath.Join(dir, "git"), selfGone | entryMoved | unix.IN_ONLYDIR},
		{exe, selfGone | unix.IN_ATTRIB | unix.IN_MODIFY},
		{filepath.Dir(exe), selfGone | entryMoved | unix.IN_ONLYDIR},
	} {
		if _, err := unix.InotifyAddWatch(fd, w.path, w.mask|unix.IN_DONT_FOLLOW); err != nil {
			unix.Close(fd)
			return nil, &os.PathError{Op: "inotify_add_watch", Path: w.path, Err: err}
		}
	}
	// Non-blocking: the runtime's poller waits for it, and Close ends a read.
	e := &endWatch{f: os.NewFile(uintptr(fd), "keeper-ends"), wake: make(chan struct{}, 1), done: make(chan struct{}),
		names: map[string]bool{SocketName: true, "git": true, "HEAD": true, filepath.Base(exe): true}}
	go e.read()
	return e, nil
}

func (e *endWatch) read() {
	defer close(e.done)
	buf := make([]byte, 4096)
	for {
		n, err := e.f.Read(buf)
		if errors.Is(err, os.ErrClosed) {
			return
		}
		if err != nil && !errors.Is(err, unix.EINTR) && !errors.Is(err, unix.EAGAIN) {
			// An instance that cannot be read: wake once, and the keeper
			// falls back to looking every watchEvery.
			close(e.wake)
			return
		}
		if !e.matters(buf[:max(n, 0)]) {
			continue // the store writing its other files, say
		}
		select {
		case e.wake <- struct{}{}:
		default: // one wake pending says it all
		}
	}
}

// matters reports whether the events in buf may concern an end: one on a
// watched path itself (no name), or on an entry of names.
func (e *endWatch) matters(buf []byte) bool {
	for off := 0; off+unix.SizeofInotifyEvent <= len(buf); {
		ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
		end := min(off+unix.SizeofInotifyEvent+int(ev.Len), len(buf))
		name := buf[off+unix.SizeofInotifyEvent : end]
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		off = end
		if len(name) == 0 || e.names[string(name)] {
			return true
		}
	}
	return false
}

// close drops the watches and waits for the reader.
func (e *endWatch) close() {
	e.f.Close()
	<-e.done
}
