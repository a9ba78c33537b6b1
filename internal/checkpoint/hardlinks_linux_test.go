package checkpoint_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shellgate/shellgate/internal/checkpoint/checkpointtest"
	"github.com/shellgate/shellgate/internal/lane"
)

// sameFiles reports whether the root's paths are all one file (hard links of
// one another), and says what each is when not.
func sameFiles(t *testing.T, root string, paths ...string) (bool, string) {
	t.Helper()
	var first os.FileInfo
	var why []string
	same := true
	for _, p := range paths {
		fi, err := os.Lstat(filepath.Join(root, p))
		if err != nil {
			return false, p + ": " + err.Error()
		}
		why = append(why, p+" "+checkpointtest.Sh(t, root, "stat -c '%i %h' "+p))
		if first == nil {
			first = fi
		} else if !os.SameFile(first, fi) {
			same = false
		}
	}
	return same, strings.Join(why, "")
}

// TestUndoKeepsHardLinks: two names the root had for one small file (a hard
// link of the user's, in two directories) come back from undo as one file,
// with their content and mode, whatever the command did to them: removed
// both or one, wrote through one (both then), or replaced one by a file of
// its own; and so do names linked since the last checkpoint of the same
// process (the watch does not report the first name's link count).
func TestUndoKeepsHardLinks(t *testing.T) {
	lane.Live(t)
	tests := []struct {
		name  string
		setup string // before the Store's first checkpoint
		link  string // run between two checkpoints of the Store, before the command
		cmd   string
	}{
		{"rm-both", "ln src/pkg/f3.go docs/f3.go", "", "rm src/pkg/f3.go docs/f3.go"},
		{"rm-one", "ln src/pkg/f3.go docs/f3.go", "", "rm docs/f3.go"},
		{"write-through-one", "ln src/pkg/f3.go docs/f3.go", "", "echo more >> docs/f3.go"},
		{"replace-one", "ln src/pkg/f3.go docs/f3.go", "", "cp src/pkg/f3.go x.tmp && mv x.tmp docs/f3.go"},
		{"three-names", "ln src/pkg/f3.go docs/f3.go && ln src/pkg/f3.go f3.go", "", "rm docs/f3.go f3.go && echo x >> src/pkg/f3.go"},
		{"linked-since", "", "ln src/pkg/f3.go docs/f3.go", "rm src/pkg/f3.go docs/f3.go"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lab, root := checkpointtest.Project(t)
			checkpointtest.Sh(t, root, "chmod 640 src/pkg/f3.go && mkdir -p docs")
			if tt.setup != "" {
				checkpointtest.Sh(t, root, tt.setup)
			}
			s := open(t, root, filepath.Join(lab, "store"))
			defer s.Close()
			if tt.link != "" {
				id := snapshot(t, s, tt.link)
				checkpointtest.Sh(t, root, tt.link)
				if _, err := s.Finish(id); err != nil {
					t.Fatal(err)
				}
			}
			names := []string{"src/pkg/f3.go", "docs/f3.go"}
			if strings.Contains(tt.setup, " f3.go") {
				names = append(names, "f3.go")
			}
			if same, why := sameFiles(t, root, names...); !same {
				t.Fatalf("before the command the names are not one file:\n%s", why)
			}
			want := checkpointtest.State(t, root)
			id := snapshot(t, s, tt.cmd)
			checkpointtest.Sh(t, root, tt.cmd)
			if _, err := s.Finish(id); err != nil {
				t.Fatal(err)
			}
			_, usum, err := s.Restore(id)
			if err != nil || len(usum.NotRestored) != 0 {
				t.Fatalf("undo: %v, not restored %+v", err, usum.NotRestored)
			}
			if got := checkpointtest.State(t, root); got != want {
				t.Errorf("after undo:\n%s", checkpointtest.DiffLines(want, got))
			}
			if same, why := sameFiles(t, root, names...); !same {
				t.Errorf("after undo the names are separate files:\n%s", why)
			}
		})
	}
}
