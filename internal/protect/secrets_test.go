package protect

import (
	"path/filepath"
	"slices"
	"testing"
)

// The secrets' paths: the table's under the home, then the user's, "~/" and
// relative ones under the home, absolute ones as they are; the table is a
// copy each time.
func TestSecretPaths(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	abs := filepath.Join(t.TempDir(), "vault")
	got := SecretPaths(home, []string{"~/.config/mine", ".pgpass", abs})
	n := len(Secrets())
	if len(got) != n+3 || got[0] != filepath.Join(home, ".ssh") {
		t.Fatalf("SecretPaths = %q, want the %d of the table first, .ssh under the home", got, n)
	}
	want := []string{filepath.Join(home, ".config", "mine"), filepath.Join(home, ".pgpass"), abs}
	if !slices.Equal(got[n:], want) {
		t.Errorf("the user's: %q, want %q", got[n:], want)
	}
	s := Secrets()
	s[0] = "changed"
	if Secrets()[0] != ".ssh" {
		t.Error("Secrets returns the table itself, not a copy")
	}
}
