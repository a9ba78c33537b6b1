//go:build unix

package beneath

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// Root's operations resolve no symlink beneath it: OpenDir refuses one on
// the way, MakeDir replaces it (and a file) by a directory, RemoveAll
// removes a link and never what it points to, Chmod and Create refuse a
// link, and ".." or an absolute path never leaves.
func TestRootNoSymlinks(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	must(t, os.WriteFile(filepath.Join(outside, "f"), []byte("mine"), 0o600))
	must(t, os.MkdirAll(filepath.Join(dir, "a/b"), 0o755))
	must(t, os.Symlink(outside, filepath.Join(dir, "a/link")))
	must(t, os.Symlink(filepath.Join(outside, "f"), filepath.Join(dir, "a/flink")))
	must(t, os.WriteFile(filepath.Join(dir, "a/file"), []byte("x"), 0o644))
	r, err := OpenRoot(dir)
	must(t, err)
	defer r.Close()
	for _, rel := range []string{"a/link", "a/link/x", "..", "a/../..", "/etc", "a/file"} {
		if d, err := r.OpenDir(rel); err == nil {
			d.Close()
			t.Errorf("OpenDir(%q) opened it", rel)
		}
	}
	if _, err := r.MakeDir("../x", 0o755); err == nil {
		t.Errorf("MakeDir(../x) made it")
	}
	a, err := r.OpenDir("a")
	must(t, err)
	defer a.Close()
	if err := a.Chmod("flink", 0o644); err == nil {
		t.Errorf("Chmod through a symlink")
	}
	if f, err := a.Create("flink", 0o644); err == nil || !errors.Is(err, fs.ErrExist) {
		t.Errorf("Create over a symlink: %v", err)
		if f != nil {
			f.Close()
		}
	}
	for _, rel := range []string{"a/link/sub", "a/file/sub"} {
		d, err := r.MakeDir(rel, 0o755)
		if err != nil {
			t.Fatalf("MakeDir(%q): %v", rel, err)
		}
		d.Close()
		if fi, err := os.Lstat(filepath.Join(dir, filepath.Dir(rel))); err != nil || !fi.IsDir() {
			t.Errorf("MakeDir(%q) left %s not a directory: %v", rel, filepath.Dir(rel), err)
		}
	}
	must(t, os.Symlink(outside, filepath.Join(dir, "a/b/out")))
	must(t, r.RemoveAll("a"))
	if _, err := os.Lstat(filepath.Join(dir, "a")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("RemoveAll left a: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(outside, "f")); err != nil || string(b) != "mine" {
		t.Errorf("the file outside: %q %v", b, err)
	}
	if fi, _ := os.Stat(filepath.Join(outside, "f")); fi.Mode().Perm() != 0o600 {
		t.Errorf("the file outside is %v", fi.Mode())
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
