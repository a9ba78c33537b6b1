package copyup

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/shellgate/shellgate/internal/notify"
	"golang.org/x/sys/unix"

	"github.com/shellgate/shellgate/internal/procfs"
)

// largeFile is the kernel's O_LARGEFILE, which open, openat and creat add on
// 64-bit systems (Go's constant is 0 there); without it a file over 2 GiB
// does not open.
var largeFile = map[string]uint64{"amd64": 0o100000, "arm64": 0o400000}[runtime.GOARCH]

// Calls open and creat exist on amd64 only.
const (
	sysOpen    = 2
	sysCreat   = 85
	sysOpenat2 = 437
)

// A call is an open the caller asked for, read from its arguments.
type call struct {
	dirfd      int
	path       string
	how        unix.OpenHow
	truncateTo int64 // truncate(2): the length; -1 for an open
	openat2    bool  // its flags are checked as openat2 checks them
	// meta, when set, makes the call a change of the file's metadata
	// (mode_linux.go), not an open.
	meta *change
	// stager judges a file the open makes (create_linux.go); nil: none.
	stager Stager
	// umasks keeps the callers' umasks, when umask calls are handed over.
	umasks *umasks
	// links is the checkpoint store's (SetStoreLinks); nil: none.
	links *storeLinks
}

// Handles says whether Handle performs call nr.
func Handles(nr int32) bool {
	switch nr {
	case unix.SYS_OPENAT, sysOpenat2, unix.SYS_TRUNCATE, unix.SYS_UMASK:
		return true
	case sysOpen, sysCreat:
		return runtime.GOARCH == "amd64"
	}
	return isMetaCall(nr) || isCreateCall(nr)
}

// Handle performs an open, openat, openat2, creat or truncate for the
// caller: the opened file is placed in its table, a link of a regular file
// the call may write broken first; or a change of mode or of extended
// attributes (handleMeta). What needs the caller's memory and descriptors is
// done here; the rest, and the answer, on a confined thread.
func (o *Opener) Handle(c *notify.Caller, n *notify.Notif) notify.Result {
	if n.Nr == unix.SYS_UMASK { // its one argument is in a register
		if o.umasks != nil {
			o.umasks.changed(c, int(n.Args[0]&0o777))
		}
		return notify.Result{FD: -1, Continue: true}
	}
	if isMetaCall(n.Nr) {
		return o.handleMeta(c, n)
	}
	if isCreateCall(n.Nr) {
		if o.stager == nil {
			return notify.Fail(unix.ENOSYS)
		}
		return o.handleCreate(c, n)
	}
	k, errno := parse(c, n)
	if errno != 0 {
		return notify.Fail(errno)
	}
	k.stager, k.umasks, k.links = o.stager, o.umasks, o.links
	return o.perform(c, k)
}

// perform finds k's path as the caller would and finishes the call on a
// confined thread; the answer comes later.
func (o *Opener) perform(c *notify.Caller, k *call) notify.Result {
	free := rootFree(k.path, k.how.Resolve)
	if !free && !strings.HasPrefix(k.path, "/") && k.how.Resolve&(unix.RESOLVE_BENEATH|unix.RESOLVE_IN_ROOT) == 0 && chrooted(c) {
		// ".." from the caller's working directory stops at its root,
		// not at this process's: the path is walked, which knows it.
		if k.how.Resolve != 0 {
			return notify.Fail(unix.EXDEV) // the walker follows what these flags forbid
		}
		go o.walkAndFinish(c, k)
		return notify.Result{Later: true}
	}
	t, errno := locate(c, k)
	if errno != 0 {
		return notify.Fail(errno)
	}
	if free {
		t.rootFree, t.resolve = true, t.resolve|unix.RESOLVE_NO_SYMLINKS
	}
	if noTerminal(c, t, k) {
		t.close()
		return notify.Fail(unix.ENXIO)
	}
	if !o.dispatch(func() { o.finish(c, t, k, false) }) {
		t.close()
		return notify.Fail(unix.EAGAIN)
	}
	return notify.Result{Later: true}
}

// finish opens t on a confined thread and answers the call, or, where the
// path holds a magic link (which this process's /proc resolves to its own
// files), walks the path first, as the caller's kernel would.
func (o *Opener) finish(c *notify.Caller, t *target, k *call, walked bool) {
	fd, errno := openTarget(c, t, k)
	if errno == unix.ELOOP && t.rootFree {
		// A symlink on the way, whose target may be another root's: as
		// perform does without the shortcut.
		if chrooted(c) {
			t.close()
			go o.walkAndFinish(c, k)
			return
		}
		t.rootFree, t.resolve = false, t.resolve&^unix.RESOLVE_NO_SYMLINKS
		fd, errno = openTarget(c, t, k)
	}
	t.close()
	if walked && errno == 0 && !t.ownProc && onProcFS(fd) {
		// Maybe this process's own /proc entry, which its threads may open.
		unix.Close(fd)
		errno = unix.EACCES
	}
	if !walked && errno == 0 && onProcFS(fd) {
		// /proc/self led to this process's entries, not the caller's.
		unix.Close(fd)
		errno = unix.ELOOP
	}
	if !walked && (errno == unix.ELOOP || errno == unix.EXDEV) && k.how.Resolve == 0 {
		go o.walkAndFinish(c, k)
		return
	}
	switch {
	case errno != 0:
		c.Answer(notify.Fail(errno))
	case k.meta != nil:
		errno = alone(fd, k.meta)
		unix.Close(fd)
		c.Answer(notify.Result{Errno: errno, FD: -1})
	case k.truncateTo >= 0:
		errno = errnoOf(unix.Ftruncate(fd, k.truncateTo))
		unix.Close(fd)
		c.Answer(notify.Result{Errno: errno, FD: -1})
	default:
		c.Answer(notify.Result{FD: fd, CloseOnExec: k.how.Flags&unix.O_CLOEXEC != 0})
	}
}

// walkAndFinish walks the call's path as the caller's kernel would and
// opens what it names on a confined thread.
func (o *Opener) walkAndFinish(c *notify.Caller, k *call) {
	t, errno := walk(c, k)
	if errno == 0 {
		if o.dispatch(func() { o.finish(c, t, k, true) }) {
			return
		}
		t.close()
		errno = unix.EAGAIN
	}
	c.Answer(notify.Fail(errno))
}

// chrooted says whether the caller's root is not this process's (a chroot
// in a user namespace of the command's own), or is not known.
func chrooted(c *notify.Caller) bool {
	var caller, own unix.Stat_t
	return unix.Stat(c.Proc()+"root", &caller) != nil || unix.Stat("/", &own) != nil || caller.Dev != own.Dev || caller.Ino != own.Ino
}

// parse reads the call's arguments; a path longer than PATH_MAX or an
// unreadable one fails as the kernel would fail it.
func parse(c *notify.Caller, n *notify.Notif) (*call, unix.Errno) {
	a := n.Args
	k := &call{dirfd: unix.AT_FDCWD, truncateTo: -1}
	var pathAt uint64
	switch n.Nr {
	case sysOpen:
		pathAt, k.how = a[0], unix.OpenHow{Flags: a[1] | largeFile, Mode: a[2]}
	case sysCreat:
		pathAt, k.how = a[0], unix.OpenHow{Flags: unix.O_CREAT | unix.O_WRONLY | unix.O_TRUNC | largeFile, Mode: a[1]}
	case unix.SYS_OPENAT:
		k.dirfd, pathAt, k.how = int(int32(a[0])), a[1], unix.OpenHow{Flags: a[2] | largeFile, Mode: a[3]}
	case sysOpenat2:
		k.dirfd, pathAt, k.openat2 = int(int32(a[0])), a[1], true
		if a[3] < 24 || a[3] > 4096 {
			return nil, map[bool]unix.Errno{true: unix.EINVAL, false: unix.E2BIG}[a[3] < 24]
		}
		b, errno := c.Read(a[2], int(a[3]))
		if errno != 0 {
			return nil, errno
		}
		if bytes.ContainsFunc(b[24:], func(r rune) bool { return r != 0 }) {
			return nil, unix.E2BIG
		}
		k.how = unix.OpenHow{Flags: binary.NativeEndian.Uint64(b), Mode: binary.NativeEndian.Uint64(b[8:]), Resolve: binary.NativeEndian.Uint64(b[16:])}
	case unix.SYS_TRUNCATE:
		if int64(a[1]) < 0 {
			return nil, unix.EINVAL
		}
		pathAt, k.truncateTo, k.how = a[0], int64(a[1]), unix.OpenHow{Flags: unix.O_WRONLY | largeFile}
	default:
		return nil, unix.ENOSYS
	}
	path, errno := c.ReadString(pathAt, unix.PathMax-1)
	if errno != 0 {
		return nil, errno
	}
	if path == "" {
		return nil, unix.ENOENT
	}
	k.path = path
	return k, 0
}

// maxBreaks bounds the links broken for one open: another link can be put
// in the path's place after each break, by a command racing this one.
const maxBreaks = 4

// create opens t, creating a file as k asks with the caller's umask, which
// is read only when a file is made: an existing one is opened first. made
// says that this open made the file, under the name the stager judged
// (O_EXCL, no file staged): new, it has that name alone.
func create(c *notify.Caller, t *target, k *call) (fd int, made bool, errno unix.Errno) {
	f := k.how.Flags
	switch {
	case f&unix.O_TMPFILE == unix.O_TMPFILE:
	case f&unix.O_CREAT != 0 && f&(unix.O_EXCL|unix.O_DIRECTORY) == 0:
		how := k.how
		how.Flags &^= unix.O_CREAT
		how.Mode = 0
		if fd, errno := openWaiting(c, t, how, k.openat2); errno != unix.ENOENT {
			return fd, false, errno
		}
	case f&unix.O_CREAT == 0:
		fd, errno = openWaiting(c, t, k.how, k.openat2)
		return fd, false, errno
	}
	unix.Umask(k.umasks.of(c))
	if k.stager != nil && f&unix.O_TMPFILE != unix.O_TMPFILE {
		return createJudged(c, t, k)
	}
	fd, errno = openWaiting(c, t, k.how, k.openat2)
	return fd, false, errno
}

// createJudged opens t, which may make a file, as the stager says: in the
// directory its path leads to, held, under its last name, no symlink
// followed there (a dangling one: ELOOP, and the caller's path is walked,
// which follows it, and judged again where it leads).
func createJudged(c *notify.Caller, t *target, k *call) (int, bool, unix.Errno) {
	if t.file >= 0 { // a magic link's file: it exists
		fd, errno := openWaiting(c, t, k.how, k.openat2)
		return fd, false, errno
	}
	trimmed := strings.TrimRight(t.name, "/")
	dirPath, name := ".", t.name
	if i := strings.LastIndexByte(trimmed, '/'); i >= 0 {
		dirPath, name = trimmed[:i], t.name[i+1:]
	}
	if dirPath == "" {
		dirPath = "/"
	}
	pt := &target{dir: t.dir, name: dirPath, resolve: t.resolve, file: -1}
	dir, errno := pt.open(unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY}, false)
	if errno != 0 {
		return -1, false, errno
	}
	defer unix.Close(dir)
	if hidden(k.stager, dir) {
		return -1, false, unix.EPERM
	}
	at := &target{dir: dir, name: name, resolve: unix.RESOLVE_NO_MAGICLINKS, file: -1}
	how := k.how
	how.Flags |= unix.O_NOFOLLOW
	verdict := Free
	if k.stager.Watched(strings.TrimRight(name, "/")) {
		verdict = judgeAt(k.stager, dir, name, OpMake)
	}
	switch verdict {
	case Refused:
		return -1, false, unix.EPERM
	case Crossed:
		return -1, false, unix.EXDEV
	case Staged:
		mode := uint32(k.how.Mode) &^ uint32(k.umasks.of(c)) & 0o777
		errno, staged := k.stager.Stage(entryPath(dir, name), OpMake, func(d int, n string) unix.Errno {
			fd, err := unix.Openat(d, n, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, mode)
			if err == nil {
				err = unix.Fchmod(fd, mode)
				unix.Close(fd)
			}
			return errnoOf(err)
		})
		if staged && errno != 0 {
			return -1, false, errno
		}
		if staged { // made: opened as it is now, through what shows it
			how.Flags &^= unix.O_CREAT | unix.O_EXCL
		}
	}
	fd, errno := openWaiting(c, at, how, k.openat2)
	return fd, errno == 0 && how.Flags&(unix.O_CREAT|unix.O_EXCL) == unix.O_CREAT|unix.O_EXCL, errno
}

// openTarget opens t as k asks; it runs on a confined thread.
func openTarget(c *notify.Caller, t *target, k *call) (int, unix.Errno) {
	// openat2 hands over reads too: only a write or O_TRUNC breaks a link.
	f := k.how.Flags
	writes := f&unix.O_PATH == 0 && (f&unix.O_ACCMODE != unix.O_RDONLY || f&unix.O_TRUNC != 0)
	if writes && k.stager != nil && judgeWrite(t, k.stager) != Free {
		return -1, unix.EPERM
	}
	var st unix.Stat_t
	for tries := 0; ; tries++ {
		fd, made, errno := create(c, t, k)
		if errno == 0 && writes && isDevTTY(fd) {
			// This process's terminal: the one the helper was started
			// from, the user's, which is not the caller's.
			unix.Close(fd)
			errno = unix.ENXIO
		}
		if errno == unix.ENXIO {
			fd, errno = controllingTTY(c, t, k)
		}
		if errno != 0 {
			return -1, errno
		}
		if errno = errnoOf(unix.Fstat(fd, &st)); errno == 0 && writes && k.stager != nil && (k.stager.Hidden(&st) || !writeJudgedOpen(fd, &st, k.stager)) {
			unix.Close(fd)
			return -1, unix.EPERM
		}
		if errno == 0 && (!writes || made || st.Mode&unix.S_IFMT != unix.S_IFREG) {
			// made: empty, and no name but the one made, in the directory
			// the command may write (a link made since, elsewhere, is in
			// one it may write too): nothing else is written through it.
			return fd, 0
		}
		// An open that truncates, or truncate(2) to nothing, needs none of
		// the bytes: an empty copy, at any size, and undo puts the file
		// back. Any other write of a big file whose other name is the
		// checkpoint store's goes in place (SetStoreLinks).
		empty := k.how.Flags&unix.O_TRUNC != 0 || k.truncateTo == 0
		if errno == 0 && (soleName(fd, &st) || !empty && k.links.only(fd, &st)) {
			if k.how.Flags&unix.O_TRUNC != 0 {
				errno = truncate(fd, k.how.Flags, st.Size)
			}
			if errno == 0 {
				return fd, 0
			}
		}
		var name string
		switch {
		case errno != 0:
		case tries == maxBreaks:
			errno = unix.EBUSY
		default:
			if name, errno = breakLink(fd, &st, empty); errno == 0 && t.file >= 0 {
				errno = t.retarget(name) // the magic link still names the old file
			}
		}
		unix.Close(fd)
		if errno != 0 {
			return -1, errno
		}
	}
}

// writeJudgedOpen says whether a file opened for writing (fd, st) may be
// written where it is, judged by the name it has now rather than by the
// path the caller gave: a symlink, a magic link or a descriptor's
// /proc/self/fd path reach a watched file (.git/index) under another name.
// A file with no name is free, and one with other names is copied before
// it is written; one whose name does not lead to it here (reached through
// a tree a command cloned with open_tree) is refused, as placed refuses a
// name made there.
func writeJudgedOpen(fd int, st *unix.Stat_t, s Stager) bool {
	if st.Mode&unix.S_IFMT != unix.S_IFREG || st.Nlink != 1 {
		return true
	}
	p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	if err != nil || !strings.HasPrefix(p, "/") || !s.Watched(filepath.Base(p)) {
		return true
	}
	return samePlace(p, st) && s.Judge(p, OpWrite) == Free
}

// judgeWrite judges a write-open of t, when its name is one Watched says.
func judgeWrite(t *target, s Stager) Verdict {
	if t.file >= 0 {
		p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(t.file))
		if err != nil || !s.Watched(filepath.Base(p)) {
			return Free
		}
		// Its path counts only where it leads to it (placed).
		var st unix.Stat_t
		if unix.Fstat(t.file, &st) != nil || st.Nlink > 0 && !samePlace(p, &st) {
			return Refused
		}
		return s.Judge(p, OpWrite)
	}
	trimmed := strings.TrimRight(t.name, "/")
	dirPath, name := ".", trimmed
	if i := strings.LastIndexByte(trimmed, '/'); i >= 0 {
		dirPath, name = trimmed[:i], trimmed[i+1:]
	}
	if !s.Watched(name) {
		return Free
	}
	if dirPath == "" {
		dirPath = "/"
	}
	pt := &target{dir: t.dir, name: dirPath, resolve: t.resolve, file: -1}
	dir, errno := pt.open(unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY}, false)
	if errno != 0 {
		return Free // the open fails as well
	}
	defer unix.Close(dir)
	return judgeAt(s, dir, name, OpWrite)
}

// soleName says whether the name fd was opened by is its file's only one
// (or it has none). One link is not enough: a name unlinked in the root
// after the open (`exec 3<f; rm f; echo >>/proc/self/fd/3`, or racing the
// open) leaves the file one name, outside. Checked after the fstat that
// counted the links, and a removed name never comes back, so the file had
// that one name, this one, when counted. A file whose name ends in
// " (deleted)" counts as removed.
func soleName(fd int, st *unix.Stat_t) bool {
	if st.Nlink != 1 {
		return st.Nlink == 0
	}
	return nameHeld(fd)
}

// nameHeld says whether the name fd was opened by still names its file, and
// did at some moment after the call (see soleName).
func nameHeld(fd int) bool {
	self := "/proc/thread-self/fd/" + strconv.Itoa(fd)
	p, err := os.Readlink(self)
	if err != nil || !strings.HasPrefix(p, "/") || strings.HasSuffix(p, " (deleted)") {
		return false
	}
	// An unlink drops the count before it removes the name, both while it
	// holds the directory: a lookup that misses there waits for it to end.
	dir, err := unix.Openat2(unix.AT_FDCWD, filepath.Dir(p), &unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_SYMLINKS})
	if err != nil {
		return false
	}
	var none unix.Stat_t
	unix.Fstatat(dir, ".shellgate-copyup-"+strconv.FormatUint(rand.Uint64(), 36), &none, unix.AT_SYMLINK_NOFOLLOW)
	unix.Close(dir)
	q, err := os.Readlink(self)
	return err == nil && q == p // not removed, nor moved, meanwhile
}

// truncate does what O_TRUNC does to a regular file: empties it and marks it
// modified, also when it was empty.
func truncate(fd int, flags uint64, size int64) unix.Errno {
	w := fd
	if flags&unix.O_ACCMODE == unix.O_RDONLY { // O_TRUNC asks for write permission even so
		var err error
		if w, err = unix.Open("/proc/thread-self/fd/"+strconv.Itoa(fd), unix.O_WRONLY|unix.O_CLOEXEC, 0); err != nil {
			return errnoOf(err)
		}
		defer unix.Close(w)
	}
	if err := unix.Ftruncate(w, 0); err != nil {
		return errnoOf(err)
	}
	if size == 0 {
		return setTimes(w, unix.Timespec{Nsec: unix.UTIME_OMIT}, unix.Timespec{Nsec: unix.UTIME_NOW})
	}
	return 0
}

// devTTY is /dev/tty's device number.
var devTTY = unix.Mkdev(5, 0)

// isDevTTY says whether fd is open on /dev/tty.
func isDevTTY(fd int) bool {
	var st unix.Stat_t
	return unix.Fstat(fd, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFCHR && st.Rdev == devTTY
}

// noTerminal says whether k opens /dev/tty for a caller without a
// controlling terminal, which the kernel fails with ENXIO, as every shell's
// start does (bash's check_dev_tty opens it O_RDWR|O_NONBLOCK): answered on
// the thread that received the call, no confined thread is woken for it.
// Nothing is opened but an O_PATH descriptor, so the answer can only refuse;
// any other open, and any doubt, takes the usual way.
func noTerminal(c *notify.Caller, t *target, k *call) bool {
	if k.meta != nil || k.truncateTo >= 0 || k.openat2 || k.how.Flags&(unix.O_CREAT|unix.O_TMPFILE|unix.O_DIRECTORY|unix.O_PATH) != 0 {
		return false
	}
	if !isTTYNode(t) {
		return false
	}
	nr, ok := callerTTY(c)
	return ok && nr == 0
}

// isTTYNode says whether t names /dev/tty's device node.
func isTTYNode(t *target) bool {
	p, errno := t.open(unix.OpenHow{Flags: unix.O_PATH}, false)
	if errno != 0 {
		return false
	}
	var st unix.Stat_t
	err := unix.Fstat(p, &st)
	unix.Close(p)
	return err == nil && st.Mode&unix.S_IFMT == unix.S_IFCHR && st.Rdev == devTTY
}

// callerTTY reads the device number of the caller's controlling terminal
// (0: none) from its stat file.
func callerTTY(c *notify.Caller) (uint64, bool) {
	stat := readProc(c.Proc() + "stat")
	_, fields, _ := strings.Cut(string(stat), ") ")
	f := strings.Fields(fields)
	if len(f) < 5 {
		return 0, false
	}
	nr, err := strconv.ParseUint(f[4], 10, 32) // tty_nr
	return nr, err == nil
}

// readProc reads a file of /proc by plain calls: bash opens /dev/tty at
// every start, and os.ReadFile would add five calls to each answer.
func readProc(path string) []byte {
	buf := make([]byte, 0, 512)
	b, _ := procfs.Read(path, &buf, true) // stat, mountinfo: seq files
	return b
}

// controllingTTY opens the caller's controlling terminal, a pseudo-terminal
// of the session, when t is /dev/tty, which names the opener's own: this
// thread has none. Otherwise it fails as /dev/tty does without one.
func controllingTTY(c *notify.Caller, t *target, k *call) (int, unix.Errno) {
	if !isTTYNode(t) {
		return -1, unix.ENXIO
	}
	nr, ok := callerTTY(c)
	if !ok {
		return -1, unix.ENXIO
	}
	var st unix.Stat_t
	major, minor := unix.Major(nr), unix.Minor(nr)
	if major < 136 || major > 143 { // Unix98 pseudo-terminal slaves
		return -1, unix.ENXIO
	}
	tty := &target{dir: unix.AT_FDCWD, file: -1, name: "/dev/pts/" + strconv.Itoa(int((major-136)*256+minor)), resolve: unix.RESOLVE_NO_SYMLINKS}
	fd, errno := tty.open(k.how, k.openat2)
	if errno == 0 && (unix.Fstat(fd, &st) != nil || st.Rdev != nr) {
		unix.Close(fd)
		return -1, unix.ENXIO
	}
	return fd, errno
}

// onProcFS says whether fd is a file of a proc file system, where the
// kernel's /proc/self is this process: such an open is walked again.
func onProcFS(fd int) bool {
	var fs unix.Statfs_t
	return unix.Fstatfs(fd, &fs) == nil && fs.Type == unix.PROC_SUPER_MAGIC
}

// callerUmask is the caller's umask, 022 if unknown.
func callerUmask(c *notify.Caller) int {
	if m, err := strconv.ParseUint(callerField(c, "Umask:"), 8, 32); err == nil {
		return int(m)
	}
	return 0o22
}

func errnoOf(err error) unix.Errno {
	if err == nil {
		return 0
	}
	return notify.ErrnoOf(err, unix.EIO)
}
