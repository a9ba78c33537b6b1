package copyup

import (
	"encoding/binary"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"unsafe"

	"github.com/shellgate/shellgate/internal/notify"
	"golang.org/x/sys/unix"
)

// handleTimes performs utimensat, utime, utimes and futimesat for the
// caller: a file's times are its inode's, shared by every name, so a
// regular file with a name outside the root gets one of its own first (a
// package store's file keeps its times, which build tools compare). The
// times are read from the caller's memory and checked as the kernel checks
// them; none (a null pointer) means now.
func (o *Opener) handleTimes(c *notify.Caller, n *notify.Notif, k *call) notify.Result {
	a := n.Args
	var pathAt, timesAt uint64
	var ts []unix.Timespec
	var errno unix.Errno
	switch n.Nr {
	case unix.SYS_UTIMENSAT:
		k.dirfd, pathAt, timesAt = int(int32(a[0])), a[1], a[2]
		flags := a[3]
		if flags&^uint64(unix.AT_SYMLINK_NOFOLLOW|unix.AT_EMPTY_PATH) != 0 {
			return notify.Fail(unix.EINVAL)
		}
		if ts, errno = readTimes(c, timesAt, false); errno != 0 {
			return notify.Fail(errno)
		}
		if flags&unix.AT_SYMLINK_NOFOLLOW != 0 {
			k.how.Flags |= unix.O_NOFOLLOW
		}
		if pathAt == 0 { // futimens: the descriptor's file, no flags
			if flags != 0 {
				return notify.Fail(unix.EINVAL)
			}
			if k.dirfd == unix.AT_FDCWD {
				return notify.Fail(unix.EFAULT)
			}
			return o.metaOfDescriptor(c, k.dirfd, retime(ts), true)
		}
		if flags&unix.AT_EMPTY_PATH != 0 {
			if path, errno := c.ReadString(pathAt, unix.PathMax-1); errno == 0 && path == "" {
				k.meta = retime(ts)
				if k.dirfd == unix.AT_FDCWD {
					return o.metaOfPath(c, k, ".")
				}
				return o.metaOfDescriptor(c, k.dirfd, k.meta, false)
			}
		}
	case sysUtime:
		pathAt, timesAt = a[0], a[1]
		if timesAt != 0 {
			b, errno := c.Read(timesAt, 16) // struct utimbuf: actime, modtime
			if errno != 0 {
				return notify.Fail(errno)
			}
			ts = []unix.Timespec{{Sec: int64(binary.NativeEndian.Uint64(b))}, {Sec: int64(binary.NativeEndian.Uint64(b[8:]))}}
		}
	case sysUtimes, sysFutimesat:
		pathAt, timesAt = a[0], a[1]
		if n.Nr == sysFutimesat {
			k.dirfd, pathAt, timesAt = int(int32(a[0])), a[1], a[2]
		}
		if ts, errno = readTimes(c, timesAt, true); errno != 0 {
			return notify.Fail(errno)
		}
		if pathAt == 0 && n.Nr == sysFutimesat { // the descriptor's file
			return o.metaOfDescriptor(c, k.dirfd, retime(ts), true)
		}
	}
	k.meta = retime(ts)
	return o.metaAt(c, k, pathAt)
}

// readTimes reads the two times at addr (nil for none: now): utimensat's
// timespecs, nanoseconds within a second or UTIME_NOW or UTIME_OMIT, or, if
// micro, utimes' timevals, microseconds within a second.
func readTimes(c *notify.Caller, addr uint64, micro bool) ([]unix.Timespec, unix.Errno) {
	if addr == 0 {
		return nil, 0
	}
	b, errno := c.Read(addr, 32)
	if errno != 0 {
		return nil, errno
	}
	ts := make([]unix.Timespec, 2)
	for i := range ts {
		sec, frac := int64(binary.NativeEndian.Uint64(b[16*i:])), int64(binary.NativeEndian.Uint64(b[16*i+8:]))
		switch {
		case micro && (frac < 0 || frac >= 1e6):
			return nil, unix.EINVAL
		case micro:
			frac *= 1000
		case frac != unix.UTIME_NOW && frac != unix.UTIME_OMIT && (frac < 0 || frac >= 1e9):
			return nil, unix.EINVAL
		}
		ts[i] = unix.Timespec{Sec: sec, Nsec: frac}
	}
	return ts, 0
}

// retime sets a file's times to ts (nil: now), or a symlink's own.
func retime(ts []unix.Timespec) *change {
	if ts != nil && ts[0].Nsec == unix.UTIME_OMIT && ts[1].Nsec == unix.UTIME_OMIT {
		return &change{noop: true}
	}
	return &change{
		do:     func(p string) error { return utimensat(unix.AT_FDCWD, p, ts, 0) },
		onLink: func(dir int, name string) error { return utimensat(dir, name, ts, unix.AT_SYMLINK_NOFOLLOW) },
	}
}

// utimensat is the call with ts as given, nil passed as a null pointer.
func utimensat(dir int, path string, ts []unix.Timespec, flags int) error {
	p, err := unix.BytePtrFromString(path)
	if err != nil {
		return err
	}
	var t unsafe.Pointer
	if ts != nil {
		t = unsafe.Pointer(&ts[0])
	}
	if _, _, errno := unix.Syscall6(unix.SYS_UTIMENSAT, uintptr(dir), uintptr(unsafe.Pointer(p)), uintptr(t), uintptr(flags), 0, 0); errno != 0 {
		return errno
	}
	return nil
}

// onLink makes ch on the symlink fd is open on (O_PATH|O_NOFOLLOW), named
// in its directory: a magic link to it would be followed, or be the link
// of /proc.
func onLink(fd int, ch *change) unix.Errno {
	p, err := os.Readlink("/proc/thread-self/fd/" + strconv.Itoa(fd))
	if err != nil || !filepath.IsAbs(p) {
		return unix.ENOENT
	}
	dir, err := unix.Openat2(unix.AT_FDCWD, filepath.Dir(p), &unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS})
	if err != nil {
		return errnoOf(err)
	}
	defer unix.Close(dir)
	var want, at unix.Stat_t
	if unix.Fstat(fd, &want) != nil || unix.Fstatat(dir, filepath.Base(p), &at, unix.AT_SYMLINK_NOFOLLOW) != nil || at.Dev != want.Dev || at.Ino != want.Ino {
		return unix.ENOENT // moved meanwhile
	}
	if want.Nlink > 1 { // a hard link to a symlink: its inode is every name's
		if errno := replaceLink(dir, filepath.Base(p), &want); errno != 0 {
			return errno
		}
	}
	return errnoOf(ch.onLink(dir, filepath.Base(p)))
}

// replaceLink puts a symlink of its own, to the same target and with the
// same times, in place of name in dir, a symlink st with other names.
func replaceLink(dir int, name string, st *unix.Stat_t) unix.Errno {
	buf := make([]byte, unix.PathMax)
	n, err := unix.Readlinkat(dir, name, buf)
	if err != nil {
		return errnoOf(err)
	}
	tmp := ".shellgate-copyup-" + strconv.FormatUint(rand.Uint64(), 36)
	if err := unix.Symlinkat(string(buf[:n]), dir, tmp); err != nil {
		return errnoOf(err)
	}
	utimensat(dir, tmp, []unix.Timespec{st.Atim, st.Mtim}, unix.AT_SYMLINK_NOFOLLOW)
	if err := unix.Renameat(dir, tmp, dir, name); err != nil {
		unix.Unlinkat(dir, tmp, 0)
		return errnoOf(err)
	}
	return 0
}
