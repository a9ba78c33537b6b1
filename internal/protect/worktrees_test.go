package protect

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A main worktree's linked worktrees elsewhere obey their commondir and
// config.worktree in the root's .git: both are protected, for each.
func TestOtherWorktrees(t *testing.T) {
	root := t.TempDir()
	if got := OtherWorktrees(root); got != nil {
		t.Errorf("no .git: %q", got)
	}
	for _, d := range []string{".git/worktrees/a", ".git/worktrees/b"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(root, ".git/worktrees/stray"), nil, 0o644)
	w := filepath.Join(root, ".git", "worktrees")
	want := []string{filepath.Join(w, "a/commondir"), filepath.Join(w, "a/config.worktree"), filepath.Join(w, "b/commondir"), filepath.Join(w, "b/config.worktree")}
	if got := OtherWorktrees(root); !slices.Equal(got, want) {
		t.Errorf("OtherWorktrees = %q, want %q", got, want)
	}
	// A linked worktree's root (.git a file) has none of its own.
	other := t.TempDir()
	os.WriteFile(filepath.Join(other, ".git"), []byte("gitdir: "+filepath.Join(w, "a")+"\n"), 0o644)
	if got := OtherWorktrees(other); got != nil {
		t.Errorf("a .git file: %q", got)
	}
}
