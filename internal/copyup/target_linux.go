package copyup

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/shellgate/shellgate/internal/notify"
	"golang.org/x/sys/unix"
)

// A target is where an open lands: a path beneath a directory, both as the
// caller names them (dir is this process's copy of the caller's root,
// working directory or descriptor), or a file to open again (what a magic
// link such as /proc/self/fd/1 names), held here.
type target struct {
	dir     int
	name    string
	resolve uint64
	file    int
	ownProc bool // walked: a /proc file here is the caller's (walker.walk)
	// rootFree: a relative path without "..", opened without following a
	// symlink (RESOLVE_NO_SYMLINKS added), which lands where it lands
	// whatever the caller's root: whether that is this process's is not
	// asked unless a symlink is met (ELOOP).
	rootFree bool
}

// rootFree says whether path, relative and without "..", leads to the
// same place from a directory whatever the caller's root, when no symlink
// is followed on the way.
func rootFree(path string, resolve uint64) bool {
	if resolve != 0 || strings.HasPrefix(path, "/") {
		return false
	}
	for rest := path; rest != ""; {
		var part string
		part, rest, _ = strings.Cut(rest, "/")
		if part == ".." {
			return false
		}
	}
	return true
}

func (t *target) close() {
	if t == nil {
		return
	}
	for _, fd := range []*int{&t.dir, &t.file} {
		if *fd >= 0 {
			unix.Close(*fd)
			*fd = -1
		}
	}
}

// locate is where the call's path starts: an absolute one at the caller's
// root (which is the helper's, unless the command made a mount namespace
// of its own), a relative one at the caller's working directory or
// descriptor. Magic links are not followed from there: this process's
// /proc/self is not the caller's (walk follows them).
func locate(c *notify.Caller, k *call) (*target, unix.Errno) {
	t := &target{dir: -1, file: -1, name: k.path, resolve: k.how.Resolve | unix.RESOLVE_NO_MAGICLINKS}
	var err error
	switch {
	case strings.HasPrefix(k.path, "/") && k.how.Resolve&(unix.RESOLVE_BENEATH|unix.RESOLVE_IN_ROOT) == 0:
		t.dir, err = unix.Open(c.Proc()+"root", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		t.resolve |= unix.RESOLVE_IN_ROOT
		if t.name = strings.TrimLeft(k.path, "/"); t.name == "" {
			t.name = "."
		}
	case k.dirfd == unix.AT_FDCWD:
		t.dir, err = unix.Open(c.Proc()+"cwd", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	default:
		var errno unix.Errno
		if t.dir, errno = c.Getfd(k.dirfd); errno != 0 {
			return nil, errno
		}
	}
	if err != nil {
		return nil, notify.ErrnoOf(err, unix.ENOENT)
	}
	return t, 0
}

// validFlags are the flags open and openat take; they ignore the others,
// which openat2 refuses.
const validFlags = unix.O_ACCMODE | unix.O_CREAT | unix.O_EXCL | unix.O_NOCTTY | unix.O_TRUNC |
	unix.O_APPEND | unix.O_NONBLOCK | unix.O_SYNC | unix.O_ASYNC | unix.O_DIRECT | unix.O_DIRECTORY |
	unix.O_NOFOLLOW | unix.O_NOATIME | unix.O_CLOEXEC | unix.O_PATH | unix.O_TMPFILE

// retarget makes a target of a magic link's file the name it now has.
func (t *target) retarget(path string) unix.Errno {
	t.close()
	dir, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return errnoOf(err)
	}
	t.dir, t.name, t.resolve = dir, path, unix.RESOLVE_NO_MAGICLINKS|unix.RESOLVE_NO_SYMLINKS
	return 0
}

// open opens the target as the call asks, but without truncating: that
// waits until the file is known to be the caller's alone. It never makes a
// terminal the helper's controlling one.
func (t *target) open(how unix.OpenHow, openat2 bool) (int, unix.Errno) {
	flags := how.Flags
	if !openat2 {
		flags &= validFlags | largeFile
	}
	if flags&unix.O_PATH != 0 {
		flags &= unix.O_PATH | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
	} else {
		flags = flags&^unix.O_TRUNC | unix.O_NOCTTY
	}
	h := unix.OpenHow{Flags: flags | unix.O_CLOEXEC}
	if openat2 || flags&(unix.O_CREAT|unix.O_TMPFILE&^unix.O_DIRECTORY) != 0 {
		h.Mode = how.Mode // openat2 refuses a mode it would not use: so does this
	}
	dir, name := t.dir, t.name
	if t.file >= 0 {
		dir, name = unix.AT_FDCWD, "/proc/thread-self/fd/"+strconv.Itoa(t.file)
	} else {
		h.Resolve = t.resolve
	}
	fd, err := unix.Openat2(dir, name, &h)
	if err != nil {
		return -1, errnoOf(err)
	}
	return fd, 0
}

// breakLink puts a copy of fd's file, a regular one with more than one
// name, in place of the name it was opened by, and returns that name: the
// other names keep the old file. It runs on a confined thread, so it may
// only where the caller may create and remove files. empty: the open
// truncates the file, so the copy gets its mode and extended attributes
// but none of its bytes (a big file a checkpoint keeps by a link, opened
// with `>`, is not copied whole only to be emptied).
func breakLink(fd int, st *unix.Stat_t, empty bool) (string, unix.Errno) {
	self := "/proc/thread-self/fd/" + strconv.Itoa(fd)
	p, err := os.Readlink(self)
	if err != nil || !strings.HasPrefix(p, "/") || strings.HasSuffix(p, " (deleted)") {
		return "", unix.EBUSY
	}
	return p, replace(self, p, st, empty)
}

// replace puts a copy of the file open at self in the place of path (empty:
// without its bytes).
func replace(self, p string, st *unix.Stat_t, empty bool) unix.Errno {
	dirPath, name := filepath.Split(p)
	dir, err := unix.Openat2(unix.AT_FDCWD, dirPath, &unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_SYMLINKS})
	if err != nil {
		return unix.EBUSY
	}
	defer unix.Close(dir)
	var at unix.Stat_t
	if err := unix.Fstatat(dir, name, &at, unix.AT_SYMLINK_NOFOLLOW); err != nil || at.Dev != st.Dev || at.Ino != st.Ino {
		return unix.EBUSY // renamed meanwhile
	}
	src, err := unix.Open(self, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	switch {
	case err == nil:
		defer unix.Close(src)
	case empty:
		src = -1 // a file the caller may write but not read: no bytes needed
	default:
		return errnoOf(err)
	}
	tmp := ".shellgate-copyup-" + strconv.FormatUint(rand.Uint64(), 36)
	dst, err := unix.Openat(dir, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return errnoOf(err)
	}
	errno := copyFile(dst, src, st, empty)
	unix.Close(dst)
	if errno == 0 {
		errno = errnoOf(unix.Renameat(dir, tmp, dir, name))
	}
	if errno != 0 {
		unix.Unlinkat(dir, tmp, 0)
	}
	return errno
}

// copyFile copies src's bytes (unless empty), extended attributes (src -1:
// none), mode (without set-ID bits) and times to dst.
func copyFile(dst, src int, st *unix.Stat_t, empty bool) unix.Errno {
	if !empty && unix.IoctlFileClone(dst, src) != nil {
		if errno := copyBytes(dst, src); errno != 0 {
			return errno
		}
	}
	if src >= 0 {
		copyXattrs(dst, src)
	}
	if err := unix.Fchmod(dst, st.Mode&0o1777); err != nil {
		return errnoOf(err)
	}
	return setTimes(dst, st.Atim, st.Mtim)
}

// copyXattrs copies the extended attributes of src it may set to dst: the
// user's own (user.*) and ACLs; security.* and trusted.* ones are left out.
func copyXattrs(dst, src int) {
	size, err := unix.Flistxattr(src, nil)
	if err != nil || size <= 0 {
		return
	}
	list := make([]byte, size)
	if size, err = unix.Flistxattr(src, list); err != nil {
		return
	}
	for _, name := range strings.Split(strings.TrimRight(string(list[:size]), "\x00"), "\x00") {
		n, err := unix.Fgetxattr(src, name, nil)
		if err != nil {
			continue
		}
		value := make([]byte, n)
		if n, err = unix.Fgetxattr(src, name, value); err == nil {
			unix.Fsetxattr(dst, name, value[:n], 0)
		}
	}
}

// setTimes sets fd's access and modification times.
func setTimes(fd int, atime, mtime unix.Timespec) unix.Errno {
	ts := []unix.Timespec{atime, mtime}
	return errnoOf(unix.UtimesNanoAt(unix.AT_FDCWD, "/proc/thread-self/fd/"+strconv.Itoa(fd), ts, 0))
}

func copyBytes(dst, src int) unix.Errno {
	for {
		n, err := unix.CopyFileRange(src, nil, dst, nil, 1<<30, 0)
		switch {
		case err == unix.EXDEV || err == unix.EINVAL || err == unix.ENOSYS || err == unix.EOPNOTSUPP:
			return copyRead(dst, src)
		case err != nil:
			return errnoOf(err)
		case n == 0:
			return 0
		}
	}
}

func copyRead(dst, src int) unix.Errno {
	buf := make([]byte, 256<<10)
	for {
		n, err := unix.Read(src, buf)
		if err != nil {
			return errnoOf(err)
		}
		if n == 0 {
			return 0
		}
		if _, err := unix.Write(dst, buf[:n]); err != nil {
			return errnoOf(err)
		}
	}
}
