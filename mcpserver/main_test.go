package mcpserver

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/internal/lane"
)

func TestMain(m *testing.M) {
	// No test writes the user's own audit log.
	os.Setenv(shellgate.AuditLogEnv, "off")
	// Nor the user\'s own checkpoint store: those about checkpoints name theirs.
	os.Setenv(shellgate.CheckpointsEnv, "off")
	removeState := lane.PrivateState() // nor the user's own state
	// Cleanup takes over the exit: a leak found after the tests passed must
	// still fail the run.
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) { removeState(); os.Exit(code) }))
}
