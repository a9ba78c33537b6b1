package policies_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/envelope"
)

// The seeds' runtime behaviour under their files, through a real Gate and a real shell.
func TestSeedsRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real commands, one for two seconds")
	}
	ms := func(n int64) *int64 { return &n }
	tests := []struct {
		name  string
		file  string
		req   shellgate.Request
		check func(t *testing.T, root string, e envelope.Envelope)
	}{
		{"000 pwd runs in the project", "000-dm_cc.toml", shellgate.Request{Command: "pwd"},
			func(t *testing.T, root string, e envelope.Envelope) {
				real, _ := filepath.EvalSymlinks(root)
				if e.Status != envelope.Success || strings.TrimSpace(e.Data.Stdout) != real {
					t.Errorf("status %s stdout %q, want success and %q", e.Status, e.Data.Stdout, real)
				}
			}},
		// Only harmless commands here, denied or not: if the policy ever let one through,
		// it would really run.
		{"000 mv is refused before running", "000-dm_cc.toml", shellgate.Request{Command: "mv a.txt b.txt"},
			func(t *testing.T, root string, e envelope.Envelope) {
				if e.Status != envelope.Error || e.Error == nil || e.Error.Code != envelope.InvalidParam || e.Data.ExitCode != nil {
					t.Errorf("want an INVALID_PARAM error with no exit code, got %s %+v", e.Status, e.Error)
				}
				if _, err := os.Stat(filepath.Join(root, "a.txt")); err != nil {
					t.Errorf("the refused mv ran: %v", err)
				}
			}},
		{"001 MYCODEAGENT=1 reaches the command", "001-bashtool.toml", shellgate.Request{Command: `printf %s "$MYCODEAGENT"`},
			func(t *testing.T, _ string, e envelope.Envelope) {
				if e.Data.Stdout != "1" {
					t.Errorf("MYCODEAGENT = %q, want 1 (%s)", e.Data.Stdout, e.Text)
				}
			}},
		{"001 cd outside is ACCESS_DENIED", "001-bashtool.toml", shellgate.Request{Command: "cd .. && pwd"},
			func(t *testing.T, _ string, e envelope.Envelope) {
				if e.Error == nil || e.Error.Code != envelope.AccessDenied {
					t.Errorf("want ACCESS_DENIED, got %s %+v", e.Status, e.Error)
				}
			}},
		{"002 the timeout kills a sleeping command", "002-shellexecutor.toml",
			shellgate.Request{Command: "echo started; sleep 10", TimeoutMS: ms(2000)},
			func(t *testing.T, _ string, e envelope.Envelope) {
				if !e.Data.TimedOut || e.Status != envelope.Partial || !strings.Contains(e.Data.Stdout, "started") {
					t.Errorf("want a partial timed-out result with the output so far, got %s timed_out=%v stdout %q",
						e.Status, e.Data.TimedOut, e.Data.Stdout)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := load(t, tt.file, nil)
			g, err := shellgate.New(l.cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			tt.check(t, l.root, g.Run(context.Background(), tt.req))
		})
	}
}
