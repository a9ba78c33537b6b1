package copyup

import (
	"strconv"
	"sync"
	"time"

	"github.com/shellgate/shellgate/internal/notify"
	"github.com/shellgate/shellgate/internal/procfs"
	"golang.org/x/sys/unix"
)

// umasks keeps each calling thread's umask, read from its /proc status the
// first time it makes a name: that read (the kernel renders the whole
// status file) was a tenth of a supervised creation's cost. It is right
// only while no umask changes, so the supervisor is handed every umask call
// (seccomp.Creations) and forgets them all at each one (a umask is shared
// by the threads of a process, and by processes cloned with CLONE_FS). An
// entry holds a pidfd of its thread: a thread ID reused by another thread
// (whose umask its creator's gave it) is not taken for the one that ended.
type umasks struct {
	mu sync.Mutex
	// gen counts the umask calls seen, and their ends: a umask read from
	// /proc is kept only if none came meanwhile.
	gen uint64
	// pending counts the umask calls not yet seen to take effect: until
	// then a read may see the old one, and none is kept.
	pending int
	// off: a umask call was never seen to take effect; none is kept.
	off bool
	by  map[int]umaskEntry // by thread ID
	// calls counts each thread's umask calls whose effect is awaited: a
	// later one ends the wait for the earlier (a thread's calls come one
	// after another), whose value may never show (umask(0) then back).
	calls map[int]uint64
}

type umaskEntry struct {
	pidfd, mask int
}

// maxUmasks bounds the threads whose umasks are kept: past it they are all
// forgotten (a build's thousand short processes) and their pidfds closed.
const maxUmasks = 256

// of is the caller's umask, 022 if unknown: kept, or read and kept.
func (u *umasks) of(c *notify.Caller) int {
	if u == nil {
		return callerUmask(c)
	}
	u.mu.Lock()
	if e, ok := u.by[c.Tid]; ok {
		// A live thread keeps its ID: the entry's is the caller.
		if unix.PidfdSendSignal(e.pidfd, 0, nil, 0) == nil {
			u.mu.Unlock()
			return e.mask
		}
		unix.Close(e.pidfd)
		delete(u.by, c.Tid)
	}
	gen, keep := u.gen, u.pending == 0 && !u.off
	u.mu.Unlock()
	if !keep {
		return callerUmask(c)
	}
	pidfd, err := unix.PidfdOpen(c.Tid, unix.O_EXCL) // PIDFD_THREAD
	if err != nil {
		return callerUmask(c)
	}
	m, ok := readUmask(c.Proc() + "status")
	if !ok || !c.Live() { // the ID was the caller's while both were opened and read
		unix.Close(pidfd)
		return callerUmask(c)
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.gen != gen || u.pending != 0 || u.off {
		unix.Close(pidfd)
		return m
	}
	if u.by == nil || len(u.by) >= maxUmasks {
		u.forget()
		u.by = make(map[int]umaskEntry)
	}
	if old, ok := u.by[c.Tid]; ok {
		unix.Close(old.pidfd)
	}
	u.by[c.Tid] = umaskEntry{pidfd: pidfd, mask: m}
	return m
}

// forget closes and drops every entry; u.mu is held.
func (u *umasks) forget() {
	for _, e := range u.by {
		unix.Close(e.pidfd)
	}
	clear(u.by)
}

// changed is told a umask call of c's, setting mask, before it goes on: every
// kept umask is forgotten, and none is kept again until the call is seen to
// have taken effect (c's status shows mask, or c is gone), lest a read of
// another thread sharing c's umask, made meanwhile, keep the old one.
func (u *umasks) changed(c *notify.Caller, mask int) {
	tid := c.Tid
	u.mu.Lock()
	u.gen++
	u.pending++
	u.forget()
	if u.calls == nil {
		u.calls = make(map[int]uint64)
	}
	u.calls[tid]++
	seq := u.calls[tid]
	u.mu.Unlock()
	path := c.Proc() + "status"
	superseded := func() bool {
		u.mu.Lock()
		defer u.mu.Unlock()
		return u.calls[tid] != seq
	}
	go func() {
		applied := false
		for wait := 10 * time.Microsecond; wait < 2*time.Second; wait *= 2 {
			m, ok := readUmask(path)
			// Gone (its call ended, or never will), applied, or followed
			// by another of the thread's, which it began after this ended.
			if !ok || m == mask || superseded() {
				applied = true
				break
			}
			time.Sleep(wait)
		}
		u.mu.Lock()
		u.gen++
		u.pending--
		if u.calls[tid] == seq {
			delete(u.calls, tid)
		}
		if !applied {
			u.off = true // never seen to take effect: unsure
			u.forget()
		}
		u.mu.Unlock()
	}()
}

// readUmask reads the Umask field of a /proc status file.
func readUmask(path string) (int, bool) {
	buf := make([]byte, 0, 4096)
	b, err := procfs.Read(path, &buf, true)
	if err != nil {
		return 0, false
	}
	const field = "\nUmask:"
	for i := 0; i+len(field) <= len(b); i++ {
		if string(b[i:i+len(field)]) != field {
			continue
		}
		v := b[i+len(field):]
		for len(v) > 0 && (v[0] == '\t' || v[0] == ' ') {
			v = v[1:]
		}
		end := 0
		for end < len(v) && v[end] >= '0' && v[end] <= '7' {
			end++
		}
		m, err := strconv.ParseUint(string(v[:end]), 8, 32)
		return int(m), err == nil
	}
	return 0, false
}
