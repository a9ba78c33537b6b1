package main

import (
	"os"
	"testing"

	"github.com/shellgate/shellgate"
)

func TestMain(m *testing.M) {
	// No test writes the user's own audit log, in-process or through the binaries
	// they start (which inherit this): those about it name their file.
	os.Setenv(shellgate.AuditLogEnv, "off")
	os.Exit(m.Run())
}
