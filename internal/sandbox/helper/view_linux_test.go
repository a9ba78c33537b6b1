package helper

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// The view's mount points are made by system calls alone (mkdirs,
// mountPoint): a directory or an empty file with the parents that are
// missing, what is there already left as it is for the mount that
// follows to take or refuse, and a parent that is no directory an error.
func TestMountPoints(t *testing.T) {
	type check func(t *testing.T, root, p string, err error)
	isDir := func(t *testing.T, p string) {
		t.Helper()
		if fi, err := os.Lstat(p); err != nil || !fi.IsDir() {
			t.Errorf("%s: not a directory (%v)", p, err)
		}
	}
	holds := func(data string) check {
		return func(t *testing.T, root, p string, err error) {
			if err != nil {
				t.Fatal(err)
			}
			if b, err := os.ReadFile(p); err != nil || string(b) != data {
				t.Errorf("%s holds %q (%v), want %q", p, b, err, data)
			}
		}
	}
	for _, tc := range []struct {
		name  string
		setup func(root string) // what is there before
		path  string
		dir   bool
		want  check
	}{
		{name: "a directory and its missing parents", path: "a/b/c", dir: true, want: func(t *testing.T, root, p string, err error) {
			if err != nil {
				t.Fatal(err)
			}
			isDir(t, filepath.Join(root, "a"))
			isDir(t, filepath.Join(root, "a/b"))
			isDir(t, p)
		}},
		{name: "an empty file and its missing parents", path: "dev/x/null", want: func(t *testing.T, root, p string, err error) {
			holds("")(t, root, p, err)
			isDir(t, filepath.Join(root, "dev/x"))
		}},
		{name: "a directory already there", setup: func(root string) { os.MkdirAll(filepath.Join(root, "d/e"), 0o700) }, path: "d/e", dir: true, want: func(t *testing.T, root, p string, err error) {
			if err != nil {
				t.Fatal(err)
			}
			if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o700 {
				t.Errorf("its mode became %v", fi.Mode().Perm())
			}
		}},
		{name: "a file already there is not emptied", setup: func(root string) { os.WriteFile(filepath.Join(root, "f"), []byte("kept"), 0o644) }, path: "f", want: holds("kept")},
		{name: "a file where a directory is asked is left to the mount", setup: func(root string) { os.WriteFile(filepath.Join(root, "f"), []byte("kept"), 0o644) }, path: "f", dir: true, want: holds("kept")},
		{name: "a file as a parent", setup: func(root string) { os.WriteFile(filepath.Join(root, "f"), nil, 0o644) }, path: "f/g", dir: true, want: func(t *testing.T, root, p string, err error) {
			if !errors.Is(err, syscall.ENOTDIR) {
				t.Errorf("got %v, want ENOTDIR", err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			if tc.setup != nil {
				tc.setup(root)
			}
			p := filepath.Join(root, tc.path)
			tc.want(t, root, p, mountPoint(p, tc.dir))
		})
	}
}

// An OpFile step's file holds its data whole, made anew or over one there.
func TestWriteNew(t *testing.T) {
	p := filepath.Join(t.TempDir(), "gitconfig")
	for _, data := range []string{"[user]\n\tname = a long enough name\n", "short"} {
		if err := writeNew(p, []byte(data)); err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(p); err != nil || string(b) != data {
			t.Errorf("holds %q (%v), want %q", b, err, data)
		}
	}
}
