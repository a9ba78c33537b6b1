package checkpoint_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/shellgate/shellgate/internal/checkpoint/checkpointtest"
	"github.com/shellgate/shellgate/internal/lane"
)

// TestRestoreStageSymlink: a command that leaves a symlink to a directory
// outside the root at the names undo stages its files in
// (.shellgate-undo-N, N predictable: the undo's own record) does not make
// undo write there — git's checkout-index --prefix follows a symlink at its
// prefix — and undo still brings the root back.
func TestRestoreStageSymlink(t *testing.T) {
	lane.Live(t)
	lab, root := checkpointtest.Project(t)
	outside := filepath.Join(lab, "outside")
	if err := os.Mkdir(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	s := open(t, root, filepath.Join(lab, "store"))
	want := checkpointtest.State(t, root)
	id := snapshot(t, s, "plant")
	checkpointtest.Sh(t, root, "rm -rf README.md src")
	for i := 1; i <= 5; i++ {
		if err := os.Symlink(outside, filepath.Join(root, fmt.Sprintf(".shellgate-undo-%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Finish(id); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Restore(id); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadDir(outside); len(got) != 0 {
		t.Errorf("undo wrote outside the root, through a planted stage symlink: %v", got)
	}
	if got := checkpointtest.State(t, root); got != want {
		t.Errorf("after undo:\n%s", checkpointtest.DiffLines(want, got))
	}
}

// TestRestoreModeHardLink: a command that puts, in place of a file kept at
// 0600, a hard link to a file outside the root with the same bytes (a
// package store's) leaves undo only a mode to restore: the outside file
// keeps its own, and the root's file gets the checkpoint's.
func TestRestoreModeHardLink(t *testing.T) {
	lane.Live(t)
	lab, root := checkpointtest.Project(t)
	store := filepath.Join(lab, "outside", "index.js")
	if err := os.MkdirAll(filepath.Dir(store), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(store, []byte("module.exports = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	checkpointtest.Sh(t, root, "cp "+store+" lp.js && chmod 600 lp.js")
	s := open(t, root, filepath.Join(lab, "store"))
	want := checkpointtest.State(t, root)
	id := snapshot(t, s, "link")
	checkpointtest.Sh(t, root, "rm lp.js && ln "+store+" lp.js")
	if sum, err := s.Finish(id); err != nil || sum.Empty() {
		t.Fatalf("finish: %v, %+v", err, sum)
	}
	if _, _, err := s.Restore(id); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(store); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("undo changed the mode of a file outside the root through a hard link: %v %v", fi.Mode(), err)
	}
	if got := checkpointtest.State(t, root); got != want {
		t.Errorf("after undo:\n%s", checkpointtest.DiffLines(want, got))
	}
}
