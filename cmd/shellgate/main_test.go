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
	// Nor the user\'s own checkpoint store: those about checkpoints name theirs.
	os.Setenv(shellgate.CheckpointsEnv, "off")
	// The binaries the tests start (and some kill with SIGKILL, which leaves no
	// chance to clean up) make their temp dirs and spill files in a directory
	// of this run's own, removed at the end: nothing is left in /tmp.
	tmp, err := os.MkdirTemp("", "shellgate-cmd-test-")
	if err != nil {
		panic(err)
	}
	os.Setenv("TMPDIR", tmp)
	// Nor the user's own state (the tool caches' copies of the projects the
	// tests make): a directory of this run's own, outside /tmp, removed at the end.
	state, err := os.MkdirTemp("/var/tmp", "shellgate-test-state-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_STATE_HOME", state)
	code := m.Run()
	os.RemoveAll(tmp)
	os.RemoveAll(state)
	os.Exit(code)
}
