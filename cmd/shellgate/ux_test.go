package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/shellgate/shellgate/envelope"
	"github.com/shellgate/shellgate/internal/lane"
)

// A one-shot run stops what its command left in the background, and its text
// says so rather than "still running", with --json or without.
func TestRunBackgroundStoppedText(t *testing.T) {
	lane.Live(t)
	_, _, stderr := runCLI(t, "--", "sleep 30 & echo started")
	if !strings.Contains(stderr, "\n[Background processes stopped at exit: ") || strings.Contains(stderr, "still running") ||
		!strings.HasSuffix(stderr, "\nshellgate: run leaves nothing behind; shellgate mcp keeps jobs that outlive one command.\n") {
		t.Errorf("stderr:\n%s", stderr)
	}
	_, stdout, _ := runCLI(t, "--json", "--", "sleep 30 & echo started")
	var env envelope.Envelope
	if err := json.Unmarshal([]byte(stdout), &env); err != nil || len(env.Data.BackgroundPIDs) != 1 ||
		!strings.Contains(env.Text, "\n[Background processes stopped at exit: ") || strings.Contains(env.Text, "still running") {
		t.Errorf("--json: %v\n%s", err, stdout)
	}
}
