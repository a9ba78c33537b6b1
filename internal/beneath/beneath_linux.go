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
	rootFD, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", err
	}
	defer unix.Close(rootFD)
	fromFD, err := Dir(rootFD, filepath.Dir(rel))
	if err != nil {
		return "", fmt.Errorf("quarantine %s: %w", p, err)
	}
	defer unix.Close(fromFD)
	name := filepath.Base(rel)
	if to, err := intoQuarantine(root, into, rootFD, fromFD, rel); err == nil {
		return to, nil
	}
	aside := protect.QuarantinedPrefix + name + "-" + RandomName()
	if err := unix.Renameat(fromFD, name, fromFD, aside); err != nil {
		return "", fmt.Errorf("quarantine %s: %w", p, err)
	}
	to := filepath.Join(filepath.Dir(rel), aside)
	unlinkOthers(fromFD, aside)
	if err := Bind(fromFD, aside, true); err != nil {
		return to, fmt.Errorf("quarantine %s: moved to %s, but not made read-only: %w", p, to, err)
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
	var removed []string
	if rootFD, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err == nil {
		for _, rel := range append([]string{".git"}, nested...) {
			if gitFD, err := Dir(rootFD, rel); err == nil {
				removed = sweepGitDir(gitFD, rel+"/", removed)
				unix.Close(gitFD)
			}
		}
		unix.Close(rootFD)
	}
	for _, d := range gitDirs {
		if fd, err := unix.Open(d, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0); err == nil {
			removed = sweepGitDir(fd, d+"/", removed)
			unix.Close(fd)
		}
	}
	return removed
}

// sweepGitDir removes the symlinks under dirFD (named label… in the notes)
// and copies its files that have other names, but in a top-level objects
// directory (git links objects, `clone --local`, and never writes one in
// place) and, for hard links, in a submodule's, within maxGitDepth.
func sweepGitDir(dirFD int, label string, removed []string) []string {
	var walk func(dirFD int, rel string, depth int, objects bool)
	sweep := func(dir *os.File, e os.DirEntry, rel string, depth int, objects bool) {
		name, fd := e.Name(), int(dir.Fd())
		switch {
		case e.Type()&os.ModeSymlink != 0:
			target, _ := Readlink(fd, name)
			if unix.Unlinkat(fd, name, 0) == nil {
				removed = append(removed, fmt.Sprintf("removed the symlink %s%s%s (to %s), which git writes through", label, rel, name, target))
			}
		case e.Type()&os.ModeNamedPipe != 0:
			// Git opens its files there to write them: a FIFO in place of
			// logs/HEAD or COMMIT_EDITMSG hangs the user's next commit.
			if unix.Unlinkat(fd, name, 0) == nil {
				removed = append(removed, fmt.Sprintf("removed the FIFO %s%s%s, which would hang git", label, rel, name))
			}
		case e.Type().IsRegular() && !objects:
			var st unix.Stat_t
			if unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG &&
				st.Nlink > 1 && copyOver(fd, name, &st) == nil {
				removed = append(removed, fmt.Sprintf("copied %s%s%s, a hard link git would write through to its %d other names", label, rel, name, st.Nlink-1))
			}
		case e.IsDir() && depth < maxGitDepth && !(depth == 0 && name == "objects"):
			if sub, err := Dir(fd, name); err == nil {
				walk(sub, rel+name+"/", depth+1, objects || submoduleObjects(rel, name))
				unix.Close(sub)
			}
		}
	}
	walk = func(dirFD int, rel string, depth int, objects bool) {
		f, err := Open(dirFD, ".", unix.O_DIRECTORY)
		if err != nil {
			return
		}
		defer f.Close()
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
