package notify

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A Notif is one call handed over: struct seccomp_notif with its
// seccomp_data.
type Notif struct {
	ID    uint64
	Pid   uint32 // the calling thread, in the listener's PID namespace
	Flags uint32
	Nr    int32
	Arch  uint32
	IP    uint64
	Args  [6]uint64
}

// A Result is what the caller's call returns: Val, or the error Errno, or,
// when FD is 0 or more, that descriptor of ours, installed in the caller's
// table (close-on-exec if CloseOnExec) and returned as the call's value. The
// server closes FD afterwards. Later says that the handler took the call
// over and answers it itself, with Caller.Answer. Continue lets the call
// go on in the caller as if no filter had stopped it
// (SECCOMP_USER_NOTIF_FLAG_CONTINUE): only for a call whose arguments are
// all in registers, which the caller cannot change after the handler saw
// them.
type Result struct {
	Val         int64
	Errno       unix.Errno
	FD          int
	CloseOnExec bool
	Later       bool
	Continue    bool
}

// Value and Fail are a result without a descriptor.
func Value(v int64) Result     { return Result{Val: v, FD: -1} }
func Fail(e unix.Errno) Result { return Result{Errno: e, FD: -1} }

// A Handler performs a call for its caller.
type Handler func(c *Caller, n *Notif) Result

// maxHandlers bounds the calls handled at once: a call may block (a connect,
// the open of a FIFO).
const maxHandlers = 128

// Serve answers the listener's calls with h until the listener fails (every
// caller is gone and the listener is closed).
func Serve(listener int, h Handler) {
	syncWakeUp(listener)
	receive(listener, pollable(listener), h, make(chan struct{}, maxHandlers))
}

// syncWakeUp asks the kernel (Linux 6.6+: SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP)
// to hand each call over on the CPU the caller runs on, and back on the CPU
// that answers it: the caller sleeps from its call to the answer, so the
// receiving thread can run where it ran, and the caller where it was answered,
// rather than each waking a core that sat idle (on a virtual machine, a
// virtual CPU its host had put to sleep). An older kernel refuses it, and
// calls go as before.
func syncWakeUp(listener int) error {
	if _, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(listener), unix.SECCOMP_IOCTL_NOTIF_SET_FLAGS, unix.SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP); errno != 0 {
		return errno
	}
	return nil
}

// pollable returns the listener as the runtime's poller sees it, or nil where
// it cannot be polled. Waiting there for a call, rather than in the blocking
// ioctl, holds no P meanwhile: a helper runs with one (GOMAXPROCS=1), and a
// goroutine woken while the receiver sat in its system call (the reaper, at a
// command's exit) waited for the runtime's monitor to take that P back, up to
// 10 ms once the process had been idle a while.
func pollable(listener int) syscall.RawConn {
	fd, err := unix.FcntlInt(uintptr(listener), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	// O_NONBLOCK is the open file's, so the listener has it too: the ioctl
	// ignores it.
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil
	}
	rc, err := os.NewFile(uintptr(fd), "seccomp-listener").SyscallConn()
	if err != nil {
		return nil
	}
	return rc
}

// awaitCall waits, through the poller, until a call is pending on the
// listener or it has no callers left (gone). Without a poller it returns at
// once and the ioctl waits.
func awaitCall(rc syscall.RawConn) (gone bool) {
	if rc == nil {
		return false
	}
	rc.Read(func(fd uintptr) bool {
		p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(p, 0)
		gone = n > 0 && p[0].Revents&unix.POLLHUP != 0
		return err != nil || n > 0
	})
	return gone
}

// receive takes the next notification, leaves the one after to a new
// goroutine and answers its own on the thread it runs on: a goroutine
// started to answer would wait for a free P (the caller holds one in its
// system call) until the runtime takes one back, milliseconds at times.
func receive(listener int, rc syscall.RawConn, h Handler, slots chan struct{}) {
	n := new(Notif)
	for {
		gone := awaitCall(rc)
		*n = Notif{}
		err := Ioctl(listener, unix.SECCOMP_IOCTL_NOTIF_RECV, unsafe.Pointer(n))
		if err == nil {
			break
		}
		if gone && err == unix.ENOENT { // no caller left, and none can come
			return
		}
		if err != unix.EINTR && err != unix.ENOENT { // ENOENT: the caller died meanwhile
			fmt.Fprintln(os.Stderr, "notify: the listener failed:", err)
			return
		}
	}
	slots <- struct{}{}
	defer func() { <-slots }()
	go receive(listener, rc, h, slots)
	c := &Caller{Tid: int(n.Pid), listener: listener, id: n.ID, pidfd: -1, mem: -1}
	if r := h(c, n); !r.Later {
		c.Answer(r)
	}
}

// Answer answers the caller's call with r, and lets the caller go.
func (c *Caller) Answer(r Result) {
	answer(c.listener, c.id, r)
	c.close()
}

// seccompResp and seccompAddfd are struct seccomp_notif_resp and struct
// seccomp_notif_addfd.
type seccompResp struct {
	id    uint64
	val   int64
	error int32
	flags uint32
}

type seccompAddfd struct {
	id         uint64
	flags      uint32
	srcfd      uint32
	newfd      uint32
	newfdFlags uint32
}

// answer sends r; an ENOENT means the caller is gone. A descriptor is placed
// in the caller's table first and ours closed before the answer lets the
// caller go (rather than placed and sent at once, SECCOMP_ADDFD_FLAG_SEND):
// our copy of a file open for writing, held while the caller runs on, makes
// its exec of that file fail (`go build -o app && ./app`: text file busy).
func answer(listener int, id uint64, r Result) {
	if r.FD >= 0 {
		add := seccompAddfd{id: id, srcfd: uint32(r.FD)}
		if r.CloseOnExec {
			add.newfdFlags = unix.O_CLOEXEC
		}
		fd, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(listener), unix.SECCOMP_IOCTL_NOTIF_ADDFD, uintptr(unsafe.Pointer(&add)))
		unix.Close(r.FD)
		r = Value(int64(fd))
		if errno != 0 {
			r = Fail(ErrnoOf(errno, unix.EMFILE))
		}
	}
	beforeSend()
	resp := seccompResp{id: id, val: r.Val, error: -int32(r.Errno)}
	if r.Continue {
		resp = seccompResp{id: id, flags: unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE}
	}
	Ioctl(listener, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&resp))
}

// beforeSend runs just before an answer is sent; tests see what is still
// open then.
var beforeSend = func() {}

// Ioctl is ioctl(2) with a pointer argument.
func Ioctl(fd int, req uint, arg unsafe.Pointer) error {
	if _, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(req), uintptr(arg)); errno != 0 {
		return errno
	}
	return nil
}

// A Caller is the thread whose call is being handled. Its pidfd and memory
// are opened when first needed, and what is read from it is checked to come
// from the caller: the notification is still live, so the thread ID was not
// reused meanwhile.
type Caller struct {
	Tid        int
	listener   int
	id         uint64
	pidfd, mem int
}

// valid says whether the notification is still live.
func (c *Caller) valid() unix.Errno {
	if err := Ioctl(c.listener, unix.SECCOMP_IOCTL_NOTIF_ID_VALID, unsafe.Pointer(&c.id)); err != nil {
		return ErrnoOf(err, unix.ENOENT)
	}
	return 0
}

// Live says whether the call still waits for its answer: false once the
// caller is gone.
func (c *Caller) Live() bool { return c.valid() == 0 }

func (c *Caller) close() {
	for _, fd := range []*int{&c.pidfd, &c.mem} {
		if *fd >= 0 {
			unix.Close(*fd)
			*fd = -1
		}
	}
}

// Proc is the caller's directory in /proc, with a trailing slash.
func (c *Caller) Proc() string { return "/proc/" + strconv.Itoa(c.Tid) + "/" }

// Read copies n bytes at addr of the caller's memory.
func (c *Caller) Read(addr uint64, n int) ([]byte, unix.Errno) {
	b := make([]byte, n)
	if n == 0 {
		return b, 0
	}
	if r, errno := c.readv(addr, b); errno != 0 || r < n {
		return nil, unix.EFAULT
	}
	return b, c.valid()
}

// readv reads what it can of len(b) bytes at addr: up to the first page
// that is not mapped (the remote side is given page by page, and the kernel
// stops at the first it cannot read).
func (c *Caller) readv(addr uint64, b []byte) (int, unix.Errno) {
	local := []unix.Iovec{{Base: &b[0], Len: uint64(len(b))}}
	var remote []unix.RemoteIovec
	for at, end := addr, addr+uint64(len(b)); at < end; {
		next := min(end, (at/4096+1)*4096)
		remote = append(remote, unix.RemoteIovec{Base: uintptr(at), Len: int(next - at)})
		at = next
	}
	r, err := unix.ProcessVMReadv(c.Tid, local, remote, 0)
	if err != nil {
		return 0, ErrnoOf(err, unix.EFAULT)
	}
	return r, 0
}

// ReadString reads the NUL-terminated string at addr, at most max bytes
// before the NUL (ENAMETOOLONG past it), as the kernel reads a path: up to
// the page that is not mapped.
func (c *Caller) ReadString(addr uint64, max int) (string, unix.Errno) {
	if addr == 0 {
		return "", unix.EFAULT
	}
	// Most paths are short: a small read first, the rest only if needed.
	b := make([]byte, min(256, max+1))
	done := 0
	for _, upTo := range []int{len(b), max + 1} {
		if done >= upTo {
			continue
		}
		b = append(b, make([]byte, upTo-len(b))...)
		r, errno := c.readv(addr+uint64(done), b[done:upTo])
		if errno != 0 {
			return "", errno
		}
		if i := bytes.IndexByte(b[done:done+r], 0); i >= 0 {
			return string(b[:done+i]), c.valid()
		}
		if done += r; done < upTo {
			return "", unix.EFAULT // an unmapped page before the NUL
		}
	}
	return "", unix.ENAMETOOLONG
}

// Write copies b to addr of the caller's memory.
func (c *Caller) Write(addr uint64, b []byte) unix.Errno {
	if c.mem < 0 {
		fd, err := unix.Open(c.Proc()+"mem", unix.O_RDWR|unix.O_CLOEXEC, 0)
		if err != nil {
			return unix.EFAULT
		}
		c.mem = fd
		if errno := c.valid(); errno != 0 {
			return errno
		}
	}
	if r, err := unix.Pwrite(c.mem, b, int64(addr)); err != nil || r != len(b) {
		return unix.EFAULT
	}
	return 0
}

// Getfd duplicates the caller's descriptor fd into this process.
func (c *Caller) Getfd(fd int) (int, unix.Errno) {
	if errno := c.openPidfd(); errno != 0 {
		return -1, errno
	}
	d, err := unix.PidfdGetfd(c.pidfd, fd, 0)
	if err != nil {
		return -1, ErrnoOf(err, unix.EBADF)
	}
	return d, 0
}

// Signal sends sig to the caller.
func (c *Caller) Signal(sig unix.Signal) unix.Errno {
	if errno := c.openPidfd(); errno != 0 {
		return errno
	}
	return ErrnoOf(unix.PidfdSendSignal(c.pidfd, sig, nil, 0), 0)
}

func (c *Caller) openPidfd() unix.Errno {
	if c.pidfd < 0 {
		p, err := unix.PidfdOpen(c.Tid, unix.O_EXCL) // PIDFD_THREAD
		if err != nil {
			p, err = unix.PidfdOpen(c.Tid, 0)
		}
		if err != nil {
			return ErrnoOf(err, unix.ESRCH)
		}
		c.pidfd = p
		return c.valid()
	}
	return 0
}

// ErrnoOf is err's errno, or otherwise.
func ErrnoOf(err error, otherwise unix.Errno) unix.Errno {
	var errno unix.Errno
	if errors.As(err, &errno) {
		return errno
	}
	return otherwise
}
