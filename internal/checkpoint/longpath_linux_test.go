package checkpoint

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shellgate/shellgate/internal/checkpoint/checkpointtest"
	"github.com/shellgate/shellgate/internal/lane"
)

// TestLongPathNotKept: a file, or a directory and all it holds, whose
// absolute path is too long to open (4096 bytes on Linux) cannot be read
// into a checkpoint. It is recorded as not kept, and why: the command that
// made it says so, and after `rm -rf` of the tree the undo brings back what
// was kept and names it as left out, where before it was passed over unsaid
// (the directory read as empty; a file in it would fail every checkpoint).
func TestLongPathNotKept(t *testing.T) {
	lane.Live(t)
	long := strings.Repeat("d", 200)
	for _, tc := range []struct {
		name   string
		levels int    // directories of 200 bytes under top/
		file   string // the file made at the bottom
	}{
		{"a directory too deep to open", 21, "f.txt"},
		{"a file whose path is too long", 19, strings.Repeat("f", 250)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lab, root := checkpointtest.Project(t)
			s, err := Open(Options{Root: root, Dir: filepath.Join(lab, "store")})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			deep := "cd top"
			for range tc.levels {
				deep += " && mkdir " + long + " && cd " + long
			}
			id, err := s.Snapshot("run", "make a deep tree", "")
			if err != nil {
				t.Fatal(err)
			}
			mustSh(t, root, "mkdir top && echo kept > top/short.txt && "+deep+" && echo deep > "+tc.file)
			sum, err := s.Finish(id)
			if err != nil {
				t.Fatalf("the checkpoint after the command: %v", err)
			}
			if !strings.Contains(sum.Text(), "1 not kept") || !strings.Contains(strings.Join(changeTexts(sum.Changes), "\n"), "too long to open (4096 bytes or more)") {
				t.Errorf("changes: %s %v", sum.Text(), changeTexts(sum.Changes))
			}
			rm, err := s.Snapshot("run", "rm -rf top", "")
			if err != nil {
				t.Fatal(err)
			}
			mustSh(t, root, "rm -rf top")
			if _, err := s.Finish(rm); err != nil {
				t.Fatal(err)
			}
			_, undo, err := s.Restore(rm)
			if err != nil {
				t.Fatalf("undo: %v", err)
			}
			if b, err := os.ReadFile(filepath.Join(root, "top", "short.txt")); err != nil || string(b) != "kept\n" {
				t.Errorf("top/short.txt after undo: %q %v", b, err)
			}
			if len(undo.NotRestored) != 1 || !strings.HasPrefix(undo.NotRestored[0].Path, "top/"+long+"/") ||
				!strings.Contains(undo.NotRestored[0].Why, "too long to open") {
				t.Errorf("undo said it left out %+v, want the deep path and why", undo.NotRestored)
			}
			// made again, the undo of the command that made it leaves it
			// (not kept: it cannot be told from one of the user's), and says so
			mustSh(t, root, deep+" && echo deep > "+tc.file)
			_, undo, err = s.Restore(id)
			if err != nil {
				t.Fatalf("undo of the command that made the tree: %v", err)
			}
			if _, err := os.Stat(filepath.Join(root, "top", "short.txt")); err == nil {
				t.Errorf("top/short.txt is still there after the undo of the command that made it")
			}
			if len(undo.NotRestored) != 1 || !strings.Contains(undo.NotRestored[0].Why, "too long to open") {
				t.Errorf("undo of the command that made the tree said it left out %+v", undo.NotRestored)
			}
		})
	}
}

func changeTexts(cs []Change) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Text())
	}
	return out
}
