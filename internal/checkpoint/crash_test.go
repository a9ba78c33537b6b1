package checkpoint

import (
	"encoding/json"
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

// TestRestoreCrashLinked: the journal of an undo to a checkpoint holding a
// linked file names its target where a build from before links does not
// look ("target" absent: it refuses the journal as damaged rather than
// finish the undo writing the link's stub over the file), and this build's
// next Open finishes it.
func TestRestoreCrashLinked(t *testing.T) {
	lane.Live(t)
	lab, root := checkpointtest.Project(t)
	checkpointtest.Sh(t, root, "head -c 300000 /dev/urandom > data.log")
	want := checkpointtest.State(t, root)
	dir := filepath.Join(lab, "store")
	s, err := Open(Options{Root: root, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	id, err := s.Snapshot("run", "rm data.log", "")
	if err != nil {
		t.Fatal(err)
	}
	checkpointtest.Sh(t, root, "rm data.log")
	crashed := errors.New("crash")
	CrashHookForTest(t, func(at string) error {
		if at == "journal" {
			return crashed
		}
		return nil
	})
	if _, _, err := s.Restore(id); !errors.Is(err, crashed) {
		t.Fatalf("restore: %v, want the crash", err)
	}
	s.Close()
	b, err := os.ReadFile(filepath.Join(dir, ProjectID(root), "journal"))
	if err != nil {
		t.Fatal(err)
	}
	var j map[string]any
	if err := json.Unmarshal(b, &j); err != nil || j["target"] != nil || j["linked_target"] == nil {
		t.Fatalf("journal %s: want its target under linked_target only", b)
	}
	crashHook = func(string) error { return nil }
	s, err = Open(Options{Root: root, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if got := checkpointtest.State(t, root); got != want {
		t.Errorf("after recovery:\n%s", checkpointtest.DiffLines(want, got))
	}
}
