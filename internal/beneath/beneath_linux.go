// Package beneath works on a project's files through directory descriptors,
// resolving no symlink and never leaving the directory it starts from, so
// that a command renaming things at the same time cannot make the sandbox's
// helper move, copy or bind anything elsewhere: quarantining what appeared,
// binding paths read-only, removing symlinks from .git.
package beneath

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/shellgate/shellgate/internal/protect"
)

// Quarantine moves p, in root, out of the way and makes it read-only:
// into a new directory of into (a directory of root), or, where that cannot be (p is in a
// directory pinned earlier, the quarantine is not a directory), beside itself
// under a name no tool reads (".shellgate-quarantined-config-…"). Nothing can
// then change what it holds, move it back or remove it from the session. Every
// step resolves beneath the root without symlinks and renames whole entries,
// so a command cannot make the helper write anywhere else or copy anything.
func Quarantine(root, into, p string) (string, error) {
	if root == "" {
		return "", fmt.Errorf("quarantine %s: no project root", p)
	}
	rel, err := filepath.Rel(root, p)
	if err != nil || !filepath.IsLocal(rel) {
		return "", fmt.Errorf("quarantine %s: not in the root", p)
	}
	return quarantineRel(root, into, -1, rel, p)
}

// quarantineRel moves the entry at rel, or Base(rel) in fromFD (if not -1),
// as Quarantine does; p names it in errors.
func quarantineRel(root, into string, fromFD int, rel, p string) (string, error) {
	rootFD, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", err
	}
	defer unix.Close(rootFD)
	besideFD, err := Dir(rootFD, filepath.Dir(rel))
	if err != nil {
		return "", fmt.Errorf("quarantine %s: %w", p, err)
	}
	defer unix.Close(besideFD)
	if fromFD < 0 {
		fromFD = besideFD
	}
	return quarantineFrom(root, into, rootFD, fromFD, besideFD, rel)
}

// quarantineFrom moves the entry Base(rel) of fromFD into the quarantine as
// the entry at rel, or, where that cannot be, beside itself in besideFD
// (rel's directory).
func quarantineFrom(root, into string, rootFD, fromFD, besideFD int, rel string) (string, error) {
	name := filepath.Base(rel)
	if to, err := intoQuarantine(root, into, rootFD, fromFD, rel); err == nil {
		return to, nil
	}
	aside := protect.QuarantinedPrefix + name + "-" + RandomName()
	if err := unix.Renameat(fromFD, name, besideFD, aside); err != nil {
		return "", fmt.Errorf("quarantine %s: %w", filepath.Join(root, rel), err)
	}
	to := filepath.Join(filepath.Dir(rel), aside)
	unlinkOthers(besideFD, aside)
	defuseGitDir(besideFD, aside)
	if err := Bind(besideFD, aside, true); err != nil {
		return to, fmt.Errorf("quarantine %s: moved to %s, but not made read-only: %w", filepath.Join(root, rel), to, err)
	}
	return to, nil
}

// intoQuarantine moves rel (its entry name in fromFD) into a new directory of
// into, keeping its relative path, and binds that directory
// read-only. It returns where, relative to the root.
func intoQuarantine(root, into string, rootFD, fromFD int, rel string) (string, error) {
	qrel, err := filepath.Rel(root, into)
	if into == "" || err != nil || !filepath.IsLocal(qrel) {
		return "", errors.New("no quarantine in the root")
	}
	if err := unix.Mkdirat(rootFD, qrel, 0o755); err != nil && err != unix.EEXIST {
		return "", err
	}
	qFD, err := Dir(rootFD, qrel)
	if err != nil {
		return "", err
	}
	defer unix.Close(qFD)
	item := time.Now().Format("20060102-150405") + "-" + RandomName()
	if err := unix.Mkdirat(qFD, item, 0o755); err != nil {
		return "", err
	}
	dirFD, err := Dir(qFD, item)
	if err != nil {
		return "", err
	}
	defer func() { unix.Close(dirFD) }() // the last one opened
	// The directories leading to it inside the item keep its relative path;
	// each is made and opened through the last, never by name from the root.
	for _, d := range strings.Split(filepath.Dir(rel), string(filepath.Separator)) {
		if d == "." {
			continue
		}
		if err := unix.Mkdirat(dirFD, d, 0o755); err != nil {
			return "", err
		}
		next, err := Dir(dirFD, d)
		if err != nil {
			return "", err
		}
		unix.Close(dirFD)
		dirFD = next
	}
	name := filepath.Base(rel)
	if err := unix.Renameat(fromFD, name, dirFD, name); err != nil {
		return "", err
	}
	unlinkOthers(dirFD, name)
	defuseGitDir(dirFD, name)
	itemFD, err := Dir(qFD, item)
	if err == nil {
		err = Bind(itemFD, "", true)
		unix.Close(itemFD)
	}
	to := filepath.Join(qrel, item, rel)
	if err != nil {
		return to, fmt.Errorf("moved to %s, but not made read-only: %w", to, err)
	}
	return to, nil
}

// Bounds on what unlinkOthers copies.
const (
	maxUnlinkEntries = 10000
	maxUnlinkBytes   = 64 << 20
	maxUnlinkDepth   = 64
)

// QuarantinedHEAD is what the HEAD of a git directory moved to the
// quarantine is renamed to (defuseGitDir).
const QuarantinedHEAD = "HEAD.quarantined"

// defuseGitDir makes the entry name of dirFD, moved to the quarantine, no
// git directory, if it is one (a HEAD, with objects and refs or a
// commondir): its HEAD is renamed QuarantinedHEAD. A repository moved
// aside because its config runs code (core.fsmonitor) would otherwise run
// it when the user reviews it there: a shell prompt's git status in
// .shellgate-quarantine/…/sub, where its .git still is. git takes a
// directory without a HEAD for none, and looks further up.
func defuseGitDir(dirFD int, name string) {
	d, err := Dir(dirFD, name)
	if err != nil {
		return // not a directory
	}
	defer unix.Close(d)
	var st unix.Stat_t
	has := func(n string) bool { return unix.Fstatat(d, n, &st, unix.AT_SYMLINK_NOFOLLOW) == nil }
	if has("HEAD") && (has("objects") && has("refs") || has("commondir")) {
		unix.Renameat(d, "HEAD", d, QuarantinedHEAD)
	}
}

// unlinkOthers replaces every file under name (in dirFD) that has another
// hard link by a copy of its own, so that what was quarantined stays as it
// was: a name left in the root (`ln .vscode/tasks.json keep`) would change it
// still, read-only mount or not. Within bounds (entries, bytes, depth): past
// them the rest keeps its links.
func unlinkOthers(dirFD int, name string) {
	entries, bytes := maxUnlinkEntries, int64(maxUnlinkBytes)
	var walk func(dirFD int, name string, depth int)
	walk = func(dirFD int, name string, depth int) {
		var st unix.Stat_t
		if entries--; entries < 0 || unix.Fstatat(dirFD, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
			return
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFREG:
			if st.Nlink > 1 && st.Size <= bytes {
				bytes -= st.Size
				copyOver(dirFD, name, &st)
			}
		case unix.S_IFDIR:
			if depth >= maxUnlinkDepth {
				return
			}
			f, err := Open(dirFD, name, unix.O_DIRECTORY)
			if err != nil {
				return
			}
			defer f.Close()
			names, _ := f.Readdirnames(maxUnlinkEntries)
			for _, n := range names {
				walk(int(f.Fd()), n, depth+1)
			}
		}
	}
	walk(dirFD, name, 0)
}

// copyOver replaces the regular file name (in dirFD) by a copy under a
// random name renamed over it, keeping its mode.
func copyOver(dirFD int, name string, st *unix.Stat_t) error {
	src, err := Open(dirFD, name, 0)
	if err != nil {
		return err
	}
	defer src.Close()
	tmp := ".shellgate-copy-" + RandomName()
	fd, err := unix.Openat(dirFD, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return err
	}
	unix.Fchmod(fd, st.Mode&0o777)
	dst := os.NewFile(uintptr(fd), tmp)
	_, err = io.Copy(dst, io.LimitReader(src, st.Size))
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = unix.Renameat(dirFD, tmp, dirFD, name)
	}
	if err != nil {
		unix.Unlinkat(dirFD, tmp, 0)
	}
	return err
}

// Dir opens rel, a directory beneath dirFD, resolving no symlink and
// never leaving dirFD.
func Dir(dirFD int, rel string) (int, error) {
	return unix.Openat2(dirFD, rel, &unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC, Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS})
}

// Bind binds the entry name of dirFD ("" for dirFD itself), not following a
// symlink, onto itself, read-only if readOnly.
func Bind(dirFD int, name string, readOnly bool) error {
	flags := uint(unix.OPEN_TREE_CLONE | unix.OPEN_TREE_CLOEXEC | unix.AT_RECURSIVE | unix.AT_SYMLINK_NOFOLLOW)
	if name == "" {
		flags |= unix.AT_EMPTY_PATH
	}
	tree, err := unix.OpenTree(dirFD, name, flags)
	if err != nil {
		return err
	}
	defer unix.Close(tree)
	if readOnly {
		attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
		if err := unix.MountSetattr(tree, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &attr); err != nil {
			return err
		}
	}
	target := unix.MOVE_MOUNT_F_EMPTY_PATH
	if name == "" {
		target |= unix.MOVE_MOUNT_T_EMPTY_PATH
	}
	return unix.MoveMount(tree, "", dirFD, name, target)
}

// maxGitDepth bounds the walk of .git for symlinks and hard links: deeper
// than any path git can open (each level takes a name and a slash of
// PATH_MAX). The walk has no bound on entries: one would let a command hide a
// symlink behind entries of its own (20001 files in .git/bjunk, which the
// directory lists before COMMIT_EDITMSG), and a command that fills .git only
// makes its own session's sweeps slower.
const maxGitDepth = unix.PathMax / 2

// SweepGit removes every symlink and FIFO in the root's .git but its object
// store, and replaces every regular file there with another name by a copy of its
// own; it does the same in nested, git directories beneath the root (relative
// to it: a nested repository's .git), and in gitDirs (absolute, outside the
// root: a linked worktree's). Git makes neither there, and git on the host
// writes through both: a .git/logs/HEAD or COMMIT_EDITMSG that leads to
// ~/.bashrc, or shares its file with a package store's (pnpm links one into
// node_modules), has the user's next commit write into it. It returns what it
// undid, as notes.
func SweepGit(root string, nested []string, gitDirs ...string) []string {
	removed, _ := sweepGit(nil, root, nested, gitDirs)
	return removed
}

// sweepGit is SweepGit, each directory and file it looks at watched by w
// first, if not nil; all reports whether every git directory was there and
// every watch was added.
func sweepGit(w *gitWatch, root string, nested, gitDirs []string) (removed []string, all bool) {
	all = true
	if rootFD, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err == nil {
		for _, rel := range append([]string{".git"}, nested...) {
			gitFD, err := Dir(rootFD, rel)
			if rel == ".git" && err == unix.ENOENT && w != nil && w.ok {
				// A root without .git: one that appears later is an event of
				// the root's, watched before it is looked for again.
				w.add(rootFD, "", gitRootEvents)
				if gitFD, err = Dir(rootFD, rel); err == unix.ENOENT && w.ok {
					continue
				}
			}
			if err == nil {
				removed = sweepGitDir(w, gitFD, rel+"/", removed)
				unix.Close(gitFD)
			} else {
				all = false
			}
		}
		unix.Close(rootFD)
	} else {
		all = false
	}
	for _, d := range gitDirs {
		if fd, err := unix.Open(d, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0); err == nil {
			removed = sweepGitDir(w, fd, d+"/", removed)
			unix.Close(fd)
		} else {
			all = false
		}
	}
	return removed, all && (w == nil || w.ok)
}

// GitSweeper sweeps git directories as SweepGit does, and skips a sweep when
// nothing it looked at last time has changed since: each directory it walked
// and each file whose links it counted is watched (inotify) before it is
// read, so any change after that read is an event, and one before it was
// seen by the read. A sweep is skipped only when the last one undid nothing,
// found every git directory it was given (or, for the root's .git, watched
// the root for one to appear), watched all it looked at and no
// event has come since (an overflow of the queue is one too): a directory
// made since is an event of its parent's, and its first sweep watches it.
// Events from the inode of a file: a hard link made to it from outside .git
// changes its link count (IN_ATTRIB), which its directory's watch would not
// report. The helper's own bind mounts (Forget) also make the next sweep whole.
// Not safe for concurrent use.
type GitSweeper struct {
	w     gitWatch
	clean bool   // the last sweep undid nothing and watched everything
	key   string // what it swept
	whole int    // sweeps made (not skipped), for tests
	// unwatched: how many sweeps are still to be whole and watch nothing
	// (see NewGitSweeperWatchingAfter).
	unwatched int
}

// gitWatch is one sweep's inotify instance.
type gitWatch struct {
	fd int  // -1: none
	ok bool // every watch was added
}

// NewGitSweeper returns a sweeper that has not swept yet.
func NewGitSweeper() *GitSweeper { return &GitSweeper{w: gitWatch{fd: -1}} }

// NewGitSweeperWatchingAfter returns a sweeper whose first n sweeps are
// whole, as SweepGit's, and watch nothing; the later ones are as
// NewGitSweeper's. For a session of one command (a one-shot run), which
// sweeps three times when its command is short (its set-up, the command's
// start and its end): the close of an inotify instance that watched
// anything waits for the kernel to free its marks, after an SRCU grace
// period (fsnotify_destroy_group), and the helper's exit, which a one-shot
// run waits for, closes its last (5 ms at the median on the build machine,
// where a root without .git is swept by one lookup). A command that runs
// on is swept by its session's guard (every 0.2 s), and from the fourth
// sweep on the watch skips those that nothing changed.
func NewGitSweeperWatchingAfter(n int) *GitSweeper {
	return &GitSweeper{w: gitWatch{fd: -1}, unwatched: n}
}

// Sweep does what SweepGit does, unless nothing changed since the last
// sweep of the same directories (see GitSweeper).
func (s *GitSweeper) Sweep(root string, nested []string, gitDirs ...string) []string {
	if s.unwatched > 0 {
		s.unwatched--
		s.whole++
		removed, _ := sweepGit(nil, root, nested, gitDirs)
		return removed
	}
	key := strings.Join(append(append([]string{root}, nested...), append([]string{"\x00"}, gitDirs...)...), "\x00")
	if s.clean && s.key == key && s.w.quiet() {
		return nil
	}
	s.clean = false
	s.whole++
	s.w.close()
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	s.w = gitWatch{fd: fd, ok: err == nil}
	if err != nil {
		s.w.fd = -1
	}
	removed, all := sweepGit(&s.w, root, nested, gitDirs)
	s.clean, s.key = all && len(removed) == 0, key
	return removed
}

// Forget makes the next sweep a whole one.
func (s *GitSweeper) Forget() { s.clean = false }

// Close ends the watches.
func (s *GitSweeper) Close() {
	s.clean = false
	s.w.close()
}

func (w *gitWatch) close() {
	if w.fd >= 0 {
		unix.Close(w.fd)
	}
	w.fd, w.ok = -1, false
}

// quiet says whether no event is queued.
func (w *gitWatch) quiet() bool {
	if w.fd < 0 {
		return false
	}
	n, err := unix.IoctlGetInt(w.fd, unix.TIOCINQ) // FIONREAD
	return err == nil && n == 0
}

// Masks of the watches: for a directory, whatever adds, removes or renames an
// entry or changes one's attributes, and its own move or removal; for a file,
// its attributes (the link count) and its own move or removal.
const (
	gitDirEvents  = unix.IN_CREATE | unix.IN_MOVED_TO | unix.IN_MOVED_FROM | unix.IN_DELETE | unix.IN_ATTRIB | unix.IN_MOVE_SELF | unix.IN_DELETE_SELF | unix.IN_ONLYDIR
	gitFileEvents = unix.IN_ATTRIB | unix.IN_MOVE_SELF | unix.IN_DELETE_SELF | unix.IN_DONT_FOLLOW
	// gitRootEvents: of a root without .git, whatever adds an entry to it,
	// and its own move or removal.
	gitRootEvents = unix.IN_CREATE | unix.IN_MOVED_TO | unix.IN_MOVE_SELF | unix.IN_DELETE_SELF | unix.IN_ONLYDIR
)

// found notes what makes the next sweep a whole one: something undone (or
// that could not be), or a directory not looked at. It returns true.
func (w *gitWatch) found() bool {
	if w != nil {
		w.ok = false
	}
	return true
}

// add watches name in the directory open as dirFD, or that directory itself
// if name is "". It names the inode by the open descriptor, so a rename
// meanwhile cannot make it watch another.
func (w *gitWatch) add(dirFD int, name string, mask uint32) {
	if w == nil || !w.ok {
		return
	}
	p := "/proc/self/fd/" + strconv.Itoa(dirFD)
	if name != "" {
		p += "/" + name
	}
	if _, err := unix.InotifyAddWatch(w.fd, p, mask); err != nil {
		w.ok = false
	}
}

// sweepGitDir removes the symlinks under dirFD (named label… in the notes)
// and copies its files that have other names, but in a top-level objects
// directory (git links objects, `clone --local`, and never writes one in
// place) and, for hard links, in a submodule's, within maxGitDepth.
func sweepGitDir(w *gitWatch, dirFD int, label string, removed []string) []string {
	var walk func(dirFD int, rel string, depth int, objects bool)
	sweep := func(dir *os.File, e os.DirEntry, rel string, depth int, objects bool) {
		name, fd := e.Name(), int(dir.Fd())
		switch {
		case e.Type()&os.ModeSymlink != 0:
			w.found()
			target, _ := Readlink(fd, name)
			if unix.Unlinkat(fd, name, 0) == nil {
				removed = append(removed, fmt.Sprintf("removed the symlink %s%s%s (to %s), which git writes through", label, rel, name, target))
			}
		case e.Type()&os.ModeNamedPipe != 0:
			// Git opens its files there to write them: a FIFO in place of
			// logs/HEAD or COMMIT_EDITMSG hangs the user's next commit.
			w.found()
			if unix.Unlinkat(fd, name, 0) == nil {
				removed = append(removed, fmt.Sprintf("removed the FIFO %s%s%s, which would hang git", label, rel, name))
			}
		case e.Type().IsRegular() && !objects:
			w.add(fd, name, gitFileEvents) // before its links are counted
			var st unix.Stat_t
			if unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG &&
				st.Nlink > 1 && w.found() && copyOver(fd, name, &st) == nil {
				removed = append(removed, fmt.Sprintf("copied %s%s%s, a hard link git would write through to its %d other names", label, rel, name, st.Nlink-1))
			}
		case e.IsDir() && depth < maxGitDepth && !(depth == 0 && name == "objects"):
			if sub, err := Dir(fd, name); err == nil {
				walk(sub, rel+name+"/", depth+1, objects || submoduleObjects(rel, name))
				unix.Close(sub)
			} else {
				w.found() // not looked at, so not watched
			}
		}
	}
	walk = func(dirFD int, rel string, depth int, objects bool) {
		f, err := Open(dirFD, ".", unix.O_DIRECTORY)
		if err != nil {
			w.found()
			return
		}
		defer f.Close()
		w.add(int(f.Fd()), "", gitDirEvents) // before it is read
		for {
			list, err := f.ReadDir(1024)
			for _, e := range list {
				sweep(f, e, rel, depth, objects)
			}
			if err != nil {
				return
			}
		}
	}
	walk(dirFD, "", 0, false)
	return removed
}

// submoduleObjects says whether name in rel (within a git directory) is a
// submodule's object store, .git/modules/…/objects, whose files a local
// clone links (git submodule add of a repository on the same disk): git
// never writes one in place. A directory of that name below a logs or refs
// directory is a ref's (a branch objects/main), whose reflog git appends to.
func submoduleObjects(rel, name string) bool {
	if name != "objects" || !strings.HasPrefix(rel, "modules/") {
		return false
	}
	for _, part := range strings.Split(rel, "/") {
		if part == "logs" || part == "refs" {
			return false
		}
	}
	return true
}

// QuarantineEntry moves Base(rel), in fromFD (a staging directory of the
// sandbox's, anywhere in root), into a new directory of into as Quarantine
// would move the entry at rel, keeping rel as its path there, or beside rel
// where that cannot be; it returns where, relative to the root. What a
// command made where the host must not see it goes to the quarantine
// without ever being at rel.
func QuarantineEntry(root, into string, fromFD int, rel string) (string, error) {
	if !filepath.IsLocal(rel) {
		return "", fmt.Errorf("quarantine %s: not in the root", rel)
	}
	return quarantineRel(root, into, fromFD, rel, rel)
}
