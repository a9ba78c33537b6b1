package hook

import (
	"os"
	"testing"

	"github.com/shellgate/shellgate"
)

func TestMain(m *testing.M) {
	// No test writes the user's own audit log (Decide logs each decision).
	os.Setenv(shellgate.AuditLogEnv, "off")
	os.Exit(m.Run())
}
