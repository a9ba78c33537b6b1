package unixgate

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"unsafe"

	"github.com/shellgate/shellgate/internal/seccomp"
	"golang.org/x/sys/unix"
)

// HostNetwork, as Guard's noSupervisor, says that the session shares the
// host's network namespace, where the host's sockets are the session's, as
// the user asked: the layer then reads "host", as the network's does.
const HostNetwork = "host"

// Guard keeps the commands the calling thread forks from here on away from
// the host's pathname unix sockets, and says how: "landlock-v9" when the
// thread's Landlock domain (landlockABI, 0 without one) handles the right,
// "supervisor" when it installed the notifying filter on the calling thread
// and serves it from this process's other threads. noSupervisor, when set,
// says why this process cannot supervise. The error says why host sockets
// stay reachable, after the layer's name.
func Guard(landlockABI int, noSupervisor string) (string, error) {
	if landlockABI >= 9 {
		return "landlock-v9", nil
	}
	if noSupervisor == HostNetwork {
		return "host", nil
	}
	why := fmt.Sprintf("Landlock (ABI %d < 9) does not govern connect, and ", landlockABI)
	if landlockABI == 0 {
		why = "without Landlock ABI 9 nothing governs connect, and "
	}
	if noSupervisor != "" {
		return "", fmt.Errorf("%s: %s%s, so a host's pathname unix socket stays reachable", Layer, why, noSupervisor)
	}
	listener, err := seccomp.InstallNotify()
	if err != nil {
		return "", fmt.Errorf("%s: %sthe kernel takes no notifying seccomp filter (%v), so a host's pathname unix socket stays reachable", Layer, why, err)
	}
	// A goroutine never runs on a locked thread, and Go makes new threads
	// from a clean one: the filter stays on the caller.
	go serve(listener)
	return "supervisor", nil
}

// maxHandlers bounds the calls handled at once: a connect may block.
const maxHandlers = 128

// seccompNotif and seccompResp are struct seccomp_notif (with its
// seccomp_data) and struct seccomp_notif_resp.
type seccompNotif struct {
	id    uint64
	pid   uint32
	flags uint32
	nr    int32
	arch  uint32
	ip    uint64
	args  [6]uint64
}

type seccompResp struct {
	id    uint64
	val   int64
	error int32
	flags uint32
}

func serve(listener int) { receive(listener, make(chan struct{}, maxHandlers)) }

// receive takes the next notification, leaves the one after to a new
// goroutine and answers its own on the thread it runs on: a goroutine
// started to answer would wait for a free P (the caller holds one in its
// system call) until the runtime takes one back, milliseconds at times.
func receive(listener int, slots chan struct{}) {
	n := new(seccompNotif)
	for {
		*n = seccompNotif{}
		err := ioctl(listener, unix.SECCOMP_IOCTL_NOTIF_RECV, unsafe.Pointer(n))
		if err == nil {
			break
		}
		if err != unix.EINTR && err != unix.ENOENT { // ENOENT: the caller died meanwhile
			fmt.Fprintln(os.Stderr, "unixgate: the listener failed:", err)
			return
		}
	}
	slots <- struct{}{}
	defer func() { <-slots }()
	go receive(listener, slots)
	val, errno := handle(listener, n)
	r := seccompResp{id: n.id, val: val, error: -int32(errno)}
	ioctl(listener, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&r)) // ENOENT: the caller is gone
}

func ioctl(fd int, req uint, arg unsafe.Pointer) error {
	if _, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(req), uintptr(arg)); errno != 0 {
		return errno
	}
	return nil
}

// A caller is the thread whose call is being handled.
type caller struct {
	tid        int
	pidfd, mem int
}

// open reaches the caller and checks, afterwards, that the notification is
// still live: the thread ID was not reused by then.
func open(listener int, n *seccompNotif) (*caller, unix.Errno) {
	c := &caller{tid: int(n.pid), pidfd: -1, mem: -1}
	var err error
	if c.pidfd, err = unix.PidfdOpen(c.tid, unix.O_EXCL); err != nil { // PIDFD_THREAD
		c.pidfd, err = unix.PidfdOpen(c.tid, 0)
	}
	if err == nil {
		c.mem, err = unix.Open("/proc/"+strconv.Itoa(c.tid)+"/mem", unix.O_RDWR|unix.O_CLOEXEC, 0)
	}
	if err == nil {
		err = ioctl(listener, unix.SECCOMP_IOCTL_NOTIF_ID_VALID, unsafe.Pointer(&n.id))
	}
	if err != nil {
		c.close()
		return nil, errnoOf(err, unix.EPERM)
	}
	return c, 0
}

func (c *caller) close() {
	for _, fd := range []int{c.pidfd, c.mem} {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
}

// read copies n bytes at addr of the caller's memory.
func (c *caller) read(addr uint64, n int) ([]byte, unix.Errno) {
	b := make([]byte, n)
	if n == 0 {
		return b, 0
	}
	for done := 0; done < n; {
		r, err := unix.Pread(c.mem, b[done:], int64(addr)+int64(done))
		if err != nil || r == 0 {
			return nil, unix.EFAULT
		}
		done += r
	}
	return b, 0
}

func (c *caller) write(addr uint64, b []byte) unix.Errno {
	if r, err := unix.Pwrite(c.mem, b, int64(addr)); err != nil || r != len(b) {
		return unix.EFAULT
	}
	return 0
}

// handle performs the caller's call itself, on the caller's own socket, and
// returns its result.
func handle(listener int, n *seccompNotif) (int64, unix.Errno) {
	c, errno := open(listener, n)
	if errno != 0 {
		return 0, errno
	}
	defer c.close()
	fd, err := unix.PidfdGetfd(c.pidfd, int(int32(n.args[0])), 0)
	if err != nil {
		return 0, errnoOf(err, unix.EBADF)
	}
	defer unix.Close(fd)
	s := &sock{c: c, fd: fd}
	switch n.nr {
	case unix.SYS_CONNECT:
		return 0, s.connect(n.args[1], n.args[2])
	case unix.SYS_SENDTO:
		return s.sendto(n.args[1], n.args[2], int(int32(n.args[3])), n.args[4], n.args[5])
	case unix.SYS_SENDMSG:
		return s.sendmsg(n.args[1], int(int32(n.args[2])))
	case unix.SYS_SENDMMSG:
		return s.sendmmsg(n.args[1], uint32(n.args[2]), int(int32(n.args[3])))
	}
	return 0, unix.ENOSYS
}

// errnoOf is err's errno, or otherwise.
func errnoOf(err error, otherwise unix.Errno) unix.Errno {
	var errno unix.Errno
	if errors.As(err, &errno) {
		return errno
	}
	return otherwise
}

// resolve opens, as the caller would reach it, the file a socket address's
// path names: relative to the caller's working directory, its /proc/self
// being the caller's. It follows symlinks, as connect does.
func (c *caller) resolve(path string) (int, unix.Errno) {
	proc := "/proc/" + strconv.Itoa(c.tid) + "/"
	for _, self := range []string{"/proc/self/", "/proc/thread-self/"} {
		if rest, ok := strings.CutPrefix(path, self); ok {
			path = proc + rest
		}
	}
	dir := unix.AT_FDCWD
	if !strings.HasPrefix(path, "/") {
		cwd, err := unix.Open(proc+"cwd", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, errnoOf(err, unix.ENOENT)
		}
		defer unix.Close(cwd)
		dir = cwd
	}
	fd, err := unix.Openat(dir, path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, errnoOf(err, unix.ENOENT)
	}
	return fd, 0
}
