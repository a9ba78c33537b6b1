package checkpoint

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shellgate/shellgate/internal/checkpoint/checkpointtest"
	"github.com/shellgate/shellgate/internal/lane"
)

// TestUndoDiskFull: a command that deletes work and then fills the disk
// leaves no room for the checkpoint after it, nor for the one before the
// next command, nor for the one undo takes first: each says what failed,
// whether the command ran, and the file to free. The undo then says
// that nothing was undone and what to free (the file the command wrote),
// the root untouched; once it is freed, the undo brings the work back.
// Run for real on a 40 MB tmpfs in a mount namespace of its own (skipped
// where none can be had).
func TestUndoDiskFull(t *testing.T) {
	lane.Live(t)
	checkpointtest.OnSmallTmpfs(t, "TestUndoDiskFull", diskFull)
}

func diskFull(t *testing.T, _, fsDir string) {
	root := filepath.Join(fsDir, "project")
	os.Mkdir(root, 0o755)
	checkpointtest.MakeRepo(t, root)
	s, err := Open(Options{Root: root, Dir: filepath.Join(fsDir, "store")})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want := checkpointtest.State(t, root)
	id, err := s.Snapshot("run", "rm -rf src; fill the disk", "")
	if err != nil {
		t.Fatal(err)
	}
	mustSh(t, root, "rm -rf src; head -c 100000000 /dev/zero > fill 2>/dev/null; true")
	// The command's own result and the next command's refusal say what
	// failed, whether the command ran, and what to free.
	for _, c := range []struct {
		op, says string
		take     func() error
	}{
		{NoSpaceAfter, "after command 1: the command ran and what it changed is in place, but not recorded; checkpoint 1 holds the project as it was before it",
			func() error { _, err := s.Finish(id); return err }},
		{NoSpaceBefore, "before the command: it was not run, nothing changed. Free space, then run it again",
			func() error { _, err := s.Snapshot("run", "echo next", ""); return err }},
	} {
		err := c.take()
		if err == nil {
			t.Fatalf("the checkpoint %s the command found room: the disk is not full", c.op)
		}
		var full *NoSpaceError
		if !errors.As(err, &full) || full.Op != c.op || !strings.Contains(err.Error(), c.says) ||
			len(full.Big) == 0 || !strings.HasPrefix(full.Big[0], "fill (") {
			t.Errorf("checkpoint %s a command on a full disk: %v", c.op, err)
		}
	}
	before := checkpointtest.State(t, root)
	for _, undo := range []func() error{
		func() error { _, err := s.Since(id); return err },
		func() error { _, _, err := s.Restore(id); return err },
	} {
		err := undo()
		var full *NoSpaceError
		if !errors.As(err, &full) || !strings.Contains(err.Error(), "nothing was undone, the root is as it was. Free space, then undo again") ||
			len(full.Big) == 0 || !strings.HasPrefix(full.Big[0], "fill (") {
			t.Errorf("undo on a full disk: %v", err)
		}
	}
	if got := checkpointtest.State(t, root); got != before {
		t.Errorf("the refused undo changed the root:\n%s", checkpointtest.DiffLines(before, got))
	}
	os.Remove(filepath.Join(root, "fill"))
	_, sum, err := s.Restore(id)
	if err != nil {
		t.Fatal(err)
	}
	if got := checkpointtest.State(t, root); got != want {
		t.Errorf("after undo:\n%s", checkpointtest.DiffLines(want, got))
	}
	// The command's end was never checkpointed: its own deletions are not
	// "what changed after it".
	if len(sum.Later) != 0 {
		t.Errorf("the command's own changes named as later ones: %+v", sum.Later)
	}
}
