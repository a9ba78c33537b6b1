package inotify

import (
	"bytes"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// instance is the process's one inotify instance.
type instance struct {
	mu      sync.Mutex
	fd      int // -1: none could be had
	total   int
	watches map[int32]map[*Sub]*interest // by watch descriptor
	buf     [64 << 10]byte
}

// interest is one Sub's in one watch.
type interest struct {
	name string
	mask uint32
}

var the = sync.OnceValue(func() *instance {
	in := &instance{fd: -1, total: Total(), watches: map[int32]map[*Sub]*interest{}}
	if fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK); err == nil {
		in.fd = fd
	}
	return in
})

// Available reports whether the process has its inotify instance.
func Available() bool { return the().fd >= 0 }

// Sub is one watcher of the process's instance. Its methods are safe for
// concurrent use.
type Sub struct {
	in     *instance
	share  int
	count  int // watches held, with in.mu
	queue  []Event
	closed bool
}

// Subscribe returns a new watcher that may hold up to share watches (at most
// Total).
func Subscribe(share int) *Sub {
	return &Sub{in: the(), share: min(share, Total())}
}

// Add watches path under the Sub's name for it, for the events of mask (and
// its flags, OnlyDir, DontFollow). Adding a directory the Sub watches already
// (under another path, say, after a rename) renames it and adds the events.
func (s *Sub) Add(path, name string, mask uint32) error {
	in := s.in
	in.mu.Lock()
	defer in.mu.Unlock()
	switch {
	case in.fd < 0:
		return ErrUnsupported
	case s.closed:
		return ErrClosed
	case s.count >= s.share:
		return ErrShare
	case len(in.watches) >= in.total:
		return ErrTotal
	}
	// IN_MASK_ADD: a watch another Sub holds keeps the events it asked for.
	wd, err := unix.InotifyAddWatch(in.fd, path, mask|unix.IN_MASK_ADD)
	if err != nil {
		return err
	}
	subs := in.watches[int32(wd)]
	if subs == nil {
		subs = map[*Sub]*interest{}
		in.watches[int32(wd)] = subs
	}
	if i := subs[s]; i != nil {
		i.name, i.mask = name, i.mask|mask&events
		return nil
	}
	subs[s] = &interest{name, mask & events}
	s.count++
	return nil
}

// Watching is how many watches the Sub holds.
func (s *Sub) Watching() int {
	s.in.mu.Lock()
	defer s.in.mu.Unlock()
	return s.count
}

// Events reads what the kernel queued and returns the Sub's events since it
// last asked, oldest first.
func (s *Sub) Events() []Event {
	in := s.in
	in.mu.Lock()
	defer in.mu.Unlock()
	in.read()
	evs := s.queue
	s.queue = nil
	return evs
}

// Close drops the Sub's watches; a directory another Sub watches stays
// watched for it. The mask of such a watch keeps the union (inotify changes a
// mask only by path, which may name another directory by now): the events
// only the closed Sub asked for are read and dropped.
func (s *Sub) Close() {
	in := s.in
	in.mu.Lock()
	defer in.mu.Unlock()
	if s.closed {
		return
	}
	in.read() // what is queued for the others, before their watches change
	s.closed, s.queue = true, nil
	for wd, subs := range in.watches {
		if subs[s] == nil {
			continue
		}
		delete(subs, s)
		if len(subs) == 0 {
			delete(in.watches, wd)
			unix.InotifyRmWatch(in.fd, uint32(wd))
		}
	}
	s.count = 0
}

// read hands every queued event to its Subs, with in.mu held.
func (in *instance) read() {
	if in.fd < 0 {
		return
	}
	for {
		n, err := unix.Read(in.fd, in.buf[:])
		if err == unix.EINTR {
			continue
		}
		if n <= 0 || err != nil {
			return
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			e := (*unix.InotifyEvent)(unsafe.Pointer(&in.buf[off]))
			end := min(off+unix.SizeofInotifyEvent+int(e.Len), n)
			name := in.buf[off+unix.SizeofInotifyEvent : end]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			off = end
			in.event(e.Wd, e.Mask, string(name))
		}
	}
}

// event hands one event to the Subs it concerns, with in.mu held.
func (in *instance) event(wd int32, mask uint32, name string) {
	if mask&unix.IN_Q_OVERFLOW != 0 {
		seen := map[*Sub]bool{}
		for _, subs := range in.watches {
			for s := range subs {
				if !seen[s] {
					seen[s] = true
					s.push(Event{Mask: Overflow})
				}
			}
		}
		return
	}
	subs := in.watches[wd]
	gone := mask&unix.IN_IGNORED != 0
	for s, i := range subs {
		if gone || mask&(i.mask|Unmount) != 0 {
			s.push(Event{Dir: i.name, Name: name, Mask: mask})
		}
		if gone {
			s.count--
		}
	}
	if gone {
		delete(in.watches, wd)
	}
}

// push queues e for the Sub, with in.mu held: past maxQueued, what is queued
// gives way to an Overflow.
func (s *Sub) push(e Event) {
	switch {
	case len(s.queue) > 0 && s.queue[len(s.queue)-1].Mask == Overflow:
		// Lost already: the Sub scans what it watches whatever came after.
	case len(s.queue) >= maxQueued:
		s.queue = append(s.queue[:0], Event{Mask: Overflow})
	default:
		s.queue = append(s.queue, e)
	}
}
