//go:build unix

package protect

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
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
