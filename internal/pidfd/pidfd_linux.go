// Package pidfd waits for processes without holding a thread: a pidfd
// becomes readable when its process exits, and Go's poller parks on it.
package pidfd

import (
	"errors"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// AwaitExit returns once the process of pidfd (ours to close; -1: none) has
// exited. It parks on the runtime's poller, where a wait(2) would block an
// OS thread for the helper's whole life: one thread per session, 500 for 500
// abandoned HTTP sessions. Wait then reaps the process at once.
//
// The poller is told of the exit by an edge; one was missed here (Linux
// 6.18, a helper killed while a one-shot run gave up its session: the pidfd
// polled readable for minutes, the waiter never woke), so the wait also
// looks again, less often the longer it lasts: a missed edge costs at most
// a look's interval, not the caller's life.
func AwaitExit(pidfd int) {
	if pidfd < 0 {
		return
	}
	if err := unix.SetNonblock(pidfd, true); err != nil {
		unix.Close(pidfd)
		return
	}
	f := os.NewFile(uintptr(pidfd), "pidfd")
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	for look := firstLook; ; look = min(2*look, lastLook) {
		if f.SetReadDeadline(time.Now().Add(look)) != nil {
			return // not in the poller: the caller's Wait blocks instead
		}
		err := rc.Read(func(fd uintptr) bool { return exited(int(fd)) })
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			return
		}
	}
}

// How often AwaitExit looks again for an exit its poller was not told of.
const (
	firstLook = 100 * time.Millisecond
	lastLook  = 10 * time.Second
)

// exited reports whether the process of pidfd has exited: a pidfd is
// readable once it has.
func exited(pidfd int) bool {
	p := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
	n, err := unix.Poll(p, 0)
	return n > 0 || err != nil && err != unix.EINTR
}
