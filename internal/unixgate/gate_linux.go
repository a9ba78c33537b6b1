package unixgate

import (
	"fmt"
	"strings"

	"github.com/shellgate/shellgate/internal/notify"
	"golang.org/x/sys/unix"
)

// HostNetwork, as Guard's noSupervisor, says that the session shares the
// host's network namespace, where the host's sockets are the session's, as
// the user asked: the layer then reads "host", as the network's does.
const HostNetwork = "host"

// Plan says how the commands a thread forks are kept away from the host's
// pathname unix sockets: "landlock-v9" when the thread's Landlock domain
// (landlockABI, 0 without one) handles the right, "host" when the session
// shares the host's network (noSupervisor is HostNetwork), otherwise by the
// supervisor (supervise), whose filter the caller installs with
// seccomp.UnixSends and serves with Handle. noSupervisor, when set, says why
// this process cannot supervise; the error then says why host sockets stay
// reachable, after the layer's name.
func Plan(landlockABI int, noSupervisor string) (layer string, supervise bool, err error) {
	if landlockABI >= 9 {
		return "landlock-v9", false, nil
	}
	if noSupervisor == HostNetwork {
		return "host", false, nil
	}
	if noSupervisor != "" {
		return "", false, fmt.Errorf("%s: %s%s, so a host's pathname unix socket stays reachable", Layer, notGoverned(landlockABI), noSupervisor)
	}
	return "supervisor", true, nil
}

// Unsupervised is the error for a supervisor whose filter the kernel
// refused.
func Unsupervised(landlockABI int, err error) error {
	return fmt.Errorf("%s: %sthe kernel takes no notifying seccomp filter (%v), so a host's pathname unix socket stays reachable", Layer, notGoverned(landlockABI), err)
}

func notGoverned(landlockABI int) string {
	if landlockABI == 0 {
		return "without Landlock ABI 9 nothing governs connect, and "
	}
	return fmt.Sprintf("Landlock (ABI %d < 9) does not govern connect, and ", landlockABI)
}

// Handle performs the caller's call itself, on the caller's own socket, and
// returns its result: connect, sendto, sendmsg and sendmmsg.
func Handle(c *notify.Caller, n *notify.Notif) notify.Result {
	fd, errno := c.Getfd(int(int32(n.Args[0])))
	if errno != 0 {
		return notify.Fail(errno)
	}
	defer unix.Close(fd)
	s := &sock{c: c, fd: fd}
	var val int64
	switch n.Nr {
	case unix.SYS_CONNECT:
		errno = s.connect(n.Args[1], n.Args[2])
	case unix.SYS_SENDTO:
		val, errno = s.sendto(n.Args[1], n.Args[2], int(int32(n.Args[3])), n.Args[4], n.Args[5])
	case unix.SYS_SENDMSG:
		val, errno = s.sendmsg(n.Args[1], int(int32(n.Args[2])))
	case unix.SYS_SENDMMSG:
		val, errno = s.sendmmsg(n.Args[1], uint32(n.Args[2]), int(int32(n.Args[3])))
	default:
		errno = unix.ENOSYS
	}
	if errno != 0 {
		return notify.Fail(errno)
	}
	return notify.Value(val)
}

// Handles says whether Handle performs call nr.
func Handles(nr int32) bool {
	switch nr {
	case unix.SYS_CONNECT, unix.SYS_SENDTO, unix.SYS_SENDMSG, unix.SYS_SENDMMSG:
		return true
	}
	return false
}

// resolve opens, as the caller would reach it, the file a socket address's
// path names: relative to the caller's working directory, its /proc/self
// being the caller's. It follows symlinks, as connect does.
func resolve(c *notify.Caller, path string) (int, unix.Errno) {
	proc := c.Proc()
	for _, self := range []string{"/proc/self/", "/proc/thread-self/"} {
		if rest, ok := strings.CutPrefix(path, self); ok {
			path = proc + rest
		}
	}
	dir := unix.AT_FDCWD
	if !strings.HasPrefix(path, "/") {
		cwd, err := unix.Open(proc+"cwd", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, notify.ErrnoOf(err, unix.ENOENT)
		}
		defer unix.Close(cwd)
		dir = cwd
	}
	fd, err := unix.Openat(dir, path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, notify.ErrnoOf(err, unix.ENOENT)
	}
	return fd, 0
}
