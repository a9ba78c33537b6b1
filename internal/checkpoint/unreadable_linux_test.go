package checkpoint

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/shellgate/shellgate/internal/checkpoint/checkpointtest"
	"github.com/shellgate/shellgate/internal/lane"
)

// unreadableEnv marks the test binary run again as a user who is not root
// (root reads any file); its value is the lab.
const unreadableEnv = "SHELLGATE_TEST_UNREADABLE"

// TestUnreadableFileNotKept: a command that makes a file its user cannot
// read (`chmod 000 s.txt`) does not make every checkpoint fail — which
// refused each next command (CHECKPOINT_FAILED) and the undo of this very
// one: the file is recorded as not kept, and why; the undo brings the rest
// back and says it left that one as it is.
func TestUnreadableFileNotKept(t *testing.T) {
	lane.Live(t)
	if lab := os.Getenv(unreadableEnv); lab != "" {
		unreadable(t, lab)
		return
	}
	lab := checkpointtest.LabDir(t)
	if os.Geteuid() != 0 {
		unreadable(t, lab)
		return
	}
	if err := os.Chown(lab, 65534, 65534); err != nil {
		t.Skip(err)
	}
	// (a copy of this binary it can run: go test's is in a directory of root's)
	self, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(lab, "checkpoint.test")
	if err := os.WriteFile(bin, self, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run", "^TestUnreadableFileNotKept$", "-test.v")
	cmd.Dir = lab
	cmd.Env = append(os.Environ(), unreadableEnv+"="+lab, "HOME="+lab)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if strings.Contains(string(out), "--- SKIP") {
		t.Skipf("as nobody: %s", out)
	}
	if err != nil || !strings.Contains(string(out), "--- PASS: TestUnreadableFileNotKept") {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
}

func unreadable(t *testing.T, lab string) {
	root := filepath.Join(lab, "project")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	checkpointtest.MakeRepo(t, root)
	s, err := Open(Options{Root: root, Dir: filepath.Join(lab, "store")})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want := checkpointtest.State(t, root)
	id, err := s.Snapshot("run", "chmod 000", "")
	if err != nil {
		t.Fatal(err)
	}
	mustSh(t, root, "echo secret > s.txt && chmod 000 s.txt && rm README.md")
	sum, err := s.Finish(id)
	if err != nil {
		t.Fatalf("the checkpoint after the command: %v", err)
	}
	if !strings.Contains(sum.Text(), "1 not kept") || !slicesHas(sum.Changes, "added s.txt (not kept, 7 B: unreadable (permission denied))") {
		t.Errorf("changes: %s %+v", sum.Text(), sum.Changes)
	}
	// the next command is not refused
	next, err := s.Snapshot("run", "true", "")
	if err != nil {
		t.Fatalf("the checkpoint before the next command: %v", err)
	}
	if _, err := s.Finish(next); err != nil {
		t.Fatal(err)
	}
	_, undo, err := s.Restore(id)
	if err != nil {
		t.Fatalf("undo: %v", err)
	}
	if len(undo.NotRestored) != 1 || undo.NotRestored[0].Path != "s.txt" || !strings.Contains(undo.NotRestored[0].Why, "unreadable (permission denied)") {
		t.Errorf("not restored: %+v", undo.NotRestored)
	}
	// made readable again, it is what a checkpoint keeps and undo removes
	mustSh(t, root, "chmod 600 s.txt")
	if _, _, err := s.Restore(id); err != nil {
		t.Fatal(err)
	}
	if got := checkpointtest.State(t, root); got != want {
		t.Errorf("after undo:\n%s", checkpointtest.DiffLines(want, got))
	}
}

func slicesHas(changes []Change, text string) bool {
	for _, c := range changes {
		if c.Text() == text {
			return true
		}
	}
	return false
}
