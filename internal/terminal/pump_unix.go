//go:build unix

package terminal

import (
	"errors"
	"io"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// A Pump copies what a program writes to a pseudo-terminal from its master
// to a writer, and can tell whether all of it has arrived there.
//
// Whether a program waits for input is read from its state (blocked in a
// read of the terminal); what it printed just before, a prompt, may still
// be in the terminal or between a copy's read and its write. Drained closes
// that gap: each read is written under a lock, and it asks the kernel, under
// the same lock, whether the master has anything left to read (a poll of a
// pty master first moves what the program wrote into what can be read).
type Pump struct {
	master *os.File
	w      io.Writer
	mu     sync.Mutex
}

// NewPump returns a Pump from master to w; Run copies.
func NewPump(master *os.File, w io.Writer) *Pump {
	return &Pump{master: master, w: w}
}

// Run copies until the terminal is closed on the program's side (EIO) or
// the master fails. The master must stay open until it returns.
func (p *Pump) Run() error {
	rc, err := p.master.SyscallConn()
	if err != nil {
		_, err = io.Copy(p.w, p.master)
		return err
	}
	buf := make([]byte, 32<<10)
	for {
		var perr error
		if err := rc.Control(func(fd uintptr) { _, perr = readable(int(fd), -1) }); err != nil || perr != nil {
			return errors.Join(err, perr)
		}
		p.mu.Lock()
		var n int
		var rerr error
		err := rc.Control(func(fd uintptr) { n, rerr = unix.Read(int(fd), buf) })
		if n > 0 {
			p.w.Write(buf[:n])
		}
		p.mu.Unlock()
		switch {
		case err != nil:
			return err
		case rerr == unix.EAGAIN || rerr == unix.EINTR:
		case rerr == unix.EIO || n == 0 && rerr == nil:
			return nil // every holder of the program's side closed it
		case rerr != nil:
			return rerr
		}
	}
}

// Drained reports whether everything written to the terminal so far has
// been copied to the writer.
func (p *Pump) Drained() bool {
	rc, err := p.master.SyscallConn()
	if err != nil {
		return true
	}
	// A copy in flight is not drained; and waiting for it could wait on a
	// write to the log that blocks (its screen answering into a full
	// terminal).
	if !p.mu.TryLock() {
		return false
	}
	defer p.mu.Unlock()
	pending := false
	rc.Control(func(fd uintptr) { pending, _ = readable(int(fd), 0) })
	return !pending
}

// readable polls fd for input for up to timeout ms (-1: until there is
// some, or a hang-up or error, which a read then reports).
func readable(fd, timeout int) (bool, error) {
	for {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, timeout)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			return false, err
		case timeout == 0:
			return fds[0].Revents&unix.POLLIN != 0, nil
		case n > 0:
			return true, nil
		}
	}
}
