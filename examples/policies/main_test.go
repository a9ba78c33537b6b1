package policies_test

import (
	"github.com/shellgate/shellgate/internal/lane"
	"os"
	"testing"

	"github.com/shellgate/shellgate"
)

func TestMain(m *testing.M) {
	// No test writes the user's own audit log.
	os.Setenv(shellgate.AuditLogEnv, "off")
	// Nor the user\'s own checkpoint store: those about checkpoints name theirs.
	os.Setenv(shellgate.CheckpointsEnv, "off")
	removeState := lane.PrivateState() // nor the user's own state
	code := m.Run()
	removeState()
	os.Exit(code)
}
