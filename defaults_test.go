package shellgate_test

import (
	"slices"
	"testing"

	"github.com/shellgate/shellgate"
)

// What every Gate hides and protects cannot be changed through the lists returned.
func TestDefaultListsAreCopies(t *testing.T) {
	for name, list := range map[string]func() []string{"DefaultHidden": shellgate.DefaultHidden, "DefaultProtected": shellgate.DefaultProtected} {
		first := list()
		if len(first) == 0 {
			t.Fatalf("%s is empty", name)
		}
		want := slices.Clone(first)
		first[0] = "changed"
		if got := list(); !slices.Equal(got, want) {
			t.Errorf("%s after changing a returned copy: %q", name, got)
		}
	}
	if !slices.Contains(shellgate.DefaultHidden(), ".ssh") || !slices.Contains(shellgate.DefaultProtected(), ".git/hooks") {
		t.Errorf("hidden %q, protected %q", shellgate.DefaultHidden(), shellgate.DefaultProtected())
	}
}
