package helper

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/shellgate/shellgate/internal/lane"
)

// The helper's start initialises every package this one links, and every
// package whose path sorts before the last of them that is ready first (see
// the package's doc): none of the network stack, the relays, the envelope's
// or the terminal's packages may come in, nor package sandbox itself.
func TestHelperLinksNoHeavyPackage(t *testing.T) {
	lane.Live(t)
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	const mod = "github.com/shellgate/shellgate/"
	for _, p := range strings.Fields(string(out)) {
		switch {
		case p == "net", strings.HasPrefix(p, "net/"), strings.HasPrefix(p, "crypto/tls"),
			strings.HasPrefix(p, "github.com/charmbracelet/"), strings.HasPrefix(p, "github.com/modelcontextprotocol/"),
			p == mod+"internal/sandbox", p == mod+"internal/relay", p == mod+"internal/hint",
			p == mod+"envelope", p == mod+"internal/output", p == mod+"internal/runner", p == mod+"policy":
			t.Errorf("package helper links %s", p)
		}
	}
}
