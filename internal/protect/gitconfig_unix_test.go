//go:build unix

package protect

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A config that is a FIFO is not read, nor waited on.
func TestGitRunsFromFIFO(t *testing.T) {
	root, home := t.TempDir(), t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(home, ".gitconfig"), 0o644); err != nil {
		t.Skip(err)
	}
	if err := os.MkdirAll(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := GitRunsFrom(root, home, Linked{}); len(got) != 0 {
		t.Errorf("GitRunsFrom = %q", got)
	}
}

// A nested repository's .git (or the root's) that is a FIFO or a symlink to
// /dev/zero is neither waited on nor read without end: a command may leave
// one for the next session's start to read.
func TestGitFileSpecial(t *testing.T) {
	for _, c := range []struct {
		name string
		make func(p string) error
	}{
		{"fifo", func(p string) error { return syscall.Mkfifo(p, 0o644) }},
		{"dev-zero", func(p string) error { return os.Symlink("/dev/zero", p) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			top := t.TempDir()
			if err := c.make(filepath.Join(top, ".git")); err != nil {
				t.Skip(err)
			}
			done := make(chan struct{})
			go func() {
				NestedRunsFrom(top, "")
				LinkedGitDir(top)
				close(done)
			}()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("reading the .git file did not end in 20 s")
			}
		})
	}
}
