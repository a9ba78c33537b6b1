package beneath

import (
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// Every symlink in .git goes but those of the object store, wherever it
// points; what a symlink points to is left as it was, and the notes say where
// each led.
func TestUnlinkGitSymlinks(t *testing.T) {
	root := t.TempDir()
	victim := filepath.Join(t.TempDir(), "bashrc")
	must(t, os.WriteFile(victim, []byte("mine\n"), 0o644))
	for _, d := range []string{".git/logs", ".git/objects/pack", ".git/refs/heads"} {
		must(t, os.MkdirAll(filepath.Join(root, d), 0o755))
	}
	for _, l := range []string{".git/logs/HEAD", ".git/COMMIT_EDITMSG", ".git/refs/heads/x", ".git/objects/pack/p"} {
		must(t, os.Symlink(victim, filepath.Join(root, l)))
	}
	removed := UnlinkGitSymlinks(root)
	slices.Sort(removed)
	var want []string
	for _, p := range []string{".git/COMMIT_EDITMSG", ".git/logs/HEAD", ".git/refs/heads/x"} {
		want = append(want, "removed the symlink "+p+" (to "+victim+"), which git writes through")
	}
	if !slices.Equal(removed, want) {
		t.Errorf("removed %q, want %q", removed, want)
	}
	if _, err := os.Lstat(filepath.Join(root, ".git/objects/pack/p")); err != nil {
		t.Errorf("the object store's symlink went: %v", err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "mine\n" {
		t.Errorf("the target changed: %q", b)
	}
	// A .git that is itself a symlink is not walked: its target is elsewhere.
	other := t.TempDir()
	must(t, os.Symlink(filepath.Join(root, ".git"), filepath.Join(other, ".git")))
	if got := UnlinkGitSymlinks(other); len(got) != 0 {
		t.Errorf("walked through a symlinked .git: %q", got)
	}
}

// Open and Dir never follow a symlink or leave their directory, and Open
// refuses what could block (a FIFO).
func TestOpenAndDirStayBeneath(t *testing.T) {
	dir := t.TempDir()
	must(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "sub/f"), []byte("x"), 0o644))
	must(t, os.Symlink("/etc", filepath.Join(dir, "link")))
	must(t, syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644))
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	must(t, err)
	defer unix.Close(fd)
	if sub, err := Dir(fd, "sub"); err != nil {
		t.Errorf("Dir(sub): %v", err)
	} else {
		unix.Close(sub)
	}
	for _, rel := range []string{"link", "../", "sub/../.."} {
		if sub, err := Dir(fd, rel); err == nil {
			unix.Close(sub)
			t.Errorf("Dir(%q) opened", rel)
		}
	}
	if f, err := Open(fd, "sub/f", 0); err != nil {
		t.Errorf("Open(sub/f): %v", err)
	} else {
		f.Close()
	}
	for _, name := range []string{"fifo", "link", "sub"} {
		if f, err := Open(fd, name, 0); err == nil {
			f.Close()
			t.Errorf("Open(%q) opened it", name)
		}
	}
	if n := RandomName(); len(n) != 8 || n == RandomName() {
		t.Errorf("RandomName() = %q", n)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
