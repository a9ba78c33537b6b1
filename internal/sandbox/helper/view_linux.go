package helper

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/shellgate/shellgate/internal/cachestore"
	"golang.org/x/sys/unix"
)

// The executor of a plan (see Plan). In the session's mount namespace it
// moves the host's tree aside (to hostDir, on a small staging tmpfs, as
// bubblewrap does), builds the view on an empty tmpfs at newDir from the
// steps, makes that tmpfs read-only and the session's root, and lets go of
// the host's tree: what no step showed is not reachable by any path, /proc
// and /dev/fd included.
const (
	hostDir = "/host"
	newDir  = "/new"
)

// buildView applies steps and makes the result the root. It returns the
// steps that failed, each with why; an error is a view that could not be
// built at all (the namespace still sees the host).
func buildView(steps []Step) (failed []string, err error) {
	if err := unix.Mount("tmpfs", "/tmp", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0700,size=64k"); err != nil {
		return nil, fmt.Errorf("staging tmpfs: %w", err)
	}
	for _, d := range []string{"/tmp" + hostDir, "/tmp" + newDir} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return nil, err
		}
	}
	if err := pivotInto("/tmp", "/tmp"+hostDir); err != nil {
		return nil, fmt.Errorf("pivot to the staging tmpfs: %w", err)
	}
	// From here on the namespace's root is the staging tmpfs: a view that
	// cannot be finished leaves nothing a command could run in.
	if err := unix.Mount("tmpfs", newDir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755,size=1m"); err != nil {
		return nil, &halfBuilt{fmt.Errorf("root tmpfs: %w", err)}
	}
	for _, s := range steps {
		if err := applyStep(s); err != nil {
			// A mask out of reach (beneath a directory shown as others see
			// it, which others may not enter) is out of the commands' too.
			if s.Try && (errors.Is(err, os.ErrNotExist) || s.Op == OpMask && errors.Is(err, os.ErrPermission)) {
				continue
			}
			failed = append(failed, fmt.Sprintf("%s %s: %v", s.Op, s.Path, err))
		}
	}
	if err := setAttr(newDir, unix.MOUNT_ATTR_RDONLY, false); err != nil {
		failed = append(failed, fmt.Sprintf("read-only root: %v", err))
	}
	if err := pivotInto(newDir, ""); err != nil {
		return failed, &halfBuilt{fmt.Errorf("pivot to the view: %w", err)}
	}
	return failed, nil
}

// halfBuilt is a view that failed once the host was moved aside: the
// session cannot go on (its root is the staging tmpfs), unlike a view that
// failed before, where the namespace still sees the host as it was.
type halfBuilt struct{ err error }

func (h *halfBuilt) Error() string { return "the view was left half built: " + h.err.Error() }
func (h *halfBuilt) Unwrap() error { return h.err }

// pivotInto makes dir the root. With old, the old root stays at old;
// without, it is detached (pivot_root(".", ".") stacks it on the new one).
func pivotInto(dir, old string) error {
	if err := unix.Chdir(dir); err != nil {
		return err
	}
	if old != "" {
		if err := unix.PivotRoot(".", strings.TrimPrefix(old, dir+"/")); err != nil {
			return err
		}
		return unix.Chdir("/")
	}
	if err := unix.PivotRoot(".", "."); err != nil {
		return err
	}
	if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
		return err
	}
	return unix.Chdir("/")
}

// applyStep applies one step under newDir, its sources under hostDir.
func applyStep(s Step) error {
	dst := newDir + s.Path
	src := hostDir + s.Src
	switch s.Op {
	case OpTmpfs:
		if err := mkdirs(dst, 0o755); err != nil {
			return err
		}
		mode := s.Mode
		if mode == 0 {
			mode = 0o755
		}
		flags := uintptr(unix.MS_NOSUID | unix.MS_NODEV)
		if !s.Write {
			flags |= unix.MS_NOEXEC
		}
		opts := fmt.Sprintf("mode=%o,size=%d", mode, max(s.Size, 4096))
		return unix.Mount("tmpfs", dst, "tmpfs", flags, opts)
	case OpBind:
		if s.AsOthers { // made read-only, nosuid and nodev by shellgate
			if s.tree == nil {
				return errors.New("no tree handed for it")
			}
			defer s.tree.Close()
			if err := mountPoint(dst, true); err != nil {
				return err
			}
			return unix.MoveMount(int(s.tree.Fd()), "", unix.AT_FDCWD, dst, unix.MOVE_MOUNT_F_EMPTY_PATH)
		}
		attr := uint64(unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV)
		if !s.Write {
			attr |= unix.MOUNT_ATTR_RDONLY
		}
		if strings.HasPrefix(s.Path, "/dev/") {
			attr &^= unix.MOUNT_ATTR_NODEV
		}
		return bindTree(src, dst, attr)
	case OpOverlay:
		return overlay(s, dst, src)
	case OpSymlink:
		if err := mkdirs(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.Symlink(s.Src, dst)
	case OpFile:
		if err := mkdirs(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := writeNew(dst, s.Data); err != nil {
			return err
		}
		return bindTree(dst, dst, unix.MOUNT_ATTR_RDONLY|unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV)
	case OpDevpts:
		if err := mkdirs(dst, 0o755); err != nil {
			return err
		}
		return unix.Mount("devpts", dst, "devpts", unix.MS_NOSUID|unix.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620")
	case OpProc:
		if err := mkdirs(dst, 0o555); err != nil {
			return err
		}
		return unix.Mount("proc", dst, "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "")
	case OpMask:
		var st unix.Stat_t
		if err := unix.Lstat(dst, &st); err != nil {
			return err
		}
		if st.Mode&unix.S_IFMT == unix.S_IFDIR {
			return unix.Mount("tmpfs", dst, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC|unix.MS_RDONLY, "mode=700,size=4k")
		}
		return bindTree(hostDir+"/dev/null", dst, unix.MOUNT_ATTR_RDONLY|unix.MOUNT_ATTR_NOSUID)
	case OpReadOnly:
		return setAttr(dst, unix.MOUNT_ATTR_RDONLY, false)
	}
	return fmt.Errorf("unknown step %q", s.Op)
}

// bindTree binds src, and every mount beneath it, at dst with attr set on all
// of them: a read-only bind of /usr leaves nothing under it writable. The
// mount point is made first, a directory or a file as src is.
func bindTree(src, dst string, attr uint64) error {
	tree, err := unix.OpenTree(unix.AT_FDCWD, src, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE)
	if err != nil {
		return err
	}
	defer unix.Close(tree)
	var st unix.Stat_t
	if err := unix.Fstat(tree, &st); err != nil {
		return err
	}
	if err := mountPoint(dst, st.Mode&unix.S_IFMT == unix.S_IFDIR); err != nil {
		return err
	}
	if attr != 0 {
		a := unix.MountAttr{Attr_set: attr}
		if err := unix.MountSetattr(tree, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &a); err != nil {
			return err
		}
	}
	return unix.MoveMount(tree, "", unix.AT_FDCWD, dst, unix.MOVE_MOUNT_F_EMPTY_PATH)
}

// mountPoint makes an empty directory or file at path if nothing is there.
func mountPoint(path string, dir bool) error {
	if dir {
		return mkdirs(path, 0o755)
	}
	if err := mkdirs(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o644)
	switch err {
	case nil:
		return unix.Close(fd)
	case unix.EEXIST:
		return nil
	}
	return &os.PathError{Op: "open", Path: path, Err: err}
}

// mkdirs makes dir, and its parents that are missing, with mode (as
// os.MkdirAll does, without its checks): what is there already is left to
// the mount or the call that follows, which fails on what is not a
// directory. The view is built on a tmpfs of its own, where a step's
// parents are mostly there already or known absent, and its mount points
// are made by system calls alone: os.MkdirAll's stats of every level, and
// os.OpenFile's fcntls and poller registration, were more than half of the
// ~760 calls of a session's view (strace, session 35).
func mkdirs(dir string, mode uint32) error {
	err := unix.Mkdir(dir, mode)
	if err == unix.ENOENT {
		if parent := filepath.Dir(dir); parent != dir {
			if err := mkdirs(parent, mode); err != nil {
				return err
			}
			err = unix.Mkdir(dir, mode)
		}
	}
	if err == nil || err == unix.EEXIST {
		return nil
	}
	return &os.PathError{Op: "mkdir", Path: dir, Err: err}
}

// writeNew writes data to the new file at path, mode 0644.
func writeNew(path string, data []byte) error {
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return &os.PathError{Op: "open", Path: path, Err: err}
	}
	for len(data) > 0 {
		var n int
		if n, err = unix.Write(fd, data); err != nil {
			break
		}
		data = data[n:]
	}
	if cerr := unix.Close(fd); err == nil {
		err = cerr
	}
	if err != nil {
		return &os.PathError{Op: "write", Path: path, Err: err}
	}
	return nil
}

// setAttr sets attr on the mount at path (and those beneath it if recursive).
func setAttr(path string, attr uint64, recursive bool) error {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC|unix.O_DIRECTORY, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	flags := unix.AT_EMPTY_PATH
	if recursive {
		flags |= unix.AT_RECURSIVE
	}
	a := unix.MountAttr{Attr_set: attr}
	return unix.MountSetattr(fd, "", uint(flags), &a)
}

// overlay mounts the host's cache src with a writable layer of the project's
// own on top (s.Upper on the host), so that a command's writes never reach a
// file a host program reads or runs later. Where the host has no such cache,
// or the kernel refuses (no overlayfs in a user namespace before Linux 5.11),
// the project's layer alone is bound: a cache of its own, kept between
// sessions, and the host's still untouched.
//
// The overlay is volatile where the kernel can (Linux 5.10): unmounting a
// plain one syncs the whole filesystem under its upper layer, which the
// helper's exit waited for (30–100 ms on a busy machine, most of a
// sandboxed call's exit on EOF). A cache loses nothing by it but after a
// crash (see cachestore.ReadyLayer).
func overlay(s Step, dst, src string) error {
	layer := hostDir + s.Upper
	upper, work := layer+"/upper", layer+"/work"
	volatile, err := cachestore.ReadyLayer(layer, bootID())
	if err != nil {
		return err
	}
	// The mount would remove the work/work the layer's last mount left and
	// make it again: freeing its block, which ext4 mounted with discard
	// discards at once, waited for the disk's queue (0.3-10 ms a cache, the
	// most behind others' writes). The last work dir is set aside instead
	// (cachestore.StaleWork), for shellgate to remove beside the session;
	// where one is still aside, the kernel removes this one as before. No
	// other session's mount uses it: each holds a set of layers of its own
	// (cachestore.ClaimLayers).
	var st unix.Stat_t
	if unix.Lstat(work+"/work", &st) == nil {
		_ = unix.Renameat2(unix.AT_FDCWD, work, unix.AT_FDCWD, layer+cachestore.StaleWork, unix.RENAME_NOREPLACE)
	}
	for _, d := range []string{upper, work} {
		if err := mkdirs(d, 0o700); err != nil {
			return err
		}
	}
	if err := mkdirs(dst, 0o755); err != nil {
		return err
	}
	if s.Src != "" && unix.Stat(src, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR {
		opts := "lowerdir=" + escapeOverlay(src) + ",upperdir=" + escapeOverlay(upper) + ",workdir=" + escapeOverlay(work) + ",userxattr"
		tries := []string{opts}
		if volatile {
			tries = []string{opts + ",volatile", opts}
		}
		for _, o := range tries {
			if unix.Mount("overlay", dst, "overlay", unix.MS_NOSUID|unix.MS_NODEV, o) == nil {
				// The mount's marker (see ReadyLayer) is left to shellgate,
				// which removes it while the session runs (sandbox's
				// removeMarkers): on a filesystem that discards the blocks
				// it frees at once, each rmdir waits for the disk.
				return nil
			}
		}
	}
	return bindTree(upper, dst, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV)
}

// bootID is the host's boot ID, read once for all the session's cache
// layers (17 reads of it were ~0.2 ms of a session's set-up).
var bootID = sync.OnceValue(func() []byte {
	boot, _ := os.ReadFile(hostDir + "/proc/sys/kernel/random/boot_id")
	return boot
})

// escapeOverlay escapes the characters overlayfs's options give a meaning.
func escapeOverlay(p string) string {
	return strings.NewReplacer(`\`, `\\`, `,`, `\,`, `:`, `\:`).Replace(p)
}
