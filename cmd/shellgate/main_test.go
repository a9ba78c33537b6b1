package main

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/internal/lane"
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
	removeState := lane.PrivateState() // nor the user's own state
	// Cleanup takes over the exit: a leak found after the tests passed must
	// still fail the run. The CLI's run, exec and mcp make this process a
	// subreaper (shellgate.Subreap), whose reaper lives as long as it.
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		os.RemoveAll(tmp)
		removeState()
		os.Exit(code)
	}), goleak.IgnoreAnyFunction("github.com/shellgate/shellgate/internal/runner.reaper"))
}
