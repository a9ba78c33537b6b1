package sandbox

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// mounter builds the session's view of the filesystem in its mount namespace.
type mounter struct {
	spec   *Spec
	masked []string // mount points whose host content is hidden (tmpfs over them)
	keep   []kept   // paths to show again inside masked ones

	mu        sync.Mutex
	ready     bool            // the mount namespace is the session's own
	protected map[string]bool // protected paths made read-only
	pinned    map[string]bool // directories made mount points
	moves     int             // paths quarantined
}

// kept is a host path opened before the masks went up, to be bound back at the
// same place: the project root under /tmp, the spill dir, …
type kept struct {
	path     string
	fd       int
	readOnly bool
}

func newMounter(spec *Spec) *mounter {
	m := &mounter{spec: spec, protected: map[string]bool{}, pinned: map[string]bool{}}
	add := func(p string, ro bool) {
		fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err == nil {
			m.keep = append(m.keep, kept{p, fd, ro})
		}
	}
	for _, p := range spec.Writable {
		add(p, false)
	}
	for _, p := range spec.Visible {
		add(p, true)
	}
	return m
}

func (m *mounter) closeFDs() {
	for _, k := range m.keep {
		unix.Close(k.fd)
	}
	m.keep = nil
}

// private stops mount events from travelling between the session and the host.
func (m *mounter) private() error {
	err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, "")
	m.ready = err == nil
	return err
}

// tmpfs mounts an empty tmpfs at dir and records it as masked.
func (m *mounter) tmpfs(dir, opts string) error {
	if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
		return fmt.Errorf("tmpfs on %s: %w", dir, err)
	}
	m.masked = append(m.masked, dir)
	return nil
}

// maskTemp gives the session its own /tmp and /dev/shm, so the host's — and the
// sockets of the daemons there (tmux, X11, ssh-agent) — are out of reach.
func (m *mounter) maskTemp() error {
	for _, w := range m.spec.Writable {
		if under("/tmp", w) {
			return fmt.Errorf("/tmp is inside writable path %s", w)
		}
	}
	size := m.spec.TmpSize
	if size <= 0 {
		size = DefaultTmpSize
	}
	if err := m.tmpfs("/tmp", "mode=1777,size="+strconv.FormatInt(size, 10)); err != nil {
		return err
	}
	if t := m.spec.TempDir; t != "" && t != "/tmp" && under(t, "/tmp") {
		if err := os.MkdirAll(t, 0o777); err != nil {
			return err
		}
		os.Chmod(t, 0o1777)
	}
	if isDir("/dev/shm") {
		return m.tmpfs("/dev/shm", "mode=1777,size="+strconv.FormatInt(size, 10))
	}
	return nil
}

// maskDaemons hides the host's daemon sockets under /run: all of /run with the
// network off (the Docker and D-Bus sockets, the user's runtime dir, database
// sockets), the user's runtime dir and the container and bus sockets with it on.
func (m *mounter) maskDaemons() error {
	dirs := []string{"/run"}
	if m.spec.Network {
		dirs = []string{"/run/user", "/run/dbus", "/run/containerd", "/run/podman", "/run/docker"}
	}
	if fi, err := os.Lstat("/var/run"); err == nil && fi.IsDir() {
		dirs = append(dirs, "/var/run") // a directory of its own, not the usual link to /run
	}
	var errs []error
	for _, d := range dirs {
		if isDir(d) {
			errs = append(errs, m.tmpfs(d, "mode=755,size=1m"))
		}
	}
	for _, sock := range []string{"/run/docker.sock", "/var/run/docker.sock"} {
		if fi, err := os.Stat(sock); err == nil && fi.Mode()&os.ModeSocket != 0 {
			errs = append(errs, bindReadOnly(os.DevNull, sock))
		}
	}
	return errors.Join(errs...)
}

// reexpose binds the kept paths back where the masks hid them.
func (m *mounter) reexpose() error {
	var errs []error
	for _, k := range m.keep {
		if !m.isMasked(k.path) {
			continue
		}
		if err := makeMountPoint(k.path, k.fd); err != nil {
			errs = append(errs, err)
			continue
		}
		src := "/proc/self/fd/" + strconv.Itoa(k.fd)
		if err := unix.Mount(src, k.path, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			errs = append(errs, fmt.Errorf("bind %s: %w", k.path, err))
			continue
		}
		if k.readOnly {
			errs = append(errs, remountReadOnly(k.path))
		}
	}
	return errors.Join(errs...)
}

func (m *mounter) isMasked(p string) bool {
	for _, d := range m.masked {
		if under(p, d) {
			return true
		}
	}
	return false
}

// makeMountPoint creates, inside a mask, an empty directory or file at path for
// the kept path fd to be bound on.
func makeMountPoint(path string, fd int) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		return os.MkdirAll(path, 0o755)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	return f.Close()
}

// hide makes each existing secret read as empty: an empty read-only tmpfs over a
// directory, the null device over a file. It returns how many it hid.
func (m *mounter) hide() (int, error) {
	n := 0
	var errs []error
	for _, p := range m.spec.Hidden {
		fi, err := os.Stat(p)
		if err != nil {
			continue // absent, or already out of sight under a mask
		}
		if fi.IsDir() {
			err = unix.Mount("tmpfs", p, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC|unix.MS_RDONLY, "mode=700,size=4k")
		} else {
			err = bindReadOnly(os.DevNull, p)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", p, err))
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}

// protect makes the protected paths that exist read-only, however they are
// reached: a bind mount covers the file itself, not one name of it. The
// directories between a writable path and a protected one (.git for
// .git/hooks) become mount points too, still writable: a mount point cannot be
// renamed or removed, so `mv .git g && mkdir -p .git/hooks` cannot put a
// fresh, writable hooks directory where git will look.
//
// It runs when the session starts and again around every command, so that a
// protected path that appears later (`git init` makes .git/hooks) is read-only
// from then on; it returns the paths it protected this time. With moveAside,
// those of them that Spec.Quarantine takes are moved there instead, each into
// a read-only directory of its own, and returned as moved ("path → where").
func (m *mounter) protect(moveAside bool) (now, moved []string, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.ready {
		return nil, nil, nil
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
	// Moves first: a directory pinned for one path (.git) would keep another
	// (.git/config) from being renamed out of it.
	for _, p := range m.spec.Protected {
		if _, err := os.Lstat(p); err != nil || m.protected[p] || !moveAside || m.spec.Quarantine == "" {
			continue
		}
		if !slices.Contains(m.spec.InPlace, p) || runsCode(p) {
			if to, err := m.quarantine(p); err == nil {
				moved = append(moved, p+" → "+to)
			} else {
				errs = append(errs, err) // protected where it is, then
			}
		}
	}
	for _, p := range m.spec.Protected {
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
	return now, moved, errors.Join(errs...)
}

// quarantine moves p, in the root, into a new directory of Spec.Quarantine and
// makes that directory read-only: nothing can change what is in it, move it
// back or remove it from the session. Every step resolves beneath the root
// without symlinks, so a command cannot make the helper move p elsewhere.
func (m *mounter) quarantine(p string) (string, error) {
	if len(m.spec.Writable) == 0 {
		return "", fmt.Errorf("quarantine %s: no project root", p)
	}
	root := m.spec.Writable[0]
	rel, err := filepath.Rel(root, p)
	qrel, qerr := filepath.Rel(root, m.spec.Quarantine)
	if err != nil || qerr != nil || !filepath.IsLocal(rel) || !filepath.IsLocal(qrel) {
		return "", fmt.Errorf("quarantine %s: not in the root", p)
	}
	rootFD, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", err
	}
	defer unix.Close(rootFD)
	beneath := func(rel string) (int, error) {
		return unix.Openat2(rootFD, rel, &unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS})
	}
	if err := unix.Mkdirat(rootFD, qrel, 0o755); err != nil && err != unix.EEXIST {
		return "", fmt.Errorf("quarantine: %w", err)
	}
	qFD, err := beneath(qrel)
	if err != nil {
		return "", fmt.Errorf("quarantine %s: %w", m.spec.Quarantine, err)
	}
	defer unix.Close(qFD)
	m.moves++
	item := fmt.Sprintf("%s-%d-%d", time.Now().Format("20060102-150405"), os.Getpid(), m.moves)
	if err := unix.Mkdirat(qFD, item, 0o755); err != nil {
		return "", fmt.Errorf("quarantine: %w", err)
	}
	// The directories leading to p inside the item keep its relative path.
	to := filepath.Join(qrel, item, rel)
	if dir := filepath.Dir(rel); dir != "." {
		if err := os.MkdirAll(filepath.Join(m.spec.Quarantine, item, dir), 0o755); err != nil {
			return "", err
		}
	}
	fromFD, err := beneath(filepath.Dir(rel))
	if err != nil {
		return "", fmt.Errorf("quarantine %s: %w", p, err)
	}
	defer unix.Close(fromFD)
	toFD, err := beneath(filepath.Dir(to))
	if err != nil {
		return "", fmt.Errorf("quarantine %s: %w", p, err)
	}
	defer unix.Close(toFD)
	if err := unix.Renameat(fromFD, filepath.Base(rel), toFD, filepath.Base(rel)); err == unix.EXDEV {
		// p is in a directory pinned earlier (.git): copied, then removed.
		if err := copyTree(p, filepath.Join(m.spec.Quarantine, item, rel)); err != nil {
			return "", fmt.Errorf("quarantine %s: %w", p, err)
		}
		if err := os.RemoveAll(p); err != nil {
			return "", fmt.Errorf("quarantine %s: copied, but not removed: %w", p, err)
		}
	} else if err != nil {
		return "", fmt.Errorf("quarantine %s: %w", p, err)
	}
	if err := m.bind(filepath.Join(m.spec.Quarantine, item), true, true); err != nil {
		return "", fmt.Errorf("quarantine %s: moved, but not made read-only: %w", p, err)
	}
	return to, nil
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
	tree, err := unix.OpenTree(fd, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_EMPTY_PATH|unix.AT_RECURSIVE)
	if err == unix.ENOSYS && resolve { // before Linux 5.2; no mounts on symlinks
		if readOnly {
			return bindReadOnly(real, real)
		}
		return unix.Mount(real, real, "", unix.MS_BIND|unix.MS_REC, "")
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer unix.Close(tree)
	if readOnly {
		attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
		if err := unix.MountSetattr(tree, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &attr); err != nil {
			return fmt.Errorf("read-only %s: %w", path, err)
		}
	}
	if err := unix.MoveMount(tree, "", fd, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH); err != nil {
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

// proc mounts a /proc of the session's PID namespace: commands see the
// session's processes only, and not shellgate's environment.
func (m *mounter) proc() error {
	return unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "")
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

// copyTree copies the file, symlink or directory tree at from to to, not
// following symlinks.
func copyTree(from, to string) error {
	return filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		switch {
		case d.IsDir():
			return os.Mkdir(dst, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, dst)
		case d.Type().IsRegular():
			src, err := os.OpenFile(p, os.O_RDONLY|unix.O_NOFOLLOW, 0)
			if err != nil {
				return err
			}
			defer src.Close()
			out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
			if err != nil {
				return err
			}
			_, err = io.Copy(out, src)
			return errors.Join(err, out.Close())
		}
		return nil // devices, fifos, sockets: not worth keeping
	})
}
