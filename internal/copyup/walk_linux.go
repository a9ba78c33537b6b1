package copyup

import (
	"os"
	"strconv"
	"strings"

	"github.com/shellgate/shellgate/internal/notify"
	"github.com/shellgate/shellgate/internal/procfs"
	"golang.org/x/sys/unix"
)

// maxLinks is the kernel's bound on the symlinks one path may follow.
const maxLinks = 40

// A walker follows a path as the caller's kernel would, one name at a time
// (O_PATH opens, which Landlock does not check), so that the magic links
// of /proc are the caller's: /proc/self, /dev/stdout, /dev/fd/3 and a
// symlink to one of them name the caller's files, not this process's.
type walker struct {
	c     *notify.Caller
	root  int // the caller's root
	links int
	tgid  string
}

// walk resolves the call's path to a target: the last name in its
// directory, or the file a magic link names.
func walk(c *notify.Caller, k *call) (*target, unix.Errno) {
	root, err := unix.Open(c.Proc()+"root", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, notify.ErrnoOf(err, unix.ENOENT)
	}
	defer unix.Close(root)
	w := &walker{c: c, root: root, tgid: callerField(c, "Tgid:")}
	var start int
	switch {
	case strings.HasPrefix(k.path, "/"):
		start, err = unix.Dup(root)
	case k.dirfd == unix.AT_FDCWD:
		start, err = unix.Open(c.Proc()+"cwd", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	default:
		var errno unix.Errno
		if start, errno = c.Getfd(k.dirfd); errno != 0 {
			return nil, errno
		}
	}
	if err != nil {
		return nil, notify.ErrnoOf(err, unix.ENOENT)
	}
	follow := k.how.Flags&unix.O_NOFOLLOW == 0 || strings.HasSuffix(k.path, "/")
	return w.walk(start, k.path, follow)
}

// walk resolves path from dir, which it takes over. It also tells whether
// a /proc directory it ends in is known to be the caller's own (reached
// from a /proc by the caller's process or thread ID, or by a name that is
// no process's): a thread of this process passes the ptrace checks on this
// process's /proc entries (mem, fdinfo) that the caller's kernel makes, so
// one reached otherwise (another process's, a bind mount, a descriptor)
// must not be opened here.
func (w *walker) walk(dir int, path string, follow bool) (*target, unix.Errno) {
	names := strings.Split(path, "/")
	own := !onProcFS(dir) || w.isProcRoot(dir)
	found := func(t *target) (*target, unix.Errno) {
		t.ownProc = own
		return t, 0
	}
	for {
		for len(names) > 0 && (names[0] == "" || names[0] == ".") && !lastName(names) {
			names = names[1:]
		}
		name := names[0]
		names = names[1:]
		last := lastName(names)
		if name == "" || name == "." || name == ".." && w.isRoot(dir) {
			if last {
				return found(&target{dir: dir, name: ".", file: -1, resolve: unix.RESOLVE_NO_MAGICLINKS})
			}
			continue
		}
		if name == "self" || name == "thread-self" {
			if self, ok := w.self(dir, name); ok {
				names = append(strings.Split(self, "/"), names...)
				continue
			}
		}
		if last && !follow {
			return found(&target{dir: dir, name: name, file: -1, resolve: unix.RESOLVE_NO_MAGICLINKS})
		}
		fd, err := unix.Openat(dir, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err == unix.ENOENT && last {
			return found(&target{dir: dir, name: name, file: -1, resolve: unix.RESOLVE_NO_MAGICLINKS})
		}
		if err != nil {
			unix.Close(dir)
			return nil, errnoOf(err)
		}
		var st unix.Stat_t
		unix.Fstat(fd, &st)
		switch {
		case st.Mode&unix.S_IFMT == unix.S_IFLNK && onProc(dir):
			file, errno := w.magic(dir, name)
			unix.Close(fd)
			unix.Close(dir)
			if errno != 0 {
				return nil, errno
			}
			own = !onProcFS(file) // a descriptor's /proc directory is of no known process
			if last {
				return found(&target{dir: -1, file: file})
			}
			dir = file
		case st.Mode&unix.S_IFMT == unix.S_IFLNK:
			more, errno := w.symlink(fd, &dir, &own)
			if errno != 0 {
				if dir >= 0 {
					unix.Close(dir)
				}
				return nil, errno
			}
			names = append(more, names...)
		case last:
			unix.Close(fd)
			return found(&target{dir: dir, name: name, file: -1, resolve: unix.RESOLVE_NO_MAGICLINKS})
		default:
			own = w.ownBelow(dir, fd, name, own)
			unix.Close(dir)
			dir = fd
		}
	}
}

// symlink reads the symlink fd, which it closes, and returns the names it
// leads to; an absolute one starts again at the caller's root, which
// replaces *dir (-1 if it could not), and own says of it as walk does.
func (w *walker) symlink(fd int, dir *int, own *bool) ([]string, unix.Errno) {
	link, err := readlink(fd)
	unix.Close(fd)
	if w.links++; err != nil || w.links > maxLinks {
		return nil, unix.ELOOP
	}
	if strings.HasPrefix(link, "/") {
		unix.Close(*dir)
		root, err := unix.Dup(w.root)
		if *dir = root; err != nil {
			*dir = -1
			return nil, errnoOf(err)
		}
		*own = !onProcFS(root) || w.isProcRoot(root)
	}
	return strings.Split(link, "/"), 0
}

// ownBelow says whether the directory fd, reached from dir by name, is the
// caller's own as walk means it; own is dir's.
func (w *walker) ownBelow(dir, fd int, name string, own bool) bool {
	switch {
	case !onProcFS(fd) || w.isProcRoot(fd):
		return true
	case w.isProcRoot(dir): // /proc/NAME: a process's own, or none's
		_, numeric := strconv.Atoi(name)
		return numeric != nil || name == w.tgid || name == strconv.Itoa(w.c.Tid)
	case !onProcFS(dir): // a /proc directory mounted elsewhere
		return false
	}
	return own
}

// lastName says whether nothing but "" and "." is left.
func lastName(names []string) bool {
	for _, n := range names {
		if n != "" && n != "." {
			return false
		}
	}
	return true
}

// isRoot says whether dir is the caller's root, above which ".." stays.
func (w *walker) isRoot(dir int) bool {
	var a, b unix.Stat_t
	return unix.Fstat(dir, &a) == nil && unix.Fstat(w.root, &b) == nil && a.Dev == b.Dev && a.Ino == b.Ino
}

// onProc says whether dir is on a proc file system, where a symlink below
// /proc itself is magic.
func onProc(dir int) bool {
	var st unix.Stat_t
	return onProcFS(dir) && unix.Fstat(dir, &st) == nil && st.Ino != procRootIno
}

const procRootIno = 1

// isProcRoot says whether dir is the root of a proc file system.
func (w *walker) isProcRoot(dir int) bool {
	var st unix.Stat_t
	return onProcFS(dir) && unix.Fstat(dir, &st) == nil && st.Ino == procRootIno
}

// self is what /proc/self or /proc/thread-self mean for the caller, when
// dir is a /proc.
func (w *walker) self(dir int, name string) (string, bool) {
	var st unix.Stat_t
	if !onProcFS(dir) || unix.Fstat(dir, &st) != nil || st.Ino != procRootIno || w.tgid == "" {
		return "", false
	}
	if name == "self" {
		return w.tgid, true
	}
	return w.tgid + "/task/" + strconv.Itoa(w.c.Tid), true
}

// magic opens what the magic link name in dir names for the caller: its
// descriptors, working directory and root. Another process's are refused,
// as are the links to executables, mappings and namespaces.
func (w *walker) magic(dir int, name string) (int, unix.Errno) {
	p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(dir))
	if err != nil {
		return -1, unix.EACCES
	}
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	pid := parts[len(parts)-1]
	fdDir := pid == "fd"
	if fdDir && len(parts) >= 2 {
		pid = parts[len(parts)-2]
	}
	if pid != w.tgid && pid != strconv.Itoa(w.c.Tid) {
		return -1, unix.EACCES
	}
	switch {
	case fdDir:
		n, err := strconv.Atoi(name)
		if err != nil {
			return -1, unix.ENOENT
		}
		return w.c.Getfd(n)
	case name == "cwd" || name == "root":
		fd, err := unix.Open("/proc/"+pid+"/"+name, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, notify.ErrnoOf(err, unix.ENOENT)
		}
		return fd, 0
	}
	return -1, unix.EACCES
}

func readlink(fd int) (string, error) {
	buf := make([]byte, unix.PathMax)
	n, err := unix.Readlinkat(fd, "", buf)
	if err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}

// callerField is a field of the caller's /proc status, "" if unknown. It
// is read at each file or directory made (the umask): by plain calls, as
// readProc reads.
func callerField(c *notify.Caller, field string) string {
	buf := make([]byte, 0, 4096)
	b, _ := procfs.Read(c.Proc()+"status", &buf, true) // a seq file
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, field); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
