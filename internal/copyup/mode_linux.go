package copyup

import (
	"runtime"
	"strconv"

	"github.com/shellgate/shellgate/internal/notify"
	"golang.org/x/sys/unix"
)

// Calls chmod exists on amd64 only; fchmodat2 is 452 on both.
const (
	sysChmod     = 90
	sysFchmodat2 = 452
)

// isModeCall says whether nr changes a file's mode.
func isModeCall(nr int32) bool {
	switch nr {
	case unix.SYS_FCHMOD, unix.SYS_FCHMODAT, sysFchmodat2:
		return true
	case sysChmod:
		return runtime.GOARCH == "amd64"
	}
	return false
}

// handleMode performs chmod, fchmod, fchmodat or fchmodat2 for the caller.
// A mode is the inode's, shared by every name: a regular file with a name
// outside the root (a package store's) gets one of its own first, so the
// store's file keeps its mode. Set-ID bits never reach here: the first
// filter refuses them.
func (o *Opener) handleMode(c *notify.Caller, n *notify.Notif) notify.Result {
	a := n.Args
	k := &call{dirfd: unix.AT_FDCWD, truncateTo: -1, chmod: true, how: unix.OpenHow{Flags: unix.O_PATH}}
	var pathAt uint64
	switch n.Nr {
	case sysChmod:
		pathAt, k.mode = a[0], uint32(a[1])
	case unix.SYS_FCHMOD:
		return o.modeOfDescriptor(c, int(int32(a[0])), uint32(a[1]), true)
	case unix.SYS_FCHMODAT:
		k.dirfd, pathAt, k.mode = int(int32(a[0])), a[1], uint32(a[2])
	case sysFchmodat2:
		k.dirfd, pathAt, k.mode = int(int32(a[0])), a[1], uint32(a[2])
		flags := a[3]
		if flags&^uint64(unix.AT_SYMLINK_NOFOLLOW|unix.AT_EMPTY_PATH) != 0 {
			return notify.Fail(unix.EINVAL)
		}
		if flags&unix.AT_SYMLINK_NOFOLLOW != 0 {
			k.how.Flags |= unix.O_NOFOLLOW
		}
		if flags&unix.AT_EMPTY_PATH != 0 {
			if path, errno := c.ReadString(pathAt, unix.PathMax-1); errno == 0 && path == "" {
				if k.dirfd == unix.AT_FDCWD {
					k.path = "."
					return o.perform(c, k)
				}
				return o.modeOfDescriptor(c, k.dirfd, k.mode, false)
			}
		}
	default:
		return notify.Fail(unix.ENOSYS)
	}
	path, errno := c.ReadString(pathAt, unix.PathMax-1)
	if errno != 0 {
		return notify.Fail(errno)
	}
	if path == "" {
		return notify.Fail(unix.ENOENT)
	}
	k.path = path
	return o.perform(c, k)
}

// modeOfDescriptor changes the mode of the file the caller's descriptor fd
// is open on. fchmod refuses an O_PATH descriptor; fchmodat2 with
// AT_EMPTY_PATH takes one.
func (o *Opener) modeOfDescriptor(c *notify.Caller, fd int, mode uint32, fchmod bool) notify.Result {
	own, errno := c.Getfd(fd)
	if errno != 0 {
		return notify.Fail(errno)
	}
	if fl, err := unix.FcntlInt(uintptr(own), unix.F_GETFL, 0); err != nil || fchmod && fl&unix.O_PATH != 0 {
		unix.Close(own)
		return notify.Fail(unix.EBADF)
	}
	if !o.dispatch(func() {
		errno := modeAlone(own, mode)
		unix.Close(own)
		c.Answer(notify.Result{Errno: errno, FD: -1})
	}) {
		unix.Close(own)
		return notify.Fail(unix.EAGAIN)
	}
	return notify.Result{Later: true}
}

// modeAlone sets the mode of the file fd is open on (any kind of
// descriptor), once the file has no name but the one fd was opened by; it
// runs on a confined thread, where the mounts refuse what they refuse the
// caller (a read-only file system). fd stays open.
func modeAlone(fd int, mode uint32) unix.Errno {
	cur := fd
	defer func() {
		if cur != fd {
			unix.Close(cur)
		}
	}()
	var st unix.Stat_t
	for tries := 0; ; tries++ {
		if err := unix.Fstat(cur, &st); err != nil {
			return errnoOf(err)
		}
		switch {
		case st.Mode&unix.S_IFMT == unix.S_IFLNK:
			return unix.EOPNOTSUPP // fchmodat2's answer for a symlink not followed
		case st.Mode&unix.S_IFMT == unix.S_IFREG && !soleName(cur, &st):
			if tries == maxBreaks {
				return unix.EBUSY
			}
			name, errno := breakLink(cur, &st)
			if errno != 0 {
				return errno
			}
			next, err := unix.Openat2(unix.AT_FDCWD, name, &unix.OpenHow{Flags: unix.O_PATH | unix.O_NOFOLLOW | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS})
			if err != nil {
				return errnoOf(err)
			}
			if cur != fd {
				unix.Close(cur)
			}
			cur = next
			continue
		}
		return errnoOf(unix.Fchmodat(unix.AT_FDCWD, "/proc/thread-self/fd/"+strconv.Itoa(cur), mode&0o7777, 0))
	}
}
