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

// seedRun is one row of TestSeedsRun: a request under a seed's file, and what
// the user checks in its envelope (root is the project).
type seedRun struct {
	name  string
	file  string
	req   shellgate.Request
	check func(t *testing.T, root string, e envelope.Envelope)
}

// The seeds' runtime behaviour under their files, through a real Gate and a real shell.
func TestSeedsRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real commands, one for two seconds")
	}
	for _, tt := range append(seedRunsThatRun(), seedRunsRefused()...) {
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

// refused reports whether e is an error with code.
func refused(e envelope.Envelope, code envelope.Code) bool {
	return e.Error != nil && e.Error.Code == code
}

func ms(n int64) *int64 { return &n }

// seedRunsThatRun are the rows whose command runs: what it printed, how it
// ended.
func seedRunsThatRun() []seedRun {
	return []seedRun{
		{"000 pwd runs in the project", "000-dm_cc.toml", shellgate.Request{Command: "pwd"},
			func(t *testing.T, root string, e envelope.Envelope) {
				real, _ := filepath.EvalSymlinks(root)
				if e.Status != envelope.Success || strings.TrimSpace(e.Data.Stdout) != real {
					t.Errorf("status %s stdout %q, want success and %q", e.Status, e.Data.Stdout, real)
				}
			}},
		{"001 MYCODEAGENT=1 reaches the command", "001-bashtool.toml", shellgate.Request{Command: `printf %s "$MYCODEAGENT"`},
			func(t *testing.T, _ string, e envelope.Envelope) {
				if e.Data.Stdout != "1" {
					t.Errorf("MYCODEAGENT = %q, want 1 (%s)", e.Data.Stdout, e.Text)
				}
			}},
		{"000 output over 50KB is truncated", "000-dm_cc.toml", shellgate.Request{Command: "seq 1 200000"},
			func(t *testing.T, _ string, e envelope.Envelope) {
				if !e.Data.Truncated || len(e.Data.Stdout) > 60*1024 || e.Stats.StdoutBytes < 1<<20 {
					t.Errorf("truncated=%v, %d bytes kept of %d; want truncation to about 50KB",
						e.Data.Truncated, len(e.Data.Stdout), e.Stats.StdoutBytes)
				}
			}},
		{"001 §3 a failing command is partial with its exit code", "001-bashtool.toml", shellgate.Request{Command: "echo out; echo err >&2; exit 3"},
			func(t *testing.T, _ string, e envelope.Envelope) {
				if e.Status != envelope.Partial || e.Data.ExitCode == nil || *e.Data.ExitCode != 3 ||
					e.Data.Stdout != "out\n" || e.Data.Stderr != "err\n" {
					t.Errorf("got %s exit %v stdout %q stderr %q", e.Status, e.Data.ExitCode, e.Data.Stdout, e.Data.Stderr)
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
		{"003 a directory relative to the root is used", "003-gemini-cli.toml", shellgate.Request{Command: "pwd", Directory: "sub"},
			func(t *testing.T, root string, e envelope.Envelope) {
				real, _ := filepath.EvalSymlinks(filepath.Join(root, "sub"))
				if e.Status != envelope.Success || strings.TrimSpace(e.Data.Stdout) != real {
					t.Errorf("got %s %q, want success in %s", e.Status, e.Data.Stdout, real)
				}
			}},
		{"003 background processes are reported", "003-gemini-cli.toml", shellgate.Request{Command: "sleep 5 & echo started"},
			func(t *testing.T, _ string, e envelope.Envelope) {
				if len(e.Data.BackgroundPIDs) != 1 || !strings.Contains(e.Data.Stdout, "started") {
					t.Errorf("background_pids %v stdout %q, want the sleep's pid", e.Data.BackgroundPIDs, e.Data.Stdout)
				}
			}},
		{"003 binary output is detected", "003-gemini-cli.toml", shellgate.Request{Command: "head -c 4096 /dev/urandom"},
			func(t *testing.T, _ string, e envelope.Envelope) {
				if !e.Data.Binary {
					t.Errorf("binary=%v, stdout %d bytes", e.Data.Binary, len(e.Data.Stdout))
				}
			}},
	}
}

// seedRunsRefused are the rows refused before running: bad parameters, a
// place outside the project, the policy. Only harmless commands here: if the
// policy ever let one through, it would really run.
func seedRunsRefused() []seedRun {
	return []seedRun{
		{"000 mv is refused before running", "000-dm_cc.toml", shellgate.Request{Command: "mv a.txt b.txt"},
			func(t *testing.T, root string, e envelope.Envelope) {
				if e.Status != envelope.Error || !refused(e, envelope.PolicyDenied) || e.Error.Rule != "user.deny" || e.Data.ExitCode != nil {
					t.Errorf("want a POLICY_DENIED error with no exit code, got %s %+v", e.Status, e.Error)
				}
				if _, err := os.Stat(filepath.Join(root, "a.txt")); err != nil {
					t.Errorf("the refused mv ran: %v", err)
				}
			}},
		{"001 cd outside is ACCESS_DENIED", "001-bashtool.toml", shellgate.Request{Command: "cd .. && pwd"},
			func(t *testing.T, _ string, e envelope.Envelope) {
				if !refused(e, envelope.AccessDenied) {
					t.Errorf("want ACCESS_DENIED, got %s %+v", e.Status, e.Error)
				}
			}},
		{"000 a workdir outside the project is refused", "000-dm_cc.toml", shellgate.Request{Command: "pwd", Directory: "/"},
			func(t *testing.T, _ string, e envelope.Envelope) {
				if !refused(e, envelope.AccessDenied) || e.Data.Stdout != "" {
					t.Errorf("want ACCESS_DENIED (dm_cc's next step: stay in the project), got %s %+v", e.Status, e.Error)
				}
			}},
		{"001 §6 command missing", "001-bashtool.toml", shellgate.Request{Command: ""},
			func(t *testing.T, _ string, e envelope.Envelope) {
				if !refused(e, envelope.InvalidParam) || e.Error.Message != "Missing required parameter 'command'." {
					t.Errorf("got %s %+v", e.Status, e.Error)
				}
			}},
		{"001 §6 timeout_ms above 600000", "001-bashtool.toml", shellgate.Request{Command: "true", TimeoutMS: ms(600001)},
			func(t *testing.T, _ string, e envelope.Envelope) {
				if !refused(e, envelope.InvalidParam) || !strings.Contains(e.Error.Message, "between 1 and 600000") {
					t.Errorf("got %s %+v", e.Status, e.Error)
				}
			}},
		{"001 §6 timeout_ms 0", "001-bashtool.toml", shellgate.Request{Command: "true", TimeoutMS: ms(0)},
			func(t *testing.T, _ string, e envelope.Envelope) {
				if !refused(e, envelope.InvalidParam) {
					t.Errorf("got %s %+v", e.Status, e.Error)
				}
			}},
		{"001 §6 directory does not exist", "001-bashtool.toml", shellgate.Request{Command: "true", Directory: "nope"},
			func(t *testing.T, _ string, e envelope.Envelope) {
				if !refused(e, envelope.NotFound) || e.Error.Message != "Directory 'nope' does not exist." {
					t.Errorf("got %s %+v", e.Status, e.Error)
				}
			}},
		{"001 §6 directory outside the root", "001-bashtool.toml", shellgate.Request{Command: "true", Directory: "../"},
			func(t *testing.T, _ string, e envelope.Envelope) {
				if !refused(e, envelope.AccessDenied) || !strings.Contains(e.Error.Message, "Path must be within project root") {
					t.Errorf("got %s %+v", e.Status, e.Error)
				}
			}},
		{"001 §5.4 ls is refused with a pointer to the tools", "001-bashtool.toml", shellgate.Request{Command: "ls"},
			func(t *testing.T, _ string, e envelope.Envelope) {
				if !refused(e, envelope.PolicyDenied) || e.Data.Stdout != "" {
					t.Errorf("got %s %+v", e.Status, e.Error)
				}
			}},
		{"003 an ask with nobody to ask does not run", "003-gemini-cli.toml", shellgate.Request{Command: "touch asked.txt"},
			func(t *testing.T, root string, e envelope.Envelope) {
				if !refused(e, envelope.ApprovalRequired) {
					t.Errorf("want APPROVAL_REQUIRED, got %s %+v", e.Status, e.Error)
				}
				if _, err := os.Stat(filepath.Join(root, "asked.txt")); err == nil {
					t.Errorf("the unapproved command ran")
				}
			}},
	}
}

// Seed 003: a command cancelled before it starts does not run.
func TestSeed003CancelledBeforeStart(t *testing.T) {
	l := load(t, "003-gemini-cli.toml", nil)
	g, err := shellgate.New(l.cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	e := g.Run(ctx, shellgate.Request{Command: "make"})
	if e.Status != envelope.Error || e.Error == nil || e.Error.Code != envelope.Cancelled || e.Data.ExitCode != nil {
		t.Errorf("want a CANCELLED error with no exit code, got %s %+v", e.Status, e.Error)
	}
}
