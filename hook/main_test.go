package hook

import (
	"github.com/shellgate/shellgate/internal/lane"
	"os"
	"testing"

	"github.com/shellgate/shellgate"
)

func TestMain(m *testing.M) {
	// No test writes the user's own audit log (Decide logs each decision).
	os.Setenv(shellgate.AuditLogEnv, "off")
	removeState := lane.PrivateState() // nor the user's own state
	code := m.Run()
	removeState()
	os.Exit(code)
}
