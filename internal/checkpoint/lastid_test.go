package checkpoint

import (
	"os"
	"path/filepath"
	"testing"
)

// The last id given is written over the one before in place: what it says
// is the new id whatever the old one's length.
func TestSaveLastID(t *testing.T) {
	s := &Store{dir: t.TempDir()}
	if got := s.lastID(); got != 0 {
		t.Fatalf("lastID of a new store = %d", got)
	}
	for _, n := range []int{9, 10, 999, 1000, 7} {
		s.saveLastID(n)
		if got := s.lastID(); got != n {
			b, _ := os.ReadFile(filepath.Join(s.dir, "last"))
			t.Errorf("after saving %d, lastID = %d (file %q)", n, got, b)
		}
	}
}
