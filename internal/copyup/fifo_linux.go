package copyup

import (
	"strconv"
	"time"

	"github.com/shellgate/shellgate/internal/notify"
	"golang.org/x/sys/unix"
)

// openWaiting opens t as how asks. An open for writing only waits for a
// reader when t is a FIFO; a caller killed meanwhile (a command past its
// timeout) would leave the thread waiting for ever, and after maxWorkers of
// them every write-open of the session. So such an open tries without
// waiting first, and when it must wait, waits on a FIFO held here, whose
// other end is opened once the caller is gone.
func openWaiting(c *notify.Caller, t *target, how unix.OpenHow, openat2 bool) (int, unix.Errno) {
	if how.Flags&(unix.O_ACCMODE|unix.O_NONBLOCK|unix.O_PATH) != unix.O_WRONLY {
		return t.open(how, openat2)
	}
	try := how
	try.Flags |= unix.O_NONBLOCK
	fd, errno := t.open(try, openat2)
	var st unix.Stat_t
	switch {
	case errno == 0 && unix.Fstat(fd, &st) == nil && (st.Mode&unix.S_IFMT != unix.S_IFCHR && st.Mode&unix.S_IFMT != unix.S_IFBLK || unix.Major(st.Rdev) == memDevices):
		// A file, a FIFO with a reader, /dev/null: only the flag differs.
		if fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0); err == nil {
			unix.FcntlInt(uintptr(fd), unix.F_SETFL, fl&^unix.O_NONBLOCK)
		}
		return fd, 0
	case errno == 0: // a device, whose open O_NONBLOCK may change
		unix.Close(fd)
		return t.open(how, openat2)
	case errno == unix.EAGAIN: // a lease, which a blocking open waits out
		return t.open(how, openat2)
	case errno != unix.ENXIO:
		return -1, errno
	}
	p, errno := t.open(unix.OpenHow{Flags: unix.O_PATH | how.Flags&(unix.O_NOFOLLOW|unix.O_DIRECTORY)}, openat2)
	if errno != 0 {
		return -1, unix.ENXIO
	}
	defer unix.Close(p)
	if unix.Fstat(p, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO {
		return -1, unix.ENXIO // a socket, a device: as the kernel says
	}
	done := make(chan struct{})
	defer close(done)
	go release(c, p, done)
	return (&target{dir: -1, file: p}).open(how, openat2)
}

// memDevices is the major number of /dev/null, /dev/zero, /dev/urandom,
// whose open O_NONBLOCK does not change.
const memDevices = 1

// release opens the FIFO p for reading, so that a writer waiting for a
// reader goes on, once the caller is gone; it returns when done is closed.
func release(c *notify.Caller, p int, done chan struct{}) {
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case <-tick.C:
			if !c.Live() {
				if r, err := unix.Open("/proc/self/fd/"+strconv.Itoa(p), unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0); err == nil {
					<-done
					unix.Close(r)
				}
				return
			}
		}
	}
}
