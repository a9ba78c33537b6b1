package checkpoint_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/shellgate/shellgate/internal/checkpoint/checkpointtest"
	"github.com/shellgate/shellgate/internal/protect"
)

// TestQuarantineLeftOut: what the sandbox moved aside into the root's
// quarantine during a command is not among the command's changes, and undo
// neither deletes it (the user's only copy of what the guard took) nor
// brings back what the user cleared from it; the command's own file goes.
func TestQuarantineLeftOut(t *testing.T) {
	lab, root := checkpointtest.Project(t)
	s := open(t, root, filepath.Join(lab, "store"))
	defer s.Close()
	moved := filepath.Join(root, protect.QuarantineDir, "20260101-000000-ab", ".envrc")

	id := snapshot(t, s, "make .envrc and b")
	if err := os.MkdirAll(filepath.Dir(moved), 0o755); err != nil {
		t.Fatal(err)
	}
	for p, body := range map[string]string{moved: "echo moved\n", filepath.Join(root, "b"): "b\n"} {
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sum, err := s.Finish(id)
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Changes) != 1 || sum.Changes[0].Path != "b" || sum.Added != 1 {
		t.Errorf("changes %+v (added %d), want only b added", sum.Changes, sum.Added)
	}

	undo, _, err := s.Restore(id)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(root, "b")); !os.IsNotExist(err) {
		t.Errorf("undo left the command's b: %v", err)
	}
	if b, err := os.ReadFile(moved); err != nil || string(b) != "echo moved\n" {
		t.Errorf("undo took the quarantine's file: %q, %v", b, err)
	}

	// The user clears the quarantine; undoing the undo brings b back, not it.
	if err := os.RemoveAll(filepath.Join(root, protect.QuarantineDir)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Restore(undo); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(root, "b")); err != nil {
		t.Errorf("undoing the undo did not bring b back: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(root, protect.QuarantineDir)); !os.IsNotExist(err) {
		t.Errorf("undoing the undo brought the cleared quarantine back: %v", err)
	}
}
