package shellgate_test

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/envelope"
	"github.com/shellgate/shellgate/internal/lane"
	"github.com/shellgate/shellgate/internal/sandbox"
)

// TestSubreapGate runs TestSubreapGateChild and the tests of jobs in a child
// process that called Subreap, as the shellgate command does (it is for the
// whole process).
func TestSubreapGate(t *testing.T) {
	lane.Live(t)
	if os.Getenv(subreapEnv) == "1" {
		t.Skip("in the child")
	}
	// With the tests of jobs and of what commands leave, as a subreaper.
	run := "^(TestSubreapGateChild|TestBackgroundReturnsAtOnce|TestTimeoutKillsEverything|TestTimeoutKillsEscapedTree|TestJobKillKillsEscapedTree|TestSessionBackgroundJob|TestSessionJobLimitsAndClose|TestRunAfterCloseHavingRun)$"
	cmd := exec.Command(os.Args[0], "-test.run", run, "-test.v", "-test.count=1", "-test.timeout=10m")
	cmd.Env = append(os.Environ(), subreapEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestSubreapGateChild") {
		t.Fatalf("the child: %v\n%s", err, out)
	}
}

// Without the sandbox, in a process that called Subreap, a job left by
// `setsid …&` is reparented to this process, and still reported, as one left
// by `nohup …&` is; Close ends both, and they are reaped, not left as
// zombies.
func TestSubreapGateChild(t *testing.T) {
	if os.Getenv(subreapEnv) != "1" {
		t.Skip("only in TestSubreapGate's child")
	}
	g, err := shellgate.New(shellgate.Config{Root: t.TempDir(), SpillDir: t.TempDir(), Sandbox: shellgate.SandboxConfig{Mode: sandbox.Off}})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	self := os.Getpid()
	var left []int
	for _, bg := range []string{"setsid sleep 30 &", "nohup sleep 30 &"} {
		env := g.Run(context.Background(), shellgate.Request{Command: bg})
		if env.Status != envelope.Success || len(env.Data.BackgroundPIDs) != 1 {
			t.Fatalf("%s: %s, background PIDs %v:\n%s", bg, env.Status, env.Data.BackgroundPIDs, env.Text)
		}
		left = append(left, env.Data.BackgroundPIDs...)
	}
	if p := parent(left[0]); p != self {
		t.Errorf("the setsid job's parent is %d, want this process (%d)", p, self)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for _, pid := range left {
		for parent(pid) == self && time.Now().Before(deadline) { // a zombie until reaped
			time.Sleep(10 * time.Millisecond)
		}
		if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err == nil && parent(pid) == self {
			t.Errorf("job %d still there after Close (a child of this process)", pid)
		}
	}
}

// parent returns pid's parent, 0 once it is gone.
func parent(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	p, _ := strconv.Atoi(f[1])
	return p
}
