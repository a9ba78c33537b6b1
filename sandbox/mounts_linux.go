package sandbox

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// mounter builds the session's view of the filesystem in its mount namespace.
type mounter struct {
	spec *Spec

	mu        sync.Mutex
	ready     bool            // the mount namespace is the session's own
	protected map[string]bool // protected paths made read-only
	pinned    map[string]bool // directories made mount points
	// gitAtStart: the root had a .git (directory, or a worktree's file) when
	// the session started.
	gitAtStart bool
	removed    []string // symlinks removed from .git since takeRemoved
}

func newMounter(spec *Spec) *mounter {
	m := &mounter{spec: spec, protected: map[string]bool{}, pinned: map[string]bool{}}
	if len(spec.Writable) > 0 {
		_, err := os.Lstat(filepath.Join(spec.Writable[0], ".git"))
		m.gitAtStart = err == nil
	}
	return m
}

// private stops mount events from travelling between the session and the host.
func (m *mounter) private() error {
	err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, "")
	m.ready = err == nil
	return err
}

// protect makes the protected paths that exist read-only, however they are
// reached: a bind mount covers the file itself, not one name of it. The
// directories between a writable path and a protected one (.git for
// .git/hooks) become mount points too, still writable: a mount point cannot be
// renamed or removed, so `mv .git g && mkdir -p .git/hooks` cannot put a
// fresh, writable hooks directory where git will look.
//
// It runs when the session starts and again around every command, so that a
// protected path that appears later is dealt with before anything on the
// host reads it; it returns the paths it protected this time. If moveAside
// says so, those that appeared (all but the user's own, on the host between
// commands, or those an approved command made) are moved to Spec.Quarantine
// instead, each into a read-only directory of its own, and returned as moved
// ("path → where"): what a command wrote there never reaches the host's
// tools. git works without a config, hooks or info of its own, so `git init`
// in a project without one still works.
func (m *mounter) protect(moveAside func() bool) (now, moved []string, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.ready {
		return nil, nil, nil
	}
	// Asked only when something new is there: most calls find nothing.
	aside := func() bool { return false }
	if moveAside != nil && m.spec.Quarantine != "" {
		aside = sync.OnceValue(moveAside)
	}
	var errs []error
	pin := func(path string, resolve bool) bool {
		if m.pinned[path] {
			return true
		}
		err := m.bind(path, resolve, false)
		if err != nil && !errors.Is(err, errOutside) {
			errs = append(errs, fmt.Errorf("pin %w", err))
		}
		m.pinned[path] = err == nil
		return err == nil
	}
	// A .git that is not a directory, which was not there at the start, points
	// git elsewhere ("gitdir: …"), where a command can write the config git
	// will run.
	if len(m.spec.Writable) > 0 {
		g := filepath.Join(m.spec.Writable[0], ".git")
		if fi, err := os.Lstat(g); err == nil && !fi.IsDir() && !m.gitAtStart && aside() {
			if to, err := m.quarantine(g); err == nil {
				moved = append(moved, g+" → "+to)
			} else {
				errs = append(errs, err)
			}
		}
	}
	// Moves first: a directory pinned for one path (.git) would keep another
	// (.git/config) from being renamed out of it.
	protected := append(slices.Clone(m.spec.Protected), m.rootMatches()...)
	for _, p := range protected {
		if _, err := os.Lstat(p); err != nil || m.protected[p] || !aside() {
			continue
		}
		if to, err := m.quarantine(p); err == nil {
			moved = append(moved, p+" → "+to)
		} else {
			errs = append(errs, err) // protected where it is, then
		}
	}
	for _, p := range protected {
		if m.protected[p] {
			continue
		}
		fi, err := os.Lstat(p)
		if err != nil {
			continue
		}
		for _, dir := range m.between(p) {
			pin(dir, true)
		}
		if fi.Mode()&os.ModeSymlink != 0 && !pin(p, false) {
			continue // a symlink that could be replaced by a file of the command's
		}
		// The file or directory it is, or a symlink leads to.
		if err := m.bind(p, true, true); err != nil && !errors.Is(err, errOutside) {
			if !os.IsNotExist(err) { // a dangling symlink: its target is bound once it exists
				errs = append(errs, err)
			}
			continue
		}
		m.protected[p] = true
		now = append(now, p)
	}
	if len(m.spec.Writable) > 0 {
		m.removed = append(m.removed, unlinkGitSymlinks(m.spec.Writable[0])...)
	}
	return now, moved, errors.Join(errs...)
}

// keep makes paths read-only where they are, from now on: a nested
// repository's git files, a subproject's protected entries, found when the
// session started (see Session.KeepReadOnly). Unlike Spec.Protected, nothing
// is pinned on the way to them, and what is not there is not waited for.
func (m *mounter) keep(paths []string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.ready {
		return nil
	}
	var errs []error
	for _, p := range paths {
		if m.protected[p] {
			continue
		}
		if err := m.bind(p, false, true); err != nil && !errors.Is(err, errOutside) && !os.IsNotExist(err) {
			errs = append(errs, err)
			continue
		}
		m.protected[p] = true
	}
	return errors.Join(errs...)
}

// rootMatches are the entries of the root whose names match Spec.Patterns
// (a *.code-workspace): protected like the paths Spec.Protected names.
func (m *mounter) rootMatches() []string {
	if len(m.spec.Patterns) == 0 || len(m.spec.Writable) == 0 {
		return nil
	}
	f, err := os.Open(m.spec.Writable[0])
	if err != nil {
		return nil
	}
	defer f.Close()
	names, _ := f.Readdirnames(maxGitEntries)
	var ps []string
	for _, n := range names {
		for _, pat := range m.spec.Patterns {
			if ok, _ := filepath.Match(pat, n); ok {
				ps = append(ps, filepath.Join(m.spec.Writable[0], n))
				break
			}
		}
	}
	return ps
}

// takeRemoved returns the symlinks protect removed from .git since the last
// call.
func (m *mounter) takeRemoved() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.removed
	m.removed = nil
	return r
}

// Bounds on the walk of .git for symlinks.
const (
	maxGitEntries = 20000
	maxGitDepth   = 16
)

// unlinkGitSymlinks removes every symlink in the root's .git but its object
// store: git never makes one there, and git on the host writes through them
// (a .git/logs/HEAD or COMMIT_EDITMSG that leads to ~/.bashrc has the user's
// next commit append to it). It returns what it removed, as notes.
func unlinkGitSymlinks(root string) []string {
	rootFD, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	defer unix.Close(rootFD)
	gitFD, err := beneath(rootFD, ".git")
	if err != nil {
		return nil
	}
	defer unix.Close(gitFD)
	var removed []string
	entries := maxGitEntries
	var walk func(dirFD int, rel string, depth int)
	walk = func(dirFD int, rel string, depth int) {
		f, err := openAt(dirFD, ".", unix.O_DIRECTORY)
		if err != nil {
			return
		}
		defer f.Close()
		list, _ := f.ReadDir(entries)
		for _, e := range list {
			if entries--; entries < 0 {
				return
			}
			name := e.Name()
			switch {
			case e.Type()&os.ModeSymlink != 0:
				target, _ := readlinkAt(int(f.Fd()), name)
				if unix.Unlinkat(int(f.Fd()), name, 0) == nil {
					removed = append(removed, fmt.Sprintf(".git/%s%s (to %s)", rel, name, target))
				}
			case e.IsDir() && depth < maxGitDepth && !(depth == 0 && name == "objects"):
				if sub, err := beneath(int(f.Fd()), name); err == nil {
					walk(sub, rel+name+"/", depth+1)
					unix.Close(sub)
				}
			}
		}
	}
	walk(gitFD, "", 0)
	return removed
}

func readlinkAt(dirFD int, name string) (string, error) {
	buf := make([]byte, 4096)
	n, err := unix.Readlinkat(dirFD, name, buf)
	if err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}

// quarantine moves p, in the root, out of the way and makes it read-only:
// into a new directory of Spec.Quarantine, or, where that cannot be (p is in a
// directory pinned earlier, the quarantine is not a directory), beside itself
// under a name no tool reads (".shellgate-quarantined-config-…"). Nothing can
// then change what it holds, move it back or remove it from the session. Every
// step resolves beneath the root without symlinks and renames whole entries,
// so a command cannot make the helper write anywhere else or copy anything.
func (m *mounter) quarantine(p string) (string, error) {
	if len(m.spec.Writable) == 0 {
		return "", fmt.Errorf("quarantine %s: no project root", p)
	}
	root := m.spec.Writable[0]
	rel, err := filepath.Rel(root, p)
	if err != nil || !filepath.IsLocal(rel) {
		return "", fmt.Errorf("quarantine %s: not in the root", p)
	}
	rootFD, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", err
	}
	defer unix.Close(rootFD)
	fromFD, err := beneath(rootFD, filepath.Dir(rel))
	if err != nil {
		return "", fmt.Errorf("quarantine %s: %w", p, err)
	}
	defer unix.Close(fromFD)
	name := filepath.Base(rel)
	if to, err := m.intoQuarantine(rootFD, fromFD, rel); err == nil {
		return to, nil
	}
	aside := ".shellgate-quarantined-" + name + "-" + randomName()
	if err := unix.Renameat(fromFD, name, fromFD, aside); err != nil {
		return "", fmt.Errorf("quarantine %s: %w", p, err)
	}
	to := filepath.Join(filepath.Dir(rel), aside)
	unlinkOthers(fromFD, aside)
	if err := bindAt(fromFD, aside, true); err != nil {
		return to, fmt.Errorf("quarantine %s: moved to %s, but not made read-only: %w", p, to, err)
	}
	return to, nil
}

// intoQuarantine moves rel (its entry name in fromFD) into a new directory of
// Spec.Quarantine, keeping its relative path, and binds that directory
// read-only. It returns where, relative to the root.
func (m *mounter) intoQuarantine(rootFD, fromFD int, rel string) (string, error) {
	qrel, err := filepath.Rel(m.spec.Writable[0], m.spec.Quarantine)
	if m.spec.Quarantine == "" || err != nil || !filepath.IsLocal(qrel) {
		return "", errors.New("no quarantine in the root")
	}
	if err := unix.Mkdirat(rootFD, qrel, 0o755); err != nil && err != unix.EEXIST {
		return "", err
	}
	qFD, err := beneath(rootFD, qrel)
	if err != nil {
		return "", err
	}
	defer unix.Close(qFD)
	item := time.Now().Format("20060102-150405") + "-" + randomName()
	if err := unix.Mkdirat(qFD, item, 0o755); err != nil {
		return "", err
	}
	dirFD, err := beneath(qFD, item)
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
		next, err := beneath(dirFD, d)
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
	itemFD, err := beneath(qFD, item)
	if err == nil {
		err = bindAt(itemFD, "", true)
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
			f, err := openAt(dirFD, name, unix.O_DIRECTORY)
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
	src, err := openAt(dirFD, name, 0)
	if err != nil {
		return err
	}
	defer src.Close()
	tmp := ".shellgate-copy-" + randomName()
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

// beneath opens rel, a directory beneath dirFD, resolving no symlink and
// never leaving dirFD.
func beneath(dirFD int, rel string) (int, error) {
	return unix.Openat2(dirFD, rel, &unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC, Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS})
}

// bindAt binds the entry name of dirFD ("" for dirFD itself), not following a
// symlink, onto itself, read-only if readOnly.
func bindAt(dirFD int, name string, readOnly bool) error {
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

// randomName is 8 random hex digits: a name a command cannot make first.
func randomName() string {
	var b [4]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// errOutside: the path leads out of the writable paths.
var errOutside = errors.New("outside the writable paths")

// bind binds path onto itself, read-only if readOnly: with resolve, the file or
// directory it names once symlinks are resolved; without, a symlink itself,
// which then cannot be removed or replaced. It works on one open file
// throughout, so that a command renaming things meanwhile cannot make it bind
// one place onto another or make another mount read-only. A path that leads
// out of the writable paths, or to one of them, is left alone: nothing writes
// outside them anyway, and a command's symlink must not make the helper bind
// the whole project read-only.
func (m *mounter) bind(path string, resolve, readOnly bool) error {
	real := path
	if resolve {
		var err error
		if real, err = filepath.EvalSymlinks(path); err != nil {
			return err
		}
	}
	if !slices.ContainsFunc(m.spec.Writable, func(w string) bool { return real != w && under(real, w) }) {
		return errOutside
	}
	fd, err := unix.Open(real, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer unix.Close(fd)
	err = bindAt(fd, "", readOnly)
	if err == unix.ENOSYS && resolve { // before Linux 5.2; no mounts on symlinks
		if readOnly {
			return bindReadOnly(real, real)
		}
		return unix.Mount(real, real, "", unix.MS_BIND|unix.MS_REC, "")
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// between lists the directories strictly between the writable path holding p
// and p, outermost first: [root/.git] for root/.git/hooks.
func (m *mounter) between(p string) []string {
	for _, w := range m.spec.Writable {
		if w == p || !under(p, w) {
			continue
		}
		var dirs []string
		for d := filepath.Dir(p); d != w && under(d, w); d = filepath.Dir(d) {
			dirs = append([]string{d}, dirs...)
		}
		return dirs
	}
	return nil
}

// bindReadOnly binds src onto dst and makes that mount read-only.
func bindReadOnly(src, dst string) error {
	if err := unix.Mount(src, dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind %s: %w", dst, err)
	}
	return remountReadOnly(dst)
}

// remountReadOnly makes the bind mount at dst read-only, keeping the flags the
// kernel locks in a user namespace (nosuid, nodev, noexec, atime).
func remountReadOnly(dst string) error {
	var st unix.Statfs_t
	if err := unix.Statfs(dst, &st); err != nil {
		return err
	}
	keep := uintptr(st.Flags) & (unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC | unix.MS_NOATIME | unix.MS_NODIRATIME | unix.MS_RELATIME)
	if err := unix.Mount("", dst, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY|keep, ""); err != nil {
		return fmt.Errorf("read-only %s: %w", dst, err)
	}
	return nil
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// openAt opens name in dirFD for reading: a directory with O_DIRECTORY in
// flags, else a regular file — not a symlink to follow, nor a FIFO or device
// to block on (O_NONBLOCK keeps the open itself from blocking; a FIFO made an
// os.File would still wait for a writer's data).
func openAt(dirFD int, name string, flags int) (*os.File, error) {
	fd, err := unix.Openat(dirFD, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC|flags, 0)
	if err != nil {
		return nil, err
	}
	want := uint32(unix.S_IFREG)
	if flags&unix.O_DIRECTORY != 0 {
		want = unix.S_IFDIR
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != want {
		unix.Close(fd)
		return nil, fmt.Errorf("%s: not a regular file or directory", name)
	}
	// Blocking again: a regular file or directory never waits, and os.File
	// then reads it directly instead of through the poller.
	unix.SetNonblock(fd, false)
	return os.NewFile(uintptr(fd), name), nil
}
