//go:build !unix

package beneath

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Root is a directory at or beneath a project root, held open: every
// operation of its methods names an entry of it (or, for OpenDir and
// MakeDir, a path beneath it). Here (no openat2, no O_NOFOLLOW) it works
// through an os.Root, which never leaves the root; an entry met on the way
// that is a symlink is refused or replaced, as on Unix, though a command
// swapping one in at the same time may still redirect an operation to
// another place inside the root.
type Root struct {
	top  *os.Root
	own  bool
	rel  string // beneath top, slash-separated; "." for top
	name string
}

// OpenRoot opens the directory path.
func OpenRoot(path string) (*Root, error) {
	r, err := os.OpenRoot(path)
	if err != nil {
		return nil, err
	}
	return &Root{top: r, own: true, rel: ".", name: path}, nil
}

// Close lets the directory go.
func (r *Root) Close() error {
	if r.own {
		return r.top.Close()
	}
	return nil
}

// EnterOwnDirs does nothing here: no Unix modes to lack u+rwx.
func (r *Root) EnterOwnDirs() {}

// Name is the path the directory was opened by (for messages only).
func (r *Root) Name() string { return r.name }

func (r *Root) at(name string) string {
	return filepath.FromSlash(filepath.ToSlash(filepath.Join(r.rel, name)))
}

// OpenDir opens rel, an existing directory beneath r; a symlink on the way
// is an error.
func (r *Root) OpenDir(rel string) (*Root, error) {
	rel = filepath.ToSlash(filepath.Clean(rel))
	if rel == "." {
		return &Root{top: r.top, rel: r.rel, name: r.name}, nil
	}
	if !filepath.IsLocal(rel) {
		return nil, &fs.PathError{Op: "open", Path: rel, Err: errors.New("not beneath the directory")}
	}
	cur := r.rel
	for _, part := range strings.Split(rel, "/") {
		cur = filepath.Join(cur, part)
		fi, err := r.top.Lstat(cur)
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			return nil, &fs.PathError{Op: "open", Path: cur, Err: errors.New("not a directory")}
		}
	}
	return &Root{top: r.top, rel: cur, name: filepath.Join(r.name, rel)}, nil
}

// MakeDir opens rel beneath r, making the directories missing on the way
// and replacing what is there that is not one (a file, a symlink).
func (r *Root) MakeDir(rel string, perm fs.FileMode) (*Root, error) {
	rel = filepath.ToSlash(filepath.Clean(rel))
	if rel == "." {
		return r.OpenDir(".")
	}
	if !filepath.IsLocal(rel) {
		return nil, &fs.PathError{Op: "mkdir", Path: rel, Err: errors.New("not beneath the directory")}
	}
	cur := r.rel
	for _, part := range strings.Split(rel, "/") {
		cur = filepath.Join(cur, part)
		fi, err := r.top.Lstat(cur)
		switch {
		case err == nil && fi.IsDir():
			continue
		case err == nil:
			if err := r.top.Remove(cur); err != nil {
				return nil, err
			}
		case !errors.Is(err, fs.ErrNotExist):
			return nil, err
		}
		if err := r.top.Mkdir(cur, perm); err != nil {
			return nil, err
		}
	}
	return &Root{top: r.top, rel: cur, name: filepath.Join(r.name, rel)}, nil
}

// Lstat describes the entry name of r, not following a symlink.
func (r *Root) Lstat(name string) (Stat, error) {
	fi, err := r.top.Lstat(r.at(name))
	if err != nil {
		return Stat{}, err
	}
	return Stat{Mode: fi.Mode(), Size: fi.Size(), Links: 1, ModTime: fi.ModTime()}, nil
}

// Remove removes the entry name of r (an empty directory included).
func (r *Root) Remove(name string) error { return r.top.Remove(r.at(name)) }

// RemoveDir removes name of r if it is an empty directory.
func (r *Root) RemoveDir(name string) error {
	if fi, err := r.top.Lstat(r.at(name)); err != nil {
		return err
	} else if !fi.IsDir() {
		return &fs.PathError{Op: "rmdir", Path: name, Err: errors.New("not a directory")}
	}
	return r.top.Remove(r.at(name))
}

// RemoveAll removes name of r and everything beneath it.
func (r *Root) RemoveAll(name string) error { return r.top.RemoveAll(r.at(name)) }

// Mkdir makes the directory name of r.
func (r *Root) Mkdir(name string, perm fs.FileMode) error { return r.top.Mkdir(r.at(name), perm) }

// Create makes the new file name of r for writing.
func (r *Root) Create(name string, perm fs.FileMode) (*os.File, error) {
	return r.top.OpenFile(r.at(name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
}

// OpenWrite opens the regular file name of r, there already, for writing.
func (r *Root) OpenWrite(name string) (*os.File, error) {
	if fi, err := r.top.Lstat(r.at(name)); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "open", Path: name, Err: errors.New("not a regular file")}
	}
	return r.top.OpenFile(r.at(name), os.O_WRONLY, 0)
}

// OpenFile opens the regular file name of r for reading.
func (r *Root) OpenFile(name string) (*os.File, error) {
	if fi, err := r.top.Lstat(r.at(name)); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "open", Path: name, Err: errors.New("not a regular file")}
	}
	return r.top.Open(r.at(name))
}

// Symlink makes name of r a symlink to target.
func (r *Root) Symlink(target, name string) error { return r.top.Symlink(target, r.at(name)) }

// LinkFile is not done here: no inode numbers to check the link by.
func (r *Root) LinkFile(f *os.File, name string) error {
	return &os.LinkError{Op: "link", Old: f.Name(), New: name, Err: errors.ErrUnsupported}
}

// Link is not done here: no inode numbers to check the link by.
func (r *Root) Link(f *os.File, name string, to *Root, toName string) error {
	return &os.LinkError{Op: "link", Old: name, New: toName, Err: errors.ErrUnsupported}
}

// Rename moves the entry name of r to toName of to (both of one root).
func (r *Root) Rename(name string, to *Root, toName string) error {
	if to.top != r.top {
		return &os.LinkError{Op: "rename", Old: name, New: toName, Err: errors.New("not in one root")}
	}
	return r.top.Rename(r.at(name), to.at(toName))
}

// Chmod sets the permission bits of name of r, a regular file.
func (r *Root) Chmod(name string, perm fs.FileMode) error {
	if fi, err := r.top.Lstat(r.at(name)); err != nil {
		return err
	} else if !fi.Mode().IsRegular() {
		return &fs.PathError{Op: "chmod", Path: name, Err: errors.New("not a regular file")}
	}
	return r.top.Chmod(r.at(name), perm)
}

// Chtimes sets the times of name of r.
func (r *Root) Chtimes(name string, atime, mtime time.Time) error {
	return r.top.Chtimes(r.at(name), atime, mtime)
}
