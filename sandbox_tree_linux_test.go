package shellgate_test

import (
	"context"
	"testing"
	"time"

	"github.com/shellgate/shellgate/internal/lane"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/envelope"
)

// requireTrees skips, saying why, unless env ran in a sandbox whose commands
// get cgroups of their own.
func requireTrees(t *testing.T, env envelope.Envelope) {
	t.Helper()
	sb, _ := env.Context.Sandbox.(map[string]any)
	if sb["procs"] != "cgroup" {
		t.Skipf("no cgroup per command here (context.sandbox %v): a descendant that leaves its group and clears its environment lives until the session ends", env.Context.Sandbox)
	}
}

// waitCount polls until countCmdline(s) is want or a few seconds passed. An
// argv is NUL-separated in /proc: "sleep\x00N" is the sleep, not the shell
// whose command line mentions it.
func waitCount(t *testing.T, s string, want int) int {
	t.Helper()
	n := countCmdline(t, s)
	for deadline := time.Now().Add(3 * time.Second); n != want && time.Now().Before(deadline); n = countCmdline(t, s) {
		time.Sleep(20 * time.Millisecond)
	}
	return n
}

// A command that times out takes with it the descendant that left its group
// and cleared its environment; a background process that a command which
// exited normally left keeps running in the open session, and dies at Close.
func TestTimeoutKillsEscapedTree(t *testing.T) {
	lane.Live(t)
	requireSandbox(t)
	g := gate(t, shellgate.Config{})
	env := run(t, g, shellgate.Request{Command: "sleep 7012.5 >/dev/null 2>&1 &"})
	requireTrees(t, env)
	if n := waitCount(t, "sleep\x007012.5", 1); n != 1 {
		t.Fatalf("the background sleep is not running (%d): %s\n%s", n, env.Status, env.Text)
	}
	started := make(chan int, 1)
	go func() { started <- waitCount(t, "sleep\x007011.5", 1) }()
	env = run(t, g, shellgate.Request{Command: "setsid -f env -i sleep 7011.5; sleep 100", Timeout: time.Second})
	if !env.Data.TimedOut {
		t.Fatalf("status %s, not timed out\n%s", env.Status, env.Text)
	}
	if n := <-started; n != 1 {
		t.Fatalf("the escape did not start (%d)", n)
	}
	if n := countCmdline(t, "sleep\x007011.5"); n != 0 {
		t.Errorf("%d escaped descendants survived the timeout", n)
	}
	if n := countCmdline(t, "sleep\x007012.5"); n != 1 {
		t.Errorf("the background sleep of an earlier command died with the timed-out one (%d left)", n)
	}
	must(t, g.Close())
	if n := countCmdline(t, "sleep\x007012.5"); n != 0 {
		t.Errorf("the background sleep survived Close")
	}
}

// Killing a session's job kills what the job started, however it escaped.
func TestJobKillKillsEscapedTree(t *testing.T) {
	lane.Live(t)
	requireSandbox(t)
	s, _ := session(t, shellgate.Config{}, shellgate.SessionConfig{})
	env := srun(t, s, shellgate.Request{Command: "setsid -f env -i sleep 7013.5; sleep 100", RunInBackground: true})
	requireTrees(t, env)
	if env.Data.Job == nil {
		t.Fatalf("no job: %s\n%s", env.Status, env.Text)
	}
	if n := waitCount(t, "sleep\x007013.5", 1); n != 1 {
		t.Fatalf("the escape is not running (%d)", n)
	}
	s.Kill(context.Background(), env.Data.Job.ID)
	if n := waitCount(t, "sleep\x007013.5", 0); n != 0 {
		t.Errorf("%d escaped descendants survived the job's kill", n)
	}
	if env := srun(t, s, shellgate.Request{Command: "echo still here"}); env.Status != envelope.Success {
		t.Errorf("the session did not survive the job's kill: %s\n%s", env.Status, env.Text)
	}
}
