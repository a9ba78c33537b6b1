package copyup

import (
	"runtime"
	"strconv"

	"github.com/shellgate/shellgate/internal/notify"
	"golang.org/x/sys/unix"
)

// Calls chmod, utime, utimes and futimesat exist on amd64 only; fchmodat2
// is 452 on both.
const (
	sysChmod     = 90
	sysUtime     = 132
	sysUtimes    = 235
	sysFutimesat = 261
	sysFchmodat2 = 452
)

// isMetaCall says whether nr changes a file's mode, times or extended
// attributes.
func isMetaCall(nr int32) bool {
	switch nr {
	case unix.SYS_FCHMOD, unix.SYS_FCHMODAT, sysFchmodat2,
		unix.SYS_SETXATTR, unix.SYS_LSETXATTR, unix.SYS_FSETXATTR,
		unix.SYS_REMOVEXATTR, unix.SYS_LREMOVEXATTR, unix.SYS_FREMOVEXATTR,
		unix.SYS_UTIMENSAT:
		return true
	case sysChmod, sysUtime, sysUtimes, sysFutimesat:
		return runtime.GOARCH == "amd64"
	}
	return false
}

// A change of a file's metadata, made through path (its
// /proc/thread-self/fd link) once the file has no other name.
type change struct {
	do func(path string) error
	// symlink answers the call for a symlink not followed, unless onLink
	// makes the change on the symlink itself, named in its directory.
	symlink unix.Errno
	onLink  func(dir int, name string) error
	// noop: the file is found, then nothing changes (utimensat with both
	// times UTIME_OMIT), as the kernel does, which checks no permission.
	noop bool
}

// The kernel's XATTR_SIZE_MAX and XATTR_NAME_MAX.
const (
	maxXattrValue = 64 << 10
	xattrNameMax  = 255
)

// handleMeta performs chmod, fchmod, fchmodat, fchmodat2, and the setxattr
// and removexattr calls for the caller. A mode and extended attributes are
// the inode's, shared by every name, and a POSIX ACL (system.posix_acl_access)
// is a mode too: a regular file with a name outside the root (a package
// store's) gets one of its own first, so the store's file keeps its own.
// Set-ID bits never reach here: the first filter refuses them.
func (o *Opener) handleMeta(c *notify.Caller, n *notify.Notif) notify.Result {
	a := n.Args
	k := &call{dirfd: unix.AT_FDCWD, truncateTo: -1, how: unix.OpenHow{Flags: unix.O_PATH}}
	var pathAt uint64
	switch n.Nr {
	case sysChmod:
		pathAt, k.meta = a[0], chmod(uint32(a[1]))
	case unix.SYS_FCHMOD:
		return o.metaOfDescriptor(c, int(int32(a[0])), chmod(uint32(a[1])), true)
	case unix.SYS_FCHMODAT:
		k.dirfd, pathAt, k.meta = int(int32(a[0])), a[1], chmod(uint32(a[2]))
	case sysFchmodat2:
		k.dirfd, pathAt, k.meta = int(int32(a[0])), a[1], chmod(uint32(a[2]))
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
					return o.metaOfPath(c, k, ".")
				}
				return o.metaOfDescriptor(c, k.dirfd, k.meta, false)
			}
		}
	case unix.SYS_SETXATTR, unix.SYS_LSETXATTR, unix.SYS_FSETXATTR,
		unix.SYS_REMOVEXATTR, unix.SYS_LREMOVEXATTR, unix.SYS_FREMOVEXATTR:
		ch, errno := xattr(c, n)
		if errno != 0 {
			return notify.Fail(errno)
		}
		switch n.Nr {
		case unix.SYS_FSETXATTR, unix.SYS_FREMOVEXATTR:
			return o.metaOfDescriptor(c, int(int32(a[0])), ch, true)
		case unix.SYS_LSETXATTR, unix.SYS_LREMOVEXATTR:
			k.how.Flags |= unix.O_NOFOLLOW
		}
		pathAt, k.meta = a[0], ch
	case unix.SYS_UTIMENSAT, sysUtime, sysUtimes, sysFutimesat:
		return o.handleTimes(c, n, k)
	default:
		return notify.Fail(unix.ENOSYS)
	}
	return o.metaAt(c, k, pathAt)
}

// metaAt reads the call's path at pathAt, as the kernel does (an empty one
// is ENOENT), and makes k's change there (metaOfPath).
func (o *Opener) metaAt(c *notify.Caller, k *call, pathAt uint64) notify.Result {
	path, errno := c.ReadString(pathAt, unix.PathMax-1)
	if errno != 0 {
		return notify.Fail(errno)
	}
	if path == "" {
		return notify.Fail(unix.ENOENT)
	}
	return o.metaOfPath(c, k, path)
}

// chmod sets the mode; fchmodat2's answer for a symlink not followed is
// EOPNOTSUPP.
func chmod(mode uint32) *change {
	return &change{do: func(p string) error { return unix.Fchmodat(unix.AT_FDCWD, p, mode&0o7777, 0) }, symlink: unix.EOPNOTSUPP}
}

// xattr reads a setxattr or removexattr call's name (its second argument)
// and value from the caller's memory: the change it asks for. The kernel
// refuses user.* attributes on a symlink with EPERM, as the answer says.
func xattr(c *notify.Caller, n *notify.Notif) (*change, unix.Errno) {
	a := n.Args
	name, errno := c.ReadString(a[1], xattrNameMax)
	if errno == unix.ENAMETOOLONG {
		return nil, unix.ERANGE // the kernel's answer
	}
	if errno != 0 {
		return nil, errno
	}
	if name == "" {
		return nil, unix.ERANGE
	}
	switch n.Nr {
	case unix.SYS_REMOVEXATTR, unix.SYS_LREMOVEXATTR, unix.SYS_FREMOVEXATTR:
		return &change{do: func(p string) error { return unix.Removexattr(p, name) }, symlink: unix.EPERM}, 0
	}
	if a[3] > maxXattrValue {
		return nil, unix.E2BIG
	}
	var value []byte
	if a[3] > 0 {
		if value, errno = c.Read(a[2], int(a[3])); errno != 0 {
			return nil, errno
		}
	}
	flags := int(a[4])
	return &change{do: func(p string) error { return unix.Setxattr(p, name, value, flags) }, symlink: unix.EPERM}, 0
}

// metaOfPath finds the file as the caller would (see Handle) and changes
// its metadata on a confined thread.
func (o *Opener) metaOfPath(c *notify.Caller, k *call, path string) notify.Result {
	k.path = path
	return o.perform(c, k)
}

// metaOfDescriptor changes the metadata of the file the caller's
// descriptor fd is open on. fchmod, fsetxattr and fremovexattr refuse an
// O_PATH descriptor (noPath); fchmodat2 with AT_EMPTY_PATH takes one.
func (o *Opener) metaOfDescriptor(c *notify.Caller, fd int, ch *change, noPath bool) notify.Result {
	own, errno := c.Getfd(fd)
	if errno != 0 {
		return notify.Fail(errno)
	}
	if fl, err := unix.FcntlInt(uintptr(own), unix.F_GETFL, 0); err != nil || noPath && fl&unix.O_PATH != 0 {
		unix.Close(own)
		return notify.Fail(unix.EBADF)
	}
	if !o.dispatch(func() {
		errno := alone(own, ch)
		unix.Close(own)
		c.Answer(notify.Result{Errno: errno, FD: -1})
	}) {
		unix.Close(own)
		return notify.Fail(unix.EAGAIN)
	}
	return notify.Result{Later: true}
}

// alone makes ch on the file fd is open on (any kind of descriptor), once
// the file has no name but the one fd was opened by; it runs on a confined
// thread, where the mounts refuse what they refuse the caller (a read-only
// file system). fd stays open.
func alone(fd int, ch *change) unix.Errno {
	cur := fd
	defer func() {
		if cur != fd {
			unix.Close(cur)
		}
	}()
	if ch.noop {
		return 0
	}
	var st unix.Stat_t
	for tries := 0; ; tries++ {
		if err := unix.Fstat(cur, &st); err != nil {
			return errnoOf(err)
		}
		switch {
		case st.Mode&unix.S_IFMT == unix.S_IFLNK && ch.onLink != nil:
			return onLink(cur, ch)
		case st.Mode&unix.S_IFMT == unix.S_IFLNK:
			return ch.symlink
		case st.Mode&unix.S_IFMT == unix.S_IFREG && !soleName(cur, &st):
			if tries == maxBreaks {
				return unix.EBUSY
			}
			name, errno := breakLink(cur, &st, false)
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
		return errnoOf(ch.do("/proc/thread-self/fd/" + strconv.Itoa(cur)))
	}
}
