package main

import (
	"strings"
	"testing"

	"github.com/shellgate/shellgate/internal/lane"
)

// doctor counts one checkpointed command as "1 command" ("1 commands" was the
// first thing a new user's doctor said about undo).
func TestDoctorCountsOneCommand(t *testing.T) {
	lane.Live(t)
	_, root := undoLab(t)
	if code, _, stderr := cli("run", "--root", root, "--sandbox", "off", "--", "echo one > one.txt"); code != 0 {
		t.Fatalf("run: %d %s", code, stderr)
	}
	if code, stdout, stderr := cli("doctor", "--root", root, "--sandbox", "off"); !strings.Contains(stdout, ": 1 command, ") {
		t.Errorf("doctor after one command: %d\n%s%s", code, stdout, stderr)
	}
}
