package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

// A workspace file at the root is found however many entries a command made
// there first: 40 000 files, which the directory may list before it.
func TestRootMatchesEveryEntry(t *testing.T) {
	root := t.TempDir()
	for i := range 40000 {
		if err := os.WriteFile(filepath.Join(root, "j"+strconv.Itoa(i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var want []string
	for _, n := range []string{"a.code-workspace", "f.code-workspace", "z.code-workspace"} {
		p := filepath.Join(root, n)
		if err := os.WriteFile(p, []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
		want = append(want, p)
	}
	m := newMounter(&Spec{Writable: []string{root}, Patterns: []string{"*.code-workspace"}})
	got := m.rootMatches()
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("matched %q, want %q", got, want)
	}
}
