package policies_test

import (
	"os"
	"testing"

	"github.com/shellgate/shellgate"
)

func TestMain(m *testing.M) {
	// No test writes the user's own audit log.
	os.Setenv(shellgate.AuditLogEnv, "off")
	// Nor the user\'s own checkpoint store: those about checkpoints name theirs.
	os.Setenv(shellgate.CheckpointsEnv, "off")
	// Nor the user's own state (the tool caches' copies of the projects the
	// tests make): a directory of this run's own, outside /tmp, removed at the end.
	state, err := os.MkdirTemp("/var/tmp", "shellgate-test-state-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_STATE_HOME", state)
	code := m.Run()
	os.RemoveAll(state)
	os.Exit(code)
}
