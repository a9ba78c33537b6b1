package checkpoint_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/shellgate/shellgate/internal/checkpoint"
	"github.com/shellgate/shellgate/internal/checkpoint/checkpointtest"
)

// BenchmarkRestore: undo of a command that removed every file of a
// 2 000-file root (20 directories of 100): the files are staged and renamed
// back, each through directories opened beneath the root.
func BenchmarkRestore(b *testing.B) {
	lab := checkpointtest.LabDir(b)
	root := filepath.Join(lab, "project")
	for d := range 20 {
		dir := filepath.Join(root, fmt.Sprintf("d%02d", d))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := range 100 {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.txt", f)), []byte(fmt.Sprintf("file %d %d\n", d, f)), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	s, err := checkpoint.Open(checkpoint.Options{Root: root, Dir: filepath.Join(lab, "store")})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	id, err := s.Snapshot("run", "rm", "")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		b.StopTimer()
		checkpointtest.Sh(b, root, "rm -rf d*")
		b.StartTimer()
		if _, _, err := s.Restore(id); err != nil {
			b.Fatal(err)
		}
	}
}
