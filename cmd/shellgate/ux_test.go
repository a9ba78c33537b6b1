package main

import (
	"bytes"
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

// Each subcommand's help lists the flags that matter to it: changes and undo
// start no sandbox and judge no command, doctor judges none.
func TestSubcommandFlags(t *testing.T) {
	files := []string{"-root", "-config", "-trust-project", "-no-user-config", "-checkpoints"}
	sandbox := []string{"-allow-network", "-sandbox", "-profile", "-allow-domain", "-host-port"}
	for _, tc := range []struct {
		cmd       string
		have, not []string
	}{
		{"changes", files, append([]string{"-mode"}, sandbox...)},
		{"undo", files, append([]string{"-mode"}, sandbox...)},
		{"doctor", append(files, sandbox...), []string{"-mode"}},
		{"run", append(append(files, sandbox...), "-mode"), nil},
		{"check", append(append(files, sandbox...), "-mode"), nil},
	} {
		var out, errb bytes.Buffer
		if code := dispatch([]string{tc.cmd, "-h"}, &out, &errb); code != 0 {
			t.Fatalf("%s -h: exit %d %s", tc.cmd, code, errb.String())
		}
		flags := map[string]bool{}
		for _, l := range strings.Split(out.String(), "\n") {
			if f, ok := strings.CutPrefix(l, "  -"); ok {
				flags["-"+strings.Fields(f)[0]] = true
			}
		}
		for _, f := range tc.have {
			if !flags[f] {
				t.Errorf("shellgate %s -h lacks %s", tc.cmd, f)
			}
		}
		for _, f := range tc.not {
			if flags[f] {
				t.Errorf("shellgate %s -h lists %s, which does nothing for it", tc.cmd, f)
			}
		}
		// A flag not listed is not taken either.
		if len(tc.not) > 0 {
			var out, errb bytes.Buffer
			if code := dispatch([]string{tc.cmd, tc.not[0] + "=auto"}, &out, &errb); code != exitUsage {
				t.Errorf("shellgate %s %s=auto: exit %d, want %d", tc.cmd, tc.not[0], code, exitUsage)
			}
		}
	}
}
