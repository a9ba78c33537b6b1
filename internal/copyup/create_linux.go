package copyup

import (
	"errors"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/shellgate/shellgate/internal/notify"
	"golang.org/x/sys/unix"
)

// An Op is how a name is made: its kind decides what a Stager may do.
type Op uint8

const (
	// OpMake makes a new, empty file (an open with O_CREAT, mknod of a
	// regular file).
	OpMake Op = iota
	// OpMakeDir makes a new, empty directory (mkdir).
	OpMakeDir
	// OpRename puts an entry that exists under the name (rename, and each
	// side of an exchange).
	OpRename
	// OpLink makes a name for what exists elsewhere or for something that
	// is no plain file or directory (link, symlink, mknod of a FIFO or a
	// socket).
	OpLink
	// OpWrite opens an existing file for writing; only names the
	// stager's Watched says are judged.
	OpWrite
	// OpMoveAway renames the entry that exists at the name to another
	// (the old side of a rename; that the new one is made is judged as
	// OpRename): where a judgement holds for an entry by its path, a
	// rename would carry the entry beyond it. A directory's is judged
	// whatever its name (Watched or not): what it holds goes with it.
	OpMoveAway
)

// A Verdict is how a Stager has a name made.
type Verdict uint8

const (
	// Free: made as the caller asked.
	Free Verdict = iota
	// Staged: made by Stager.Stage.
	Staged
	// Refused: the call fails with EPERM.
	Refused
	// Crossed: the call fails with EXDEV, as a rename across file systems
	// does; mv and its kind copy instead, making each name on the way.
	Crossed
)

// A Stager decides how the names commands make are made, where the host's
// tools must not see some of them while the session runs (an editor's task
// file at the project's top, which the user's editor runs on the host).
type Stager interface {
	// Judge says how the entry at p (a clean absolute path, as this
	// process sees it) is made by op.
	Judge(p string, op Op) Verdict
	// Stage makes the entry at p by op (as Judge was asked): make makes it
	// in dir under name, then the session alone sees it at p; staged false
	// (and nothing made) when it stages nothing there (p exists already),
	// and the call is made as the caller asked. It is called from a
	// confined thread, and makes its mounts elsewhere.
	Stage(p string, op Op, make func(dir int, name string) unix.Errno) (errno unix.Errno, staged bool)
	// Watched says whether an entry by this name is judged at all (Judge
	// answers Free for every other): a write-open of a file (OpWrite) only
	// then, and the path of a name made is looked up only then.
	Watched(name string) bool
	// Hidden says whether the file or directory st is an entry the host
	// sees where one is staged: nothing may be written or made in it (a
	// command in a mount namespace of its own, where the staged one is not
	// shown, reaches it).
	Hidden(st *unix.Stat_t) bool
}

// hidden says whether the directory or file fd is one the stager hides
// behind a staged one.
func hidden(s Stager, fd int) bool {
	var st unix.Stat_t
	return unix.Fstat(fd, &st) == nil && s.Hidden(&st)
}

// SetStager has creations judged by s: the supervisor then hands over
// every call that makes a name (Creates).
func (o *Opener) SetStager(s Stager) { o.stager, o.umasks = s, new(umasks) }

// Creates says whether the Opener takes the calls that make a name.
func (o *Opener) Creates() bool { return o != nil && o.stager != nil }

// Calls that make names on amd64 only.
const (
	sysRename  = 82
	sysMkdir   = 83
	sysLink    = 86
	sysSymlink = 88
	sysMknod   = 133
)

// isCreateCall says whether nr makes a name in a directory.
func isCreateCall(nr int32) bool {
	switch nr {
	case unix.SYS_MKDIRAT, unix.SYS_MKNODAT, unix.SYS_SYMLINKAT, unix.SYS_LINKAT, unix.SYS_RENAMEAT, unix.SYS_RENAMEAT2:
		return true
	case sysRename, sysMkdir, sysLink, sysSymlink, sysMknod:
		return runtime.GOARCH == "amd64"
	}
	return false
}

// A making is one call that makes a name, read from its arguments.
type making struct {
	nr                   int32
	oldDir, newDir       int
	oldPath, newPath     string
	target               string // symlink's
	mode, dev, flags     uint64
	oldEmpty, followLink bool // linkat's AT_EMPTY_PATH, AT_SYMLINK_FOLLOW
}

// handleCreate performs a call that makes a name: its directory is found
// as the caller's kernel would find it and held, the name judged by the
// stager, and the call made there on a confined thread (or staged, or
// refused). Nothing is resolved again by path after the judgement: a
// command swapping a directory for a symlink meanwhile cannot move the
// name elsewhere.
func (o *Opener) handleCreate(c *notify.Caller, n *notify.Notif) notify.Result {
	a := n.Args
	m := &making{nr: n.Nr, oldDir: unix.AT_FDCWD, newDir: unix.AT_FDCWD}
	var oldAt, newAt, targetAt uint64
	switch n.Nr {
	case sysMkdir:
		newAt, m.mode = a[0], a[1]
	case unix.SYS_MKDIRAT:
		m.newDir, newAt, m.mode = int(int32(a[0])), a[1], a[2]
	case sysMknod:
		newAt, m.mode, m.dev = a[0], a[1], a[2]
	case unix.SYS_MKNODAT:
		m.newDir, newAt, m.mode, m.dev = int(int32(a[0])), a[1], a[2], a[3]
	case sysSymlink:
		targetAt, newAt = a[0], a[1]
	case unix.SYS_SYMLINKAT:
		targetAt, m.newDir, newAt = a[0], int(int32(a[1])), a[2]
	case sysLink, sysRename:
		oldAt, newAt = a[0], a[1]
	case unix.SYS_LINKAT, unix.SYS_RENAMEAT, unix.SYS_RENAMEAT2:
		m.oldDir, oldAt, m.newDir, newAt = int(int32(a[0])), a[1], int(int32(a[2])), a[3]
		if n.Nr != unix.SYS_RENAMEAT {
			m.flags = a[4]
		}
	default:
		return notify.Fail(unix.ENOSYS)
	}
	var errno unix.Errno
	if m.newPath, errno = c.ReadString(newAt, unix.PathMax-1); errno != 0 {
		return notify.Fail(errno)
	}
	if targetAt != 0 {
		if m.target, errno = c.ReadString(targetAt, unix.PathMax-1); errno != 0 {
			return notify.Fail(errno)
		}
	}
	if oldAt != 0 {
		if m.oldPath, errno = c.ReadString(oldAt, unix.PathMax-1); errno != 0 {
			return notify.Fail(errno)
		}
	}
	if n.Nr == unix.SYS_LINKAT {
		if m.flags&^(unix.AT_EMPTY_PATH|unix.AT_SYMLINK_FOLLOW) != 0 {
			return notify.Fail(unix.EINVAL)
		}
		m.oldEmpty, m.followLink = m.flags&unix.AT_EMPTY_PATH != 0 && m.oldPath == "", m.flags&unix.AT_SYMLINK_FOLLOW != 0
	}
	// Made on the goroutine that received the call (notify.receive has
	// another take the next): a goroutine started for it waited for a P,
	// and grew its stack, at each name made.
	o.make(c, m)
	return notify.Result{Later: true}
}

// make finds the directories, judges and performs m, and answers.
func (o *Opener) make(c *notify.Caller, m *making) {
	newDir, newName, errno := parentOf(c, m.newDir, m.newPath)
	if errno != 0 {
		c.Answer(notify.Fail(errno))
		return
	}
	oldDir, oldName := -1, ""
	closeAll := func() {
		unix.Close(newDir)
		if oldDir >= 0 {
			unix.Close(oldDir)
		}
	}
	held := true // until handed to a confined thread
	defer func() {
		if held {
			closeAll()
		}
	}()
	switch {
	case m.oldEmpty:
		if oldDir, errno = callerDir(c, m.oldDir); errno != 0 {
			c.Answer(notify.Fail(errno))
			return
		}
	case m.oldPath != "" && m.followLink:
		// The file the path names, links followed as the caller's would be.
		k := &call{dirfd: m.oldDir, path: m.oldPath, how: unix.OpenHow{Flags: unix.O_PATH}, truncateTo: -1}
		if oldDir, errno = openPath(c, k); errno != 0 {
			c.Answer(notify.Fail(errno))
			return
		}
		m.oldEmpty = true
	case m.nr == sysLink || m.nr == sysRename || m.nr == unix.SYS_LINKAT || m.nr == unix.SYS_RENAMEAT || m.nr == unix.SYS_RENAMEAT2:
		if oldDir, oldName, errno = parentOf(c, m.oldDir, m.oldPath); errno != 0 {
			c.Answer(notify.Fail(errno))
			return
		}
	}
	if hidden(o.stager, newDir) {
		c.Answer(notify.Fail(unix.EPERM))
		return
	}
	op := OpMake
	switch m.nr {
	case sysMkdir, unix.SYS_MKDIRAT:
		op = OpMakeDir
	case sysLink, sysSymlink, unix.SYS_LINKAT, unix.SYS_SYMLINKAT:
		op = OpLink
	case sysRename, unix.SYS_RENAMEAT, unix.SYS_RENAMEAT2:
		op = OpRename
	case sysMknod, unix.SYS_MKNODAT:
		if m.mode&unix.S_IFMT != 0 && m.mode&unix.S_IFMT != unix.S_IFREG {
			op = OpLink
		}
	}
	verdict := o.judge(newDir, newName, op)
	if m.flags&unix.RENAME_EXCHANGE != 0 && (m.nr == sysRename || m.nr == unix.SYS_RENAMEAT2) {
		// Both names are made anew: each is judged, and neither is staged.
		if v := o.judge(oldDir, oldName, op); v > verdict {
			verdict = v
		}
		if verdict == Staged {
			verdict = Crossed
		}
	} else if op == OpRename && oldDir >= 0 && oldName != "" && verdict != Refused {
		// The entry renamed away: Crossed there (mv copies name by name,
		// each judged where it is made) or Refused outdo the new name's.
		away := o.judge(oldDir, oldName, OpMoveAway)
		var st unix.Stat_t
		if away == Free && unix.Fstatat(oldDir, oldName, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR {
			away = judgeAt(o.stager, oldDir, oldName, OpMoveAway)
		}
		switch v := away; v {
		case Refused, Crossed:
			verdict = v
		}
	}
	switch verdict {
	case Refused:
		c.Answer(notify.Fail(unix.EPERM))
		return
	case Crossed:
		c.Answer(notify.Fail(unix.EXDEV))
		return
	case Staged:
		umask := o.umasks.of(c)
		errno, staged := o.stager.Stage(entryPath(newDir, newName), op, func(dir int, name string) unix.Errno {
			return perform(m, umask, false, oldDir, oldName, dir, name)
		})
		if staged { // else made as asked, which fails as the kernel would
			c.Answer(notify.Fail(errno))
			return
		}
	}
	umask := o.umasks.of(c)
	held = !o.dispatch(func() {
		defer closeAll()
		c.Answer(notify.Fail(perform(m, umask, true, oldDir, oldName, newDir, newName)))
	})
	if held {
		c.Answer(notify.Fail(unix.EAGAIN))
	}
}

// judge is the stager's verdict on name in dir, Free without a look at
// its path where the name is none it watches.
func (o *Opener) judge(dir int, name string, op Op) Verdict {
	if !o.stager.Watched(strings.TrimRight(name, "/")) {
		return Free
	}
	return judgeAt(o.stager, dir, name, op)
}

// judgeAt is s's verdict on name in dir by its path, and Refused where dir
// has no path here (placed): no verdict by path holds for it.
func judgeAt(s Stager, dir int, name string, op Op) Verdict {
	p, ok := placed(dir, name)
	if !ok {
		return Refused
	}
	return s.Judge(p, op)
}

// perform makes m's name in dir, with the caller's umask: the thread's
// own if confined (a file system context of its own), else by a chmod.
func perform(m *making, umask int, confined bool, oldDir int, oldName string, dir int, name string) unix.Errno {
	masked := func(err error) unix.Errno {
		if err == nil && !confined {
			err = unix.Fchmodat(dir, name, uint32(m.mode)&^uint32(umask)&0o1777, 0)
		}
		return errnoOf(err)
	}
	if confined {
		unix.Umask(umask)
	}
	switch m.nr {
	case sysMkdir, unix.SYS_MKDIRAT:
		return masked(unix.Mkdirat(dir, name, uint32(m.mode)))
	case sysMknod, unix.SYS_MKNODAT:
		return masked(unix.Mknodat(dir, name, uint32(m.mode), int(m.dev)))
	case sysSymlink, unix.SYS_SYMLINKAT:
		return errnoOf(unix.Symlinkat(m.target, dir, name))
	case sysLink, unix.SYS_LINKAT:
		if m.oldEmpty {
			// What an O_PATH descriptor names, linked without
			// CAP_DAC_READ_SEARCH, as linkat(2) suggests.
			return errnoOf(unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(oldDir), dir, name, unix.AT_SYMLINK_FOLLOW))
		}
		return errnoOf(unix.Linkat(oldDir, oldName, dir, name, 0))
	default:
		return errnoOf(unix.Renameat2(oldDir, oldName, dir, name, uint(m.flags)))
	}
}

// parentOf opens the directory in which path's last name is (the caller's
// kernel would look it up there) and returns that name, with any trailing
// slashes.
func parentOf(c *notify.Caller, dirfd int, path string) (int, string, unix.Errno) {
	if path == "" {
		return -1, "", unix.ENOENT
	}
	trimmed := strings.TrimRight(path, "/")
	dirPath, name := ".", path
	switch i := strings.LastIndexByte(trimmed, '/'); {
	case trimmed == "": // "/"
		dirPath, name = "/", "."
	case i == 0:
		dirPath, name = "/", path[1:]
	case i > 0:
		dirPath, name = trimmed[:i], path[i+1:]
	}
	k := &call{dirfd: dirfd, path: dirPath, how: unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY}, truncateTo: -1}
	fd, errno := openPath(c, k)
	return fd, name, errno
}

// openPath opens k's path O_PATH as the caller's kernel would find it:
// magic links and a caller's own root are walked.
func openPath(c *notify.Caller, k *call) (int, unix.Errno) {
	var t *target
	var errno unix.Errno
	if rootFree(k.path, k.how.Resolve) {
		// No symlink followed, no "..": the caller's root is not asked.
		if t, errno = locate(c, k); errno != 0 {
			return -1, errno
		}
		t.resolve |= unix.RESOLVE_NO_SYMLINKS
		fd, errno := t.open(k.how, false)
		t.close()
		if errno != unix.ELOOP {
			return fd, errno
		}
	}
	walked := !strings.HasPrefix(k.path, "/") && chrooted(c)
	if walked {
		t, errno = walk(c, k)
	} else {
		t, errno = locate(c, k)
	}
	if errno != 0 {
		return -1, errno
	}
	fd, errno := t.open(k.how, false)
	t.close()
	if !walked && (errno == unix.ELOOP || errno == unix.EXDEV) {
		if t, errno = walk(c, k); errno != 0 {
			return -1, errno
		}
		fd, errno = t.open(k.how, false)
		t.close()
	}
	return fd, errno
}

// callerDir duplicates the caller's descriptor fd, or opens its working
// directory for AT_FDCWD.
func callerDir(c *notify.Caller, fd int) (int, unix.Errno) {
	if fd == unix.AT_FDCWD {
		d, err := unix.Open(c.Proc()+"cwd", unix.O_PATH|unix.O_CLOEXEC, 0)
		return d, notify.ErrnoOf(err, unix.ENOENT)
	}
	return c.Getfd(fd)
}

// entryPath is the path of name in dir as this process sees it, "" when
// there is none (the directory was removed) or name makes no entry.
func entryPath(dir int, name string) string {
	p, _ := placed(dir, name)
	return p
}

// placed is entryPath, and whether that path is where dir is for this
// process: the directory's path is the kernel's for its mount, which it
// gives for a mount this process cannot reach as well, relative to that
// mount's own tree. A command in a user and mount namespace of its own may
// clone a tree of the root (open_tree, which Landlock does not refuse as it
// does mount and move_mount): the root's directory there reads as "/", and
// a judgement by that path would let `.envrc` or `.vscode` be made at the
// root, unstaged, where the host's tools read them. So the path counts
// only where it leads, with no symlink, to the same directory; a removed
// directory (where nothing can be made) has none, and is placed, and so is
// one whose path is too long for the kernel to give: no protected path lies
// that deep, and the root reads as itself or as "/" in any tree.
func placed(dir int, name string) (string, bool) {
	name = strings.TrimRight(name, "/")
	if dir < 0 || name == "" || name == "." || name == ".." {
		return "", true
	}
	var st unix.Stat_t
	if unix.Fstat(dir, &st) != nil {
		return "", false
	}
	p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(dir))
	switch {
	case errors.Is(err, unix.ENAMETOOLONG):
		return "", true
	case err != nil || !strings.HasPrefix(p, "/"):
		return "", false
	case st.Nlink == 0:
		return "", true
	case !samePlace(p, &st):
		return "", false
	}
	return strings.TrimSuffix(p, "/") + "/" + name, true
}

// samePlace says whether path p, no symlink followed, is the file st.
func samePlace(p string, st *unix.Stat_t) bool {
	fd, err := unix.Openat2(unix.AT_FDCWD, p, &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC | unix.O_NOFOLLOW, Resolve: unix.RESOLVE_NO_SYMLINKS})
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	var at unix.Stat_t
	return unix.Fstat(fd, &at) == nil && at.Dev == st.Dev && at.Ino == st.Ino
}
