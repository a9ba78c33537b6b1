package checkpoint

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/shellgate/shellgate/internal/beneath"
	"github.com/shellgate/shellgate/internal/checkpoint/checkpointtest"
)

// TestRelinkNamesOnlySameBytes: undo makes a file's names one file again
// only where each holds the first's bytes and mode, and is not a name the
// undo left: a name holding anything else keeps it.
func TestRelinkNamesOnlySameBytes(t *testing.T) {
	tests := []struct {
		name   string
		b      string
		perm   os.FileMode
		left   bool // b is among the names the undo left
		linked bool
	}{
		{"same", "same bytes\n", 0o640, false, true},
		{"other-bytes", "other bytes\n", 0o640, false, false},
		{"same-size-other-bytes", "SAME BYTES\n", 0o640, false, false},
		{"other-mode", "same bytes\n", 0o600, false, false},
		{"left", "same bytes\n", 0o640, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lab := checkpointtest.LabDir(t)
			root := filepath.Join(lab, "root")
			os.MkdirAll(filepath.Join(root, "d"), 0o755)
			os.Mkdir(filepath.Join(lab, "stage"), 0o700)
			a, b := filepath.Join(root, "a"), filepath.Join(root, "d", "b")
			if err := os.WriteFile(a, []byte("same bytes\n"), 0o640); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(b, []byte(tt.b), tt.perm); err != nil {
				t.Fatal(err)
			}
			os.Chmod(a, 0o640)
			os.Chmod(b, tt.perm)
			r, err := beneath.OpenRoot(root)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			stage, err := beneath.OpenRoot(filepath.Join(lab, "stage"))
			if err != nil {
				t.Fatal(err)
			}
			defer stage.Close()
			var left []NotRestored
			if tt.left {
				left = []NotRestored{{Path: "d/b", Why: "left"}}
			}
			if out := relinkNames(r, stage, manifest{HardLinks: [][]string{{"a", "d/b"}}}, left); len(out) != 0 {
				t.Errorf("relink said %+v", out)
			}
			fa, _ := os.Stat(a)
			fb, _ := os.Stat(b)
			if got := os.SameFile(fa, fb); got != tt.linked {
				t.Errorf("a and d/b one file: %v, want %v", got, tt.linked)
			}
			if got, _ := os.ReadFile(b); string(got) != tt.b {
				t.Errorf("d/b holds %q, want %q", got, tt.b)
			}
			if ents, _ := os.ReadDir(filepath.Join(lab, "stage")); len(ents) != 0 {
				t.Errorf("the stage holds %v", ents)
			}
		})
	}
}
