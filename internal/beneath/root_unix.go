//go:build unix

package beneath

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Root is a directory at or beneath a project root, held open: every
// operation of its methods names an entry of it (or, for OpenDir and
// MakeDir, a path beneath it) and resolves no symlink anywhere, nor leaves
// it. Where a command renames directories of the root into symlinks at the
// same time, an operation fails or acts on the directory first opened: it
// never reaches a file outside. Undo works on the root through it.
type Root struct {
	fd   int
	name string // for messages
	// enter: OpenDir and MakeDir give the directories on the way that the
	// process's user owns and cannot enter or write in u+rwx (EnterOwnDirs)
	enter bool
}

// EnterOwnDirs has OpenDir and MakeDir, of r and of the Roots they open,
// add u+rwx to each directory on the way that the process's user owns and
// lacks one of them on (`chmod 000 src` by a command): undo writes in the
// directories its checkpoint read, which a mode it does not keep must not
// stop part way. Never through a symlink.
func (r *Root) EnterOwnDirs() { r.enter = true }

// OpenRoot opens the directory path (the project root itself: a symlink in
// path is followed, as the root is named so).
func OpenRoot(path string) (*Root, error) {
	fd, err := unix.Open(path, dirFlags|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return &Root{fd: fd, name: path}, nil
}

// Close lets the directory go.
func (r *Root) Close() error { return unix.Close(r.fd) }

// Name is the path the directory was opened by (for messages only).
func (r *Root) Name() string { return r.name }

func (r *Root) err(op, name string, err error) error {
	return &fs.PathError{Op: op, Path: filepath.Join(r.name, name), Err: err}
}

// OpenDir opens rel (slash- or separator-separated, "." for r itself), an
// existing directory beneath r, resolving no symlink: a symlink on the way
// is an error (ELOOP), not a way out.
func (r *Root) OpenDir(rel string) (*Root, error) {
	rel = filepath.ToSlash(filepath.Clean(rel))
	if !filepath.IsLocal(rel) && rel != "." {
		return nil, r.err("open", rel, unix.EXDEV)
	}
	var fd int
	var err error
	if r.enter && rel != "." {
		fd, err = walkEntering(r.fd, rel)
	} else {
		fd, err = openBeneath(r.fd, rel)
	}
	if err != nil {
		return nil, r.err("open", rel, err)
	}
	return &Root{fd: fd, name: filepath.Join(r.name, rel), enter: r.enter}, nil
}

// MakeDir opens rel beneath r as OpenDir does, making each directory on the
// way that is missing with perm; an entry on the way that is not a
// directory — a file, a symlink (to a directory outside or not) — is removed,
// never followed, and a directory made in its place.
func (r *Root) MakeDir(rel string, perm fs.FileMode) (*Root, error) {
	rel = filepath.ToSlash(filepath.Clean(rel))
	if rel == "." {
		return r.OpenDir(".")
	}
	if !filepath.IsLocal(rel) {
		return nil, r.err("mkdir", rel, unix.EXDEV)
	}
	cur := &Root{fd: -1, name: r.name}
	curFD := r.fd
	defer func() {
		if cur.fd >= 0 {
			unix.Close(cur.fd)
		}
	}()
	for _, part := range strings.Split(rel, "/") {
		if r.enter {
			enterOwn(curFD, part)
		}
		next, err := makeOne(curFD, part, uint32(perm.Perm()))
		if err != nil {
			return nil, r.err("mkdir", rel, err)
		}
		if cur.fd >= 0 {
			unix.Close(cur.fd)
		}
		cur.fd, curFD = next, next
		cur.name = filepath.Join(cur.name, part)
	}
	out := &Root{fd: cur.fd, name: cur.name, enter: r.enter}
	cur.fd = -1
	return out, nil
}

// makeOne opens the directory name of dirFD, making it, or replacing what is
// there by it, as MakeDir says. A command swapping the entry at the same
// time makes it try again, a bounded number of times.
func makeOne(dirFD int, name string, perm uint32) (int, error) {
	var last error
	for try := 0; try < 64; try++ {
		fd, err := unix.Openat(dirFD, name, dirFlags|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err == nil {
			return fd, nil
		}
		last = err
		switch err {
		case unix.ENOENT:
		case unix.ELOOP, unix.ENOTDIR, unix.EMLINK:
			// a symlink or a file: removed, not followed
			if err := unix.Unlinkat(dirFD, name, 0); err != nil && err != unix.ENOENT && err != unix.EISDIR && err != unix.EPERM {
				return -1, err
			}
		default:
			return -1, err
		}
		if err := unix.Mkdirat(dirFD, name, perm); err != nil && err != unix.EEXIST {
			return -1, err
		}
	}
	return -1, fmt.Errorf("kept changing while it was made a directory: %w", last)
}

// Lstat describes the entry name of r, not following a symlink.
func (r *Root) Lstat(name string) (Stat, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(r.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return Stat{}, r.err("lstat", name, err)
	}
	return statOf(&st), nil
}

func statOf(st *unix.Stat_t) Stat {
	m := fs.FileMode(st.Mode & 0o777)
	switch uint32(st.Mode) & unix.S_IFMT {
	case unix.S_IFDIR:
		m |= fs.ModeDir
	case unix.S_IFLNK:
		m |= fs.ModeSymlink
	case unix.S_IFIFO:
		m |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		m |= fs.ModeSocket
	case unix.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		m |= fs.ModeDevice
	}
	sec, nsec := st.Mtim.Unix()
	return Stat{Mode: m, Size: st.Size, Links: uint64(st.Nlink), ModTime: time.Unix(sec, nsec)}
}

// Remove removes the entry name of r: a file, a symlink (not what it points
// to) or an empty directory.
func (r *Root) Remove(name string) error {
	err := unix.Unlinkat(r.fd, name, 0)
	if err == unix.EISDIR || err == unix.EPERM {
		if derr := unix.Unlinkat(r.fd, name, unix.AT_REMOVEDIR); derr == nil || derr != unix.ENOTDIR {
			err = derr
		}
	}
	if err != nil {
		return r.err("remove", name, err)
	}
	return nil
}

// RemoveDir removes name of r if it is an empty directory.
func (r *Root) RemoveDir(name string) error {
	if err := unix.Unlinkat(r.fd, name, unix.AT_REMOVEDIR); err != nil {
		return r.err("rmdir", name, err)
	}
	return nil
}

// maxRemoveDepth bounds RemoveAll's descent.
const maxRemoveDepth = unix.PathMax / 2

// RemoveAll removes name of r and, if it is a directory, everything beneath
// it, through descriptors: a symlink met is removed, never followed. A name
// that is not there is no error.
func (r *Root) RemoveAll(name string) error {
	if err := removeAll(r.fd, name, 0); err != nil {
		return r.err("removeall", name, err)
	}
	return nil
}

func removeAll(dirFD int, name string, depth int) error {
	for try := 0; ; try++ {
		err := unix.Unlinkat(dirFD, name, 0)
		if err == nil || err == unix.ENOENT {
			return nil
		}
		if err != unix.EISDIR && err != unix.EPERM {
			return err
		}
		if depth >= maxRemoveDepth {
			return unix.ENAMETOOLONG
		}
		fd, err := unix.Openat(dirFD, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err == unix.ENOENT {
			return nil
		}
		if (err == unix.ELOOP || err == unix.ENOTDIR) && try < 64 {
			continue // swapped for a file or a symlink: unlinked next time round
		}
		if err != nil {
			return err
		}
		d := os.NewFile(uintptr(fd), name)
		var firstErr error
		for {
			names, rerr := d.Readdirnames(1024)
			for _, n := range names {
				if err := removeAll(fd, n, depth+1); err != nil && firstErr == nil {
					firstErr = err
				}
			}
			if rerr != nil || len(names) == 0 {
				break
			}
		}
		d.Close()
		err = unix.Unlinkat(dirFD, name, unix.AT_REMOVEDIR)
		if err == nil || err == unix.ENOENT {
			return nil
		}
		if firstErr != nil {
			return firstErr
		}
		if (err == unix.ENOTEMPTY || err == unix.EEXIST || err == unix.ENOTDIR) && try < 64 {
			continue // something was made in it meanwhile
		}
		return err
	}
}

// Mkdir makes the directory name of r.
func (r *Root) Mkdir(name string, perm fs.FileMode) error {
	if err := unix.Mkdirat(r.fd, name, uint32(perm.Perm())); err != nil {
		return r.err("mkdir", name, err)
	}
	return nil
}

// Create makes the new file name of r for writing; what is there already
// (a symlink included) is an error, nothing is followed.
func (r *Root) Create(name string, perm fs.FileMode) (*os.File, error) {
	fd, err := unix.Openat(r.fd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm.Perm()))
	if err != nil {
		return nil, r.err("create", name, err)
	}
	return os.NewFile(uintptr(fd), filepath.Join(r.name, name)), nil
}

// OpenWrite opens the regular file name of r, there already, for writing;
// nothing is followed or made.
func (r *Root) OpenWrite(name string) (*os.File, error) {
	fd, err := unix.Openat(r.fd, name, unix.O_WRONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, r.err("open", name, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return nil, r.err("open", name, cmp.Or(err, error(unix.EINVAL)))
	}
	return os.NewFile(uintptr(fd), filepath.Join(r.name, name)), nil
}

// OpenFile opens the regular file name of r for reading (not a symlink, a
// FIFO or a device).
func (r *Root) OpenFile(name string) (*os.File, error) {
	f, err := Open(r.fd, name, 0)
	if err != nil {
		return nil, r.err("open", name, err)
	}
	return f, nil
}

// Symlink makes name of r a symlink to target.
func (r *Root) Symlink(target, name string) error {
	if err := unix.Symlinkat(target, r.fd, name); err != nil {
		return r.err("symlink", name, err)
	}
	return nil
}

// LinkFile makes name of r a hard link to the regular file f is open on
// (opened by a name of its, f.Name(), outside the root): the file
// checked through f, not what its name holds by then.
func (r *Root) LinkFile(f *os.File, name string) error {
	src, flags := f.Name(), 0
	if runtime.GOOS == "linux" {
		src, flags = "/proc/self/fd/"+strconv.Itoa(int(f.Fd())), unix.AT_SYMLINK_FOLLOW
	}
	fail := func(err error) error {
		return &os.LinkError{Op: "link", Old: f.Name(), New: filepath.Join(r.name, name), Err: err}
	}
	if err := unix.Linkat(unix.AT_FDCWD, src, r.fd, name, flags); err != nil {
		return fail(err)
	}
	var want, got unix.Stat_t
	if unix.Fstat(int(f.Fd()), &want) != nil || unix.Fstatat(r.fd, name, &got, unix.AT_SYMLINK_NOFOLLOW) != nil || want.Dev != got.Dev || want.Ino != got.Ino {
		unix.Unlinkat(r.fd, name, 0) // its name led elsewhere by then
		return fail(errors.New("the name was another file's"))
	}
	return nil
}

// Link makes toName of to a hard link to the entry name of r, which must be
// the regular file f is open on (checked through f once linked: a name
// swapped in between is unlinked again, and an error). A symlink at name is
// never followed.
func (r *Root) Link(f *os.File, name string, to *Root, toName string) error {
	fail := func(err error) error {
		return &os.LinkError{Op: "link", Old: filepath.Join(r.name, name), New: filepath.Join(to.name, toName), Err: err}
	}
	if err := unix.Linkat(r.fd, name, to.fd, toName, 0); err != nil {
		return fail(err)
	}
	var want, got unix.Stat_t
	if unix.Fstat(int(f.Fd()), &want) != nil || unix.Fstatat(to.fd, toName, &got, unix.AT_SYMLINK_NOFOLLOW) != nil || want.Dev != got.Dev || want.Ino != got.Ino {
		unix.Unlinkat(to.fd, toName, 0)
		return fail(errors.New("the name was another file's"))
	}
	return nil
}

// Rename moves the entry name of r to toName of to, replacing what is there
// (not a non-empty directory).
func (r *Root) Rename(name string, to *Root, toName string) error {
	if err := unix.Renameat(r.fd, name, to.fd, toName); err != nil {
		return &os.LinkError{Op: "rename", Old: filepath.Join(r.name, name), New: filepath.Join(to.name, toName), Err: err}
	}
	return nil
}

// Chmod sets the permission bits of name of r, a regular file; through a
// symlink never (an error: not a regular file).
func (r *Root) Chmod(name string, perm fs.FileMode) error {
	if err := chmodRegular(r.fd, name, uint32(perm.Perm())); err != nil {
		return r.err("chmod", name, err)
	}
	return nil
}

// Chtimes sets the access and modification times of name of r, not
// following a symlink.
func (r *Root) Chtimes(name string, atime, mtime time.Time) error {
	ts := []unix.Timespec{unix.NsecToTimespec(atime.UnixNano()), unix.NsecToTimespec(mtime.UnixNano())}
	if err := unix.UtimesNanoAt(r.fd, name, ts, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return r.err("chtimes", name, err)
	}
	return nil
}

// errNotRegular is Chmod's answer for what is not a regular file.
var errNotRegular = errors.New("not a regular file")

// walkBeneath opens rel beneath dirFD one name at a time, each with
// O_NOFOLLOW|O_DIRECTORY: no symlink is followed, no ".." taken.
func walkBeneath(dirFD int, rel string) (int, error) { return walk(dirFD, rel, nil) }

// walkEntering is walkBeneath with enterOwn before each name.
func walkEntering(dirFD int, rel string) (int, error) { return walk(dirFD, rel, enterOwn) }

// walk is walkBeneath, calling before (if set) with each name and the
// directory it is opened in first.
func walk(dirFD int, rel string, before func(dirFD int, name string)) (int, error) {
	cur := -1
	for _, part := range strings.Split(rel, "/") {
		if part == ".." || part == "" {
			if cur >= 0 {
				unix.Close(cur)
			}
			return -1, unix.EXDEV
		}
		from := dirFD
		if cur >= 0 {
			from = cur
		}
		if before != nil {
			before(from, part)
		}
		fd, err := unix.Openat(from, part, dirFlags|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if cur >= 0 {
			unix.Close(cur)
		}
		if err != nil {
			return -1, err
		}
		cur = fd
	}
	return cur, nil
}

// enterOwn adds u+rwx to the directory name of dirFD when the process's
// user owns it and lacks one of them; a symlink or anything else there is
// left alone. Best effort: where it cannot, the open after it fails.
func enterOwn(dirFD int, name string) {
	var st unix.Stat_t
	if unix.Fstatat(dirFD, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || uint32(st.Mode)&unix.S_IFMT != unix.S_IFDIR ||
		uint32(st.Mode)&0o700 == 0o700 || int(st.Uid) != os.Geteuid() {
		return
	}
	chmodDir(dirFD, name)
}

// Readlink is the target of the symlink name in dirFD.
func Readlink(dirFD int, name string) (string, error) {
	buf := make([]byte, 4096)
	n, err := unix.Readlinkat(dirFD, name, buf)
	if err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}

// Open opens name in dirFD for reading: a directory with O_DIRECTORY in
// flags, else a regular file — not a symlink to follow, nor a FIFO or device
// to block on (O_NONBLOCK keeps the open itself from blocking; a FIFO made an
// os.File would still wait for a writer's data).
func Open(dirFD int, name string, flags int) (*os.File, error) {
	if flags&unix.O_DIRECTORY != 0 && runtime.GOOS == "linux" {
		// Linux opens only a directory so, before any FIFO or device
		// could block the open, and a directory never waits: no
		// O_NONBLOCK, nor the stat and mode changes it calls for (the
		// guard opens every directory of .git after every command).
		fd, err := unix.Openat(dirFD, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|flags, 0)
		if err != nil {
			return nil, err
		}
		return os.NewFile(uintptr(fd), name), nil
	}
	fd, err := unix.Openat(dirFD, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC|flags, 0)
	if err != nil {
		return nil, err
	}
	want := uint32(unix.S_IFREG)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || uint32(st.Mode)&unix.S_IFMT != want {
		unix.Close(fd)
		return nil, fmt.Errorf("%s: not a regular file or directory", name)
	}
	// Blocking again: a regular file or directory never waits, and os.File
	// then reads it directly instead of through the poller.
	unix.SetNonblock(fd, false)
	return os.NewFile(uintptr(fd), name), nil
}
