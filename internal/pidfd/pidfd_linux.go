// Package pidfd waits for processes without holding a thread: a pidfd
// becomes readable when its process exits, and Go's poller parks on it.
package pidfd

import (
	"os"

	"golang.org/x/sys/unix"
)

// AwaitExit returns once the process of pidfd (ours to close; -1: none) has
// exited. It parks on the runtime's poller, where a wait(2) would block an
// OS thread for the helper's whole life: one thread per session, 500 for 500
// abandoned HTTP sessions. Wait then reaps the process at once.
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
	waited := false
	rc.Read(func(uintptr) bool { // a pidfd is readable once its process exited
		done := waited
		waited = true
		return done
	})
}
