package checkpoint

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/shellgate/shellgate/internal/lane"

	"github.com/shellgate/shellgate/internal/checkpoint/checkpointtest"
)

// TestRestoreCrash: a restore stopped at each step (as by a crash) is
// finished by the next Open: the root ends as the restore meant it, with
// nothing of its staging left.
func TestRestoreCrash(t *testing.T) {
	lane.Live(t)
	for _, step := range []string{"journal", "deleted", "half"} {
		t.Run(step, func(t *testing.T) {
			lab, root := checkpointtest.Project(t)
			dir := filepath.Join(lab, "store")
			s, err := Open(Options{Root: root, Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			want := checkpointtest.State(t, root)
			id, err := s.Snapshot("run", "damage", "")
			if err != nil {
				t.Fatal(err)
			}
			checkpointtest.Sh(t, root, "rm -rf src .git/objects && echo new > new.txt && chmod 600 run.sh")
			damaged := checkpointtest.State(t, root)
			crashed := errors.New("crash")
			crashHook = func(at string) error {
				if at == step {
					return crashed
				}
				return nil
			}
			_, _, err = s.Restore(id)
			crashHook = func(string) error { return nil }
			if !errors.Is(err, crashed) {
				t.Fatalf("restore: %v, want the crash", err)
			}
			if got := checkpointtest.State(t, root); step != "journal" && got == damaged {
				t.Fatalf("the crash at %s came before anything changed", step)
			}
			if _, err := os.Stat(filepath.Join(dir, ProjectID(root), "journal")); err != nil {
				t.Fatalf("no journal after the crash: %v", err)
			}
			if _, err := Open(Options{Root: root, Dir: dir}); err != nil {
				t.Fatal(err)
			}
			if got := checkpointtest.State(t, root); got != want {
				t.Errorf("after recovery:\n%s", checkpointtest.DiffLines(want, got))
			}
			if _, err := os.Stat(filepath.Join(dir, ProjectID(root), "journal")); err == nil {
				t.Errorf("the journal is still there")
			}
		})
	}
}
