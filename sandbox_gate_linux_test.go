package shellgate_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shellgate/shellgate/internal/lane"
	"github.com/shellgate/shellgate/internal/textpages/textpagestest"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/envelope"
)

// A failure the sandbox caused is explained in the text, with how to allow it;
// an allow that relied on the sandbox says so.
func TestSandboxExplainsItself(t *testing.T) {
	lane.Live(t)
	requireSandbox(t)
	l := newLab(t)
	must(t, os.MkdirAll(filepath.Join(l.root, ".git", "hooks"), 0o755))
	must(t, os.WriteFile(filepath.Join(l.outside, "victim"), []byte("v\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(l.outside, "token"), []byte("t\n"), 0o600))
	g := gate(t, shellgate.Config{Root: l.root, Sandbox: shellgate.SandboxConfig{Hide: []string{filepath.Join(l.outside, "token")}}})
	for _, c := range []struct{ command, hint string }{
		// A secret is never offered for showing.
		{`cat ` + l.outside + `/token`, l.outside + "/token holds credentials: the sandbox never shows them"},
		{`python3 -c 'open("/etc/shellgate-test", "w")'`, "keeps this path read-only: it is outside the project root"},
		{`cat ` + l.outside + `/victim`, l.outside + "/victim exists on this machine, but the sandbox shows"},
		{`python3 -c 'open("` + l.outside + `/victim")'`, "[sandbox] visible"},
		{`python3 -c 'open(".git/hooks/pre-commit", "w")'`, "keeps protected paths read-only"},
		{`python3 -c 'import socket; socket.create_connection(("example.com", 80), 2)'`, "no network but a loopback"},
	} {
		env := run(t, g, shellgate.Request{Command: c.command})
		if env.Status != envelope.Partial || !strings.Contains(env.Text, c.hint) {
			t.Errorf("%s: %s, text lacks %q:\n%s", c.command, env.Status, c.hint, env.Text)
		}
		sb, ok := env.Context.Sandbox.(map[string]any)
		if !ok || sb["fs"] == nil || sb["net"] != "netns" {
			t.Errorf("%s: context.sandbox %v", c.command, env.Context.Sandbox)
		}
	}
	// Stored code asks without the sandbox; in it, it runs, contained, and says so.
	env := run(t, g, shellgate.Request{Command: `x=$(printf 'touch /etc/shellgate-%s' test); eval "$x"`})
	if env.Context.Policy == nil || env.Context.Policy.Decision != "allow" || !env.Context.Policy.Sandboxed || !strings.Contains(env.Text, "keeps this path read-only") {
		t.Errorf("eval in the sandbox: %+v\n%s", env.Context.Policy, env.Text)
	}
	if _, err := os.Stat("/etc/shellgate-test"); err == nil {
		os.Remove("/etc/shellgate-test")
		t.Error("the sandbox let a command write /etc")
	}
	if env := run(t, g, shellgate.Request{Command: "ls /nonexistent"}); strings.Contains(env.Text, "sandbox") {
		t.Errorf("an ordinary failure blamed on the sandbox:\n%s", env.Text)
	}
}

// `shellgate doctor` names every layer and exits 0 when all apply.
func TestDoctor(t *testing.T) {
	lane.Live(t)
	requireSandbox(t)
	cmd := exec.Command("go", "run", "./cmd/shellgate", "doctor", "--no-user-config", "--root", t.TempDir())
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0") // as README runs it
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("doctor: %v\n%s", err, out.String())
	}
	for _, want := range []string{"fs:", "landlock-v", "net:", "netns", "pid:", "pidns", "secrets:", "hidden", "every layer applies"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("doctor output lacks %q:\n%s", want, out.String())
		}
	}
}

// In a project without git, what `git init` makes that git on the host would
// run (.git/config, .git/hooks, .git/info) is moved to the quarantine when the
// command ends, which the envelope says; git works without them, and what a
// later command writes there is moved too.
func TestGitInitQuarantined(t *testing.T) {
	lane.Live(t)
	requireSandbox(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git here")
	}
	l := newLab(t)
	g := gate(t, shellgate.Config{Root: l.root})
	env := run(t, g, shellgate.Request{Command: "git init -q && echo done"})
	if env.Status != envelope.Success || !strings.Contains(env.Text, "Moved .git/hooks, .git/config, .git/info to .shellgate-quarantine/ (read-only there)") || strings.Contains(env.Text, "New git repository") {
		t.Errorf("git init: %s\n%s", env.Status, env.Text)
	}
	for _, c := range []string{
		`python3 -c 'import os; os.makedirs(".git/hooks", exist_ok=True); open(".git/hooks/pre-commit", "w").write("#!/bin/sh\necho pwned\n")'`,
		`python3 -c 'open(".git/config", "a").write("[core]\n\tfsmonitor = echo pwned\n")'`,
	} {
		env = run(t, g, shellgate.Request{Command: c})
		if !strings.Contains(env.Text, "Moved .git/") {
			t.Errorf("%s: not told:\n%s", c, env.Text)
		}
	}
	if _, err := os.Stat(filepath.Join(l.root, ".git/hooks/pre-commit")); err == nil {
		t.Error("a hook stayed in .git/hooks")
	}
	if b, _ := os.ReadFile(filepath.Join(l.root, ".git/config")); strings.Contains(string(b), "fsmonitor") {
		t.Error("fsmonitor stayed in .git/config")
	}
	env = run(t, g, shellgate.Request{Command: "echo a > a && git add a && git -c user.name=a -c user.email=a@b commit -qm first && git log --format=%s"})
	if env.Data.Stdout != "first\n" {
		t.Errorf("git without its config:\n%s", env.Text)
	}
}

// A job that creates a protected path (.claude) unchecked finds it moved to the
// quarantine, and its read says so once it has ended: whether the job's end
// moved it or the guard did while the job ran on.
func TestSessionJobCreatesProtectedPath(t *testing.T) {
	lane.Live(t)
	requireSandbox(t)
	for name, after := range map[string]string{"at its end": "", "while it runs": "sleep 1; "} {
		t.Run(name, func(t *testing.T) {
			s, l := session(t, shellgate.Config{}, shellgate.SessionConfig{})
			ctx := context.Background()
			env := srun(t, s, shellgate.Request{Command: `sleep 0.3; python3 -c 'import os; os.makedirs(".claude")'; ` + after + `echo made`, RunInBackground: true})
			if env.Data.Job == nil {
				t.Fatalf("background start: %s\n%s", env.Status, env.Text)
			}
			var reads []string
			deadline := time.Now().Add(10 * time.Second)
			for env.Data.Job == nil || env.Data.Job.State == envelope.JobRunning {
				if time.Now().After(deadline) {
					t.Fatalf("the job did not end:\n%s", env.Text)
				}
				env = s.Output(ctx, env.Data.Job.ID, shellgate.JobRead{Until: "^made$", WaitMS: 1000})
				reads = append(reads, env.Text)
			}
			if !strings.Contains(env.Text, "Moved .claude to .shellgate-quarantine/") {
				t.Errorf("the ended job's read does not say so; the reads:\n%s", strings.Join(reads, "\n---\n"))
			}
			if _, err := os.Stat(filepath.Join(l.root, ".claude")); err == nil {
				t.Error(".claude stayed in the root")
			}
			if got, _ := filepath.Glob(filepath.Join(l.root, ".shellgate-quarantine/*/.claude")); len(got) != 1 {
				t.Errorf("quarantined: %v", got)
			}
		})
	}
}

// A protected path created by code the policy could not check (the VS Code
// auto-approve setting, written by python) is moved to the quarantine; the
// same created by a command the user approved stays, read-only.
func TestProtectedPathCreatedQuarantined(t *testing.T) {
	lane.Live(t)
	requireSandbox(t)
	l := newLab(t)
	g := gate(t, shellgate.Config{Root: l.root})
	env := run(t, g, shellgate.Request{Command: `python3 -c 'import os; os.makedirs(".vscode"); open(".vscode/settings.json", "w").write("{\"chat.tools.autoApprove\": true}")'`})
	if _, err := os.Stat(filepath.Join(l.root, ".vscode")); err == nil || !strings.Contains(env.Text, "Moved .vscode to .shellgate-quarantine/") {
		t.Errorf("the unchecked .vscode (%v):\n%s", err, env.Text)
	}
	approve := shellgate.WithApprover(func(context.Context, shellgate.Question) shellgate.Answer { return shellgate.AllowOnce })
	env = run(t, g, shellgate.Request{Command: `mkdir -p .vscode && echo '{}' > .vscode/launch.json`}, approve)
	if env.Context.Policy == nil || env.Context.Policy.Approved == "" {
		t.Fatalf("not asked: %+v\n%s", env.Context.Policy, env.Text)
	}
	if b, err := os.ReadFile(filepath.Join(l.root, ".vscode/launch.json")); err != nil || string(b) != "{}\n" || !strings.Contains(env.Text, "protects only from now on") {
		t.Errorf("the approved .vscode (%q, %v):\n%s", b, err, env.Text)
	}
}

// An approval keeps only the protected paths the user was shown: the
// .vscode/settings.json the question named stays, the .claude the same
// command made unasked (by code the policy cannot read) is quarantined.
func TestApprovalKeepsOnlyShownPaths(t *testing.T) {
	lane.Live(t)
	requireSandbox(t)
	l := newLab(t)
	g := gate(t, shellgate.Config{Root: l.root})
	var shown []string
	approve := shellgate.WithApprover(func(_ context.Context, q shellgate.Question) shellgate.Answer {
		shown = append(shown, q.Reason)
		return shellgate.AllowOnce
	})
	env := run(t, g, shellgate.Request{Command: `mkdir -p .vscode && echo '{}' > .vscode/settings.json && python3 -c 'import os; os.makedirs(".claude"); open(".claude/settings.json", "w").write("{}")'`}, approve)
	if env.Context.Policy == nil || env.Context.Policy.Approved == "" {
		t.Fatalf("not asked: %s", env.Text)
	}
	if asked := strings.Join(shown, "\n"); !strings.Contains(asked, ".vscode/settings.json") || strings.Contains(asked, ".claude") {
		t.Fatalf("the questions were not the test's premise: %q", shown)
	}
	if b, err := os.ReadFile(filepath.Join(l.root, ".vscode/settings.json")); err != nil || string(b) != "{}\n" {
		t.Errorf("the approved .vscode/settings.json: %q %v\n%s", b, err, env.Text)
	}
	if _, err := os.Lstat(filepath.Join(l.root, ".claude")); err == nil || !strings.Contains(env.Text, "Moved .claude to .shellgate-quarantine/") {
		t.Errorf("the .claude no question named (%v):\n%s", err, env.Text)
	}
}

// Each Gate spills into a directory of its own, and its sandbox shows only
// that one: another project's session cannot read this one's full output.
func TestSpillPerSession(t *testing.T) {
	lane.Live(t)
	requireSandbox(t)
	spill := filepath.Join(visibleTempDir(t), "spill")
	a, b := newLab(t), newLab(t)
	ga := gate(t, shellgate.Config{Root: a.root, SpillDir: spill})
	gb := gate(t, shellgate.Config{Root: b.root, SpillDir: spill})
	env := run(t, ga, shellgate.Request{Command: "seq 1 30000; echo TOKEN=SPILL-MARKER-77; seq 1 30000"})
	if env.Data.FullOutputPath == nil {
		t.Fatalf("nothing spilled:\n%s", env.Text)
	}
	full := *env.Data.FullOutputPath
	if got := run(t, ga, shellgate.Request{Command: "grep -c SPILL-MARKER " + full}); !strings.Contains(got.Data.Stdout, "1") {
		t.Errorf("the session cannot read its own full output: %s", got.Text)
	}
	got := run(t, gb, shellgate.Request{Command: "grep -rh SPILL-MARKER " + spill + " " + filepath.Dir(full) + "; ls " + spill})
	if strings.Contains(got.Data.Stdout, "SPILL-MARKER") {
		t.Errorf("another session read this one's output:\n%s", got.Text)
	}
	if fi, err := os.Stat(filepath.Dir(full)); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("the session's spill dir: %v %v", fi.Mode(), err)
	}
}

// TestSandboxRestartReported: a sandbox session that died (a command took
// its helper down) is replaced by the next command, and that command's
// result says so: the jobs and the /tmp of the old one are gone.
func TestSandboxRestartReported(t *testing.T) {
	lane.Live(t)
	requireSandbox(t)
	l := newLab(t)
	before := sandboxHelpers(t)
	g := gate(t, shellgate.Config{Root: l.root})
	if env := run(t, g, shellgate.Request{Command: "echo first > \"$TMPDIR/x\""}); env.Error != nil {
		t.Fatalf("first command: %s", env.Text)
	}
	var ours []int
	for _, pid := range sandboxHelpers(t) {
		if !slices.Contains(before, pid) {
			ours = append(ours, pid)
		}
	}
	if len(ours) != 1 {
		t.Fatalf("want this gate's one helper, found %v (before: %v)", ours, before)
	}
	must(t, syscall.Kill(ours[0], syscall.SIGKILL))
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat("/proc/" + strconv.Itoa(ours[0])); err != nil {
			break // reaped: the gate's session knows it ended
		}
		if time.Now().After(deadline) {
			t.Fatal("the killed helper lives on")
		}
	}
	env := run(t, g, shellgate.Request{Command: "cat \"$TMPDIR/x\" 2>&1; echo ran"})
	if !strings.Contains(env.Data.Stdout, "ran") || !strings.Contains(env.Text, "new sandbox session") {
		t.Errorf("the command after the sandbox died does not say it runs in a new one:\n%s", env.Text)
	}
	if env := run(t, g, shellgate.Request{Command: "echo later"}); strings.Contains(env.Text, "new sandbox session") {
		t.Errorf("told again:\n%s", env.Text)
	}
}

// A command sent right after the sandbox's helper died, before the session
// has seen it go, runs in a new session (and says so) instead of failing
// with "the session ended".
func TestSandboxRestartRightAway(t *testing.T) {
	lane.Live(t)
	requireSandbox(t)
	before := sandboxHelpers(t)
	s, _ := session(t, shellgate.Config{}, shellgate.SessionConfig{})
	ours := func() []int { return helpersSince(t, before) }
	for round := range 3 { // the race is narrow: try it more than once
		if env := srun(t, s, shellgate.Request{Command: "echo up"}); env.Error != nil {
			t.Fatalf("round %d, before the kill: %s", round, env.Text)
		}
		helpers := ours()
		if len(helpers) != 1 {
			t.Fatalf("round %d: want the session's one helper, found %v", round, helpers)
		}
		must(t, syscall.Kill(helpers[0], syscall.SIGKILL))
		env := srun(t, s, shellgate.Request{Command: "echo ran"})
		if env.Data.Stdout != "ran\n" || !strings.Contains(env.Text, "new sandbox session") {
			t.Fatalf("round %d, right after the helper was killed:\n%s", round, env.Text)
		}
		before = append(before, helpers[0])
	}
}

// Gate.Idle (what `shellgate mcp` on stdio calls once its client has been
// quiet for 5 s) has each session's sandbox helper give up its mappings of
// the executable's pages, the Gate's own session's and a Session's; without
// it they keep them between calls (internal/sandbox:
// TestHelperKeepsPagesBetweenCalls).
func TestGateIdleHelpersGiveBackPages(t *testing.T) {
	lane.Live(t)
	requireSandbox(t)
	before := sandboxHelpers(t)
	l := newLab(t)
	g := gate(t, shellgate.Config{Root: l.root})
	s := g.NewSession(shellgate.SessionConfig{})
	t.Cleanup(func() { s.Close() })
	if env := run(t, g, shellgate.Request{Command: "echo hi"}); env.Data.Stdout != "hi\n" {
		t.Fatalf("the Gate's command:\n%s", env.Text)
	}
	if env := srun(t, s, shellgate.Request{Command: "echo hi"}); env.Data.Stdout != "hi\n" {
		t.Fatalf("the Session's command:\n%s", env.Text)
	}
	helpers := helpersSince(t, before)
	if len(helpers) != 2 {
		t.Fatalf("want two helpers, the Gate's session's and the Session's: %v", helpers)
	}
	mapped := map[int]int{}
	for _, pid := range helpers {
		mapped[pid] = exeResidentKB(t, pid)
	}
	time.Sleep(time.Second) // past the guards' spells: a Gate idle while commands run keeps them
	g.Idle()
	for _, pid := range helpers {
		for deadline := time.Now().Add(5 * time.Second); exeResidentKB(t, pid) >= mapped[pid]-1024; time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("helper %d still maps %d kB of its executable after Gate.Idle (%d kB after its command)", pid, exeResidentKB(t, pid), mapped[pid])
			}
		}
	}
	if env := srun(t, s, shellgate.Request{Command: "echo again"}); env.Data.Stdout != "again\n" {
		t.Fatalf("a command after Idle:\n%s", env.Text)
	}
}

// exeResidentKB returns the resident kB of pid's mappings of its executable.
func exeResidentKB(t *testing.T, pid int) int {
	t.Helper()
	kb, err := textpagestest.ExeResidentKB(pid)
	if err != nil {
		t.Fatal(err)
	}
	return kb
}

// sandboxHelpers lists the sandbox helpers this process started.
// helpersSince lists the sandbox helpers that were not among before.
func helpersSince(t *testing.T, before []int) []int {
	var pids []int
	for _, pid := range sandboxHelpers(t) {
		if !slices.Contains(before, pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func sandboxHelpers(t *testing.T) []int {
	t.Helper()
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		stat, _ := os.ReadFile("/proc/" + e.Name() + "/stat")
		if f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:])); bytes.HasPrefix(cmdline, []byte("shellgate-sandbox-session\x00")) &&
			len(f) > 1 && f[1] == strconv.Itoa(os.Getpid()) && f[0] != "Z" {
			pids = append(pids, pid)
		}
	}
	return pids
}

// A command that writes two protected paths is one question naming both, and
// the approval keeps both: the question used to name only the first, and the
// second was quarantined although the user approved the command that wrote it.
func TestApprovalNamesEveryPathOfACommand(t *testing.T) {
	lane.Live(t)
	requireSandbox(t)
	l := newLab(t)
	g := gate(t, shellgate.Config{Root: l.root})
	var shown []string
	approve := shellgate.WithApprover(func(_ context.Context, q shellgate.Question) shellgate.Answer {
		shown = append(shown, q.Reason)
		return shellgate.AllowOnce
	})
	env := run(t, g, shellgate.Request{Command: `echo '{}' | tee .envrc .mcp.json`}, approve)
	if len(shown) != 1 || !strings.Contains(shown[0], filepath.Join(l.root, ".envrc")) || !strings.Contains(shown[0], filepath.Join(l.root, ".mcp.json")) {
		t.Errorf("want one question naming .envrc and .mcp.json, got %q", shown)
	}
	for _, f := range []string{".envrc", ".mcp.json"} {
		if b, err := os.ReadFile(filepath.Join(l.root, f)); err != nil || string(b) != "{}\n" {
			t.Errorf("the approved %s: %q %v\n%s", f, b, err, env.Text)
		}
	}
}

// A terminal job sent right after the sandbox's helper died runs in a new
// session (and says so), as a plain command does, instead of failing with
// "the session ended": its terminal is opened in the new session.
func TestSandboxRestartTerminal(t *testing.T) {
	lane.Live(t)
	requireSandbox(t)
	before := sandboxHelpers(t)
	s, _ := session(t, shellgate.Config{}, shellgate.SessionConfig{})
	ours := func() []int { return helpersSince(t, before) }
	for round := range 2 {
		if env := srun(t, s, shellgate.Request{Command: "echo up"}); env.Error != nil {
			t.Fatalf("round %d, before the kill: %s", round, env.Text)
		}
		helpers := ours()
		if len(helpers) != 1 {
			t.Fatalf("round %d: want the session's one helper, found %v", round, helpers)
		}
		must(t, syscall.Kill(helpers[0], syscall.SIGKILL))
		if round == 1 { // the session has seen it go
			for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				if _, err := os.Stat("/proc/" + strconv.Itoa(helpers[0])); err != nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the killed helper lives on")
				}
			}
		}
		env := srun(t, s, shellgate.Request{Command: "tty; [ -t 0 ] && echo interactive", TTY: true})
		if env.Error != nil || !strings.Contains(env.Data.Stdout, "interactive") || !strings.Contains(env.Text, "new sandbox session") {
			t.Fatalf("round %d, a terminal job right after the helper was killed:\n%s", round, env.Text)
		}
		before = append(before, helpers[0])
	}
}

// A command that reaches the session's process limit — a fork bomb — is
// stopped and its envelope says why, while the session goes on: a job started
// before it still runs after it, and the next call works in the same session
// (no "session had ended" note). Before, the bomb took the session's helper
// down, and the kernel ended the session with every job in it.
func TestForkBombStoppedSessionLivesOn(t *testing.T) {
	lane.Live(t)
	requireSandbox(t)
	s, _ := session(t, shellgate.Config{Sandbox: shellgate.SandboxConfig{Limits: shellgate.SandboxLimits{Procs: 128}}}, shellgate.SessionConfig{})
	ctx := context.Background()
	env := srun(t, s, shellgate.Request{Command: "exec sleep 6031.5", RunInBackground: true})
	if env.Status != envelope.Success || env.Data.Job == nil {
		t.Fatalf("the job: %s\n%s", env.Status, env.Text)
	}
	if sb, _ := env.Context.Sandbox.(map[string]any); sb["procs"] != "cgroup" {
		t.Skipf("no cgroup process limit here: %v", env.Context.Sandbox)
	}
	job := env.Data.Job.ID
	timeout := int64(30000)
	env = srun(t, s, shellgate.Request{Command: "while :; do sleep 6032.5 & done", TimeoutMS: &timeout})
	if env.Data.TimedOut || env.Data.Signal == nil || *env.Data.Signal != "SIGKILL" || !strings.Contains(env.Text, "reached the sandbox session's limit of 128 processes") {
		t.Errorf("the bomb's envelope (%s, timed out %v, signal %v) does not say it was stopped at the limit:\n%s", env.Status, env.Data.TimedOut, env.Data.Signal, env.Text)
	}
	if env := s.Output(ctx, job, shellgate.JobRead{}); env.Data.Job == nil || env.Data.Job.State != envelope.JobRunning {
		t.Errorf("the job started before the bomb did not outlive it:\n%s", env.Text)
	}
	env = srun(t, s, shellgate.Request{Command: "echo after"})
	if env.Status != envelope.Success || env.Data.Stdout != "after\n" || strings.Contains(env.Text, "session had ended") {
		t.Errorf("the call after the bomb: %s\n%s", env.Status, env.Text)
	}
	// A bomb a call leaves running is stopped too, and the next call says so.
	env = srun(t, s, shellgate.Request{Command: "(while :; do sleep 6033.5 & done) >/dev/null 2>&1 & exit 0"})
	if env.Status != envelope.Success {
		t.Fatalf("the call that leaves a bomb: %s\n%s", env.Status, env.Text)
	}
	time.Sleep(time.Second) // it reaches the limit, and is stopped
	env = srun(t, s, shellgate.Request{Command: "echo later"})
	if env.Status != envelope.Success || !strings.Contains(env.Text, "processes an earlier command left running after its call returned reached the sandbox session's limit of 128") {
		t.Errorf("the call after a bomb left running does not tell it was stopped: %s\n%s", env.Status, env.Text)
	}
	if env := s.Output(ctx, job, shellgate.JobRead{}); env.Data.Job == nil || env.Data.Job.State != envelope.JobRunning {
		t.Errorf("the job did not outlive the second bomb:\n%s", env.Text)
	}
}

// The sandbox refuses every .pyc in the root (a forged one runs on the host
// while the source shows other code): the session's Python keeps its caches
// in a tool cache of the project's own (PYTHONPYCACHEPREFIX), where the next
// run finds them, and leaves none in the project.
func TestPythonRunsWithoutBytecodeInRoot(t *testing.T) {
	lane.Live(t)
	requireSandbox(t)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3 here")
	}
	l := newLab(t)
	for name, text := range map[string]string{"util.py": "def greet():\n    return 'hi'\n", "app.py": "import util\nprint(util.greet())\n"} {
		if err := os.WriteFile(filepath.Join(l.root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	g := gate(t, shellgate.Config{Root: l.root})
	for range 2 {
		// (the CI sets PYTHONDONTWRITEBYTECODE, a user rarely does)
		env := run(t, g, shellgate.Request{Command: "env -u PYTHONDONTWRITEBYTECODE python3 app.py"})
		if env.Data.Stdout != "hi\n" || env.Status != envelope.Success {
			t.Fatalf("python3 app.py: %s\n%s", env.Status, env.Text)
		}
	}
	if got, _ := filepath.Glob(filepath.Join(l.root, "__pycache__", "*")); len(got) > 0 {
		t.Errorf("the session's python left bytecode in the root: %v", got)
	}
	env := run(t, g, shellgate.Request{Command: `python3 -c 'import importlib.util as u, os; c = u.cache_from_source(os.path.abspath("util.py")); print(os.path.exists(c), c.startswith(os.getcwd()))'`})
	if env.Data.Stdout != "True False\n" {
		t.Errorf("the session's cache of util.py (exists, in the root): %q\n%s", env.Data.Stdout, env.Text)
	}
}
