package inherit

import (
	"os"

	"golang.org/x/sys/unix"
)

func pipe(childReads bool) (ours, child *os.File, err error) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return nil, nil, os.NewSyscallError("pipe2", err)
	}
	o, c, mode := p[0], p[1], unix.O_RDONLY
	if childReads {
		o, c, mode = p[1], p[0], unix.O_WRONLY
	}
	// Status flags set alone (a new pipe's end has none but its access mode),
	// without reading them first: os.NewFile reads them, and takes a
	// non-blocking descriptor into the poller.
	if _, err := unix.FcntlInt(uintptr(o), unix.F_SETFL, mode|unix.O_NONBLOCK); err != nil {
		unix.Close(p[0])
		unix.Close(p[1])
		return nil, nil, os.NewSyscallError("fcntl", err)
	}
	return os.NewFile(uintptr(o), "|ours"), os.NewFile(uintptr(c), "|child"), nil
}
