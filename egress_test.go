package shellgate_test

import (
	"strings"
	"testing"

	"github.com/shellgate/shellgate"
)

// An empty allow-list entry is refused by New, saying so, rather than left out
// of the list: the caller meant some domain.
func TestNewRefusesEmptyAllowEntry(t *testing.T) {
	for _, allow := range [][]string{{""}, {"registry.npmjs.org", "  "}} {
		g, err := shellgate.New(shellgate.Config{Root: t.TempDir(), SpillDir: t.TempDir(), Network: shellgate.NetworkConfig{Allow: allow}})
		if err == nil {
			g.Close()
			t.Errorf("New with allow %q: no error", allow)
		} else if !strings.Contains(err.Error(), "empty entry") {
			t.Errorf("New with allow %q: %v; want it to say the entry is empty", allow, err)
		}
	}
}
