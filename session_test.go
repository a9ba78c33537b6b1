package shellgate_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shellgate/shellgate/internal/lane"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/envelope"
	"github.com/shellgate/shellgate/internal/sandbox"
)

func session(t *testing.T, cfg shellgate.Config, sc shellgate.SessionConfig) (*shellgate.Session, lab) {
	t.Helper()
	l := newLab(t)
	if cfg.Root == "" {
		cfg.Root = l.root
	}
	s := gate(t, cfg).NewSession(sc)
	t.Cleanup(func() { s.Close() })
	return s, l
}

func srun(t *testing.T, s *shellgate.Session, req shellgate.Request) envelope.Envelope {
	t.Helper()
	return s.Run(context.Background(), req)
}

func TestSessionCdPersists(t *testing.T) {
	lane.Live(t)
	s, l := session(t, shellgate.Config{}, shellgate.SessionConfig{})
	env := srun(t, s, shellgate.Request{Command: "cd sub"})
	if env.Status != envelope.Success || s.Cwd() != "sub" {
		t.Fatalf("cd sub: status %s, cwd %q\n%s", env.Status, s.Cwd(), env.Text)
	}
	env = srun(t, s, shellgate.Request{Command: "pwd"})
	if got := strings.TrimSpace(env.Data.Stdout); got != filepath.Join(l.root, "sub") || env.Context.Cwd != "sub" {
		t.Fatalf("pwd after cd sub = %q (cwd %q), want %s/sub", got, env.Context.Cwd, l.root)
	}
	// An explicit directory is relative to the root, not to the session's.
	env = srun(t, s, shellgate.Request{Command: "pwd", Directory: "."})
	if got := strings.TrimSpace(env.Data.Stdout); got != l.root {
		t.Fatalf("pwd in . = %q, want the root", got)
	}
	// Out of the root: refused by the policy, and the session stays.
	env = srun(t, s, shellgate.Request{Command: "cd ../.."})
	if env.Status != envelope.Error || s.Cwd() != "sub" {
		t.Fatalf("cd ../.. from sub: status %s, cwd %q\n%s", env.Status, s.Cwd(), env.Text)
	}
	// A directory the parser cannot see is checked when the command has ended.
	env = srun(t, s, shellgate.Request{Command: `d=$(printf '%s' "$OLDPWD"); cd "$(dirname "$(dirname "$PWD")")"`})
	if s.Cwd() != "sub" || !strings.Contains(env.Text, "outside the project root") {
		t.Fatalf("dynamic cd out of the root: cwd %q\n%s", s.Cwd(), env.Text)
	}
	// cd .. back to the root works, and is said.
	env = srun(t, s, shellgate.Request{Command: "cd .."})
	if s.Cwd() != "." || !strings.Contains(env.Text, "directory is now .") {
		t.Fatalf("cd ..: cwd %q\n%s", s.Cwd(), env.Text)
	}
	// Exit status and fd 3 are the command's own.
	env = srun(t, s, shellgate.Request{Command: "cd sub; echo three >&3; exit 7"})
	if env.Data.ExitCode == nil || *env.Data.ExitCode != 7 || !strings.Contains(env.Data.Stderr, "Bad file descriptor") || s.Cwd() != "sub" {
		t.Fatalf("exit 7 after cd: exit %v, cwd %q, stderr %q", env.Data.ExitCode, s.Cwd(), env.Data.Stderr)
	}
}

func TestSessionBackgroundJob(t *testing.T) {
	lane.Live(t)
	s, _ := session(t, shellgate.Config{}, shellgate.SessionConfig{})
	ctx := context.Background()
	env := srun(t, s, shellgate.Request{Command: `for i in 1 2 3; do echo line $i; sleep 0.2; done; echo ready >&2; sleep 30`, RunInBackground: true})
	if env.Status != envelope.Success || env.Data.Job == nil || env.Data.Job.State != envelope.JobRunning {
		t.Fatalf("background start: %s\n%s", env.Status, env.Text)
	}
	id := env.Data.Job.ID
	// until without wait_ms waits for the line (UntilWait at the most): one
	// asking for a server's ready line means to wait for it.
	env = s.Output(ctx, id, shellgate.JobRead{Until: "^ready$"})
	if env.Data.Job == nil || env.Data.Job.State != envelope.JobRunning || !strings.Contains(env.Data.Stderr, "ready") {
		t.Fatalf("until ready: %q %q\n%s", env.Data.Stdout, env.Data.Stderr, env.Text)
	}
	all := env.Data.Stdout
	// Since the last read: nothing new.
	env = s.Output(ctx, id, shellgate.JobRead{})
	if env.Data.Stdout != "" || env.Data.Stderr != "" {
		t.Fatalf("second read returned %q %q, want nothing new", env.Data.Stdout, env.Data.Stderr)
	}
	if !strings.Contains(all, "line 1") && !strings.Contains(all, "line 3") {
		t.Fatalf("first read lost lines: %q", all)
	}
	env = s.Output(ctx, id, shellgate.JobRead{TailLines: 1})
	if env.Data.Stdout != "line 3\n" {
		t.Fatalf("tail 1 = %q", env.Data.Stdout)
	}
	env = s.Output(ctx, id, shellgate.JobRead{TailLines: 10, Filter: "2$"})
	if env.Data.Stdout != "line 2\n" {
		t.Fatalf("filter 2$ = %q", env.Data.Stdout)
	}
	env = s.Jobs()
	if len(env.Data.Jobs) != 1 || env.Data.Jobs[0].State != envelope.JobRunning || env.Data.Jobs[0].StdoutBytes != 21 {
		t.Fatalf("list: %+v\n%s", env.Data.Jobs, env.Text)
	}
	env = s.Kill(ctx, id)
	if env.Data.Job == nil || env.Data.Job.State != envelope.JobKilled {
		t.Fatalf("kill: %s", env.Text)
	}
	if env = s.Output(ctx, "j99", shellgate.JobRead{}); env.Error == nil || env.Error.Code != envelope.NotFound {
		t.Fatalf("unknown job: %s", env.Text)
	}
}

func TestSessionYield(t *testing.T) {
	lane.Live(t)
	s, _ := session(t, shellgate.Config{}, shellgate.SessionConfig{})
	ctx := context.Background()
	env := srun(t, s, shellgate.Request{Command: "echo first; sleep 0.6; echo second; exit 3", YieldAfterMS: ms(200)})
	// At the yield the job still sleeps; "first" is there unless a loaded
	// machine started bash late: what the yield and the reads return
	// together is the whole output, once.
	if env.Data.Job == nil || env.Data.Job.State != envelope.JobRunning || env.Data.Stdout != "first\n" && env.Data.Stdout != "" {
		t.Fatalf("yield: %+v %q\n%s", env.Data.Job, env.Data.Stdout, env.Text)
	}
	// The headline says it runs on as a job, and for how long: no line says
	// it again ("Still running after 200ms; … it goes on as a job").
	if !strings.HasPrefix(env.Text, "Running as job "+env.Data.Job.ID+": echo first;") || strings.Count(env.Text, "\n[") != 1 {
		t.Errorf("yield's text:\n%s", env.Text)
	}
	out := env.Data.Stdout
	env = s.Output(ctx, env.Data.Job.ID, shellgate.JobRead{WaitMS: 5000})
	out += env.Data.Stdout
	for env.Data.Job.Running() {
		env = s.Output(ctx, env.Data.Job.ID, shellgate.JobRead{WaitMS: 5000})
		out += env.Data.Stdout
	}
	if out != "first\nsecond\n" {
		t.Errorf("the yield and the reads returned %q", out)
	}
	if env.Data.ExitCode == nil || *env.Data.ExitCode != 3 || env.Data.Job.State != envelope.JobExited || env.Status != envelope.Partial {
		t.Fatalf("after yield: exit %v state %s status %s\n%s", env.Data.ExitCode, env.Data.Job.State, env.Status, env.Text)
	}
	// A quick command never becomes a job.
	env = srun(t, s, shellgate.Request{Command: "echo quick", YieldAfterMS: ms(5000)})
	if env.Data.Job != nil || env.Data.Stdout != "quick\n" || env.Status != envelope.Success {
		t.Fatalf("quick with yield: %s", env.Text)
	}
}

func TestSessionJobLimitsAndClose(t *testing.T) {
	lane.Live(t)
	s, _ := session(t, shellgate.Config{}, shellgate.SessionConfig{Jobs: shellgate.JobLimits{MaxRunning: 2}})
	tag := newTag()
	for i := range 2 {
		env := srun(t, s, shellgate.Request{Command: fmt.Sprintf("sleep 600 # %s %d", tag, i), RunInBackground: true})
		if env.Data.Job == nil {
			t.Fatalf("job %d: %s", i, env.Text)
		}
	}
	env := srun(t, s, shellgate.Request{Command: "sleep 1", RunInBackground: true})
	if env.Error == nil || !strings.Contains(env.Error.Message, "2 jobs are running") {
		t.Fatalf("third job: %s", env.Text)
	}
	// A foreground call still runs; it just cannot become a job.
	if env := srun(t, s, shellgate.Request{Command: "sleep 0.3; echo hi", YieldAfterMS: ms(50)}); env.Data.Stdout != "hi\n" || !strings.Contains(env.Text, "could not go on as a job") {
		t.Fatalf("foreground call at the job limit: %s", env.Text)
	}
	// The two shells (a forked child is a third until it execs sleep).
	for deadline := time.Now().Add(5 * time.Second); countCmdline(t, string(tag)) != 2; {
		if time.Now().After(deadline) {
			t.Fatalf("%d tagged shells before Close, want 2", countCmdline(t, string(tag)))
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.Close()
	if n := countCmdline(t, string(tag)); n != 0 {
		t.Fatalf("%d tagged processes left after Close", n)
	}
	if env := srun(t, s, shellgate.Request{Command: "true"}); env.Status != envelope.Error {
		t.Fatalf("run after Close: %s", env.Text)
	}
}

// countCmdline counts live processes whose command line contains s.
func countCmdline(t *testing.T, s string) int {
	t.Helper()
	entries, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range entries {
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && strings.Contains(string(b), s) && !strings.Contains(string(b), "go test") {
			var pid int
			if _, err := fmt.Sscan(e.Name(), &pid); err == nil && alive(pid) {
				n++
			}
		}
	}
	return n
}

func TestSessionOutputBounded(t *testing.T) {
	lane.Live(t)
	s, _ := session(t, shellgate.Config{OutputLimit: 1000}, shellgate.SessionConfig{})
	ctx := context.Background()
	// The pause keeps the output out of the call's own envelope, which would
	// count as read: the read below is to start at the first line.
	env := srun(t, s, shellgate.Request{Command: "sleep 1; seq 1 200000; sleep 30", RunInBackground: true})
	id := env.Data.Job.ID
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if l := s.Jobs().Data.Jobs[0]; l.StdoutBytes >= 1288895 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	env = s.Output(ctx, id, shellgate.JobRead{})
	if len(env.Data.Stdout) > 1200 || !env.Data.Truncated || !strings.HasPrefix(env.Data.Stdout, "1\n2\n") || !strings.HasSuffix(env.Data.Stdout, "200000\n") {
		t.Fatalf("bounded read: %d bytes, truncated %v\n%s", len(env.Data.Stdout), env.Data.Truncated, env.Text)
	}
	// The text names the job's output file once and says to read the rest there,
	// not to rerun the command or redirect it to a file of its own.
	if strings.Count(env.Text, "full output: /") != 1 || !strings.Contains(env.Text, "read the rest from the full output file") ||
		strings.Contains(env.Text, "redirect") {
		t.Errorf("bounded read's text:\n%.600s", env.Text)
	}
}

func TestSessionWaitingForInput(t *testing.T) {
	lane.Live(t)
	s, _ := session(t, shellgate.Config{}, shellgate.SessionConfig{})
	ctx := context.Background()
	start := time.Now()
	env := srun(t, s, shellgate.Request{Command: "read -p 'name? ' x; echo hi $x"})
	// (bash shows read's prompt only on a terminal)
	if env.Data.Job == nil || env.Data.Job.State != envelope.JobWaiting {
		t.Fatalf("read -p: %s", env.Text)
	}
	// Not a speed check: seconds on a loaded machine, not the call's wait.
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("waiting for input reported after %s", d)
	}
	// How to answer is said once, as the call becomes a job; a read of it
	// while it waits (the model knows the tools by then) says that it waits.
	const answer = "answer with job_input"
	if strings.Count(env.Text, answer) != 1 {
		t.Errorf("read -p's start:\n%s", env.Text)
	}
	if again := s.Output(ctx, env.Data.Job.ID, shellgate.JobRead{}); !strings.HasPrefix(again.Text, "Waiting for input: job ") || strings.Contains(again.Text, answer) {
		t.Errorf("a read of the waiting job:\n%s", again.Text)
	}
	env = s.Input(ctx, env.Data.Job.ID, shellgate.JobInput{Text: "bob", Keys: []string{"Enter"}})
	for env.Data.Job != nil && env.Data.Job.Running() {
		env = s.Output(ctx, env.Data.Job.ID, shellgate.JobRead{WaitMS: 5000})
	}
	if env.Data.ExitCode == nil || *env.Data.ExitCode != 0 {
		t.Fatalf("after the answer: %s", env.Text)
	}
	tail := s.Output(ctx, env.Data.Job.ID, shellgate.JobRead{TailLines: 5})
	if tail.Data.Stdout != "hi bob\n" || !strings.Contains(tail.Text, "--- STDOUT (last 5 lines; 7 bytes in all) ---\nhi bob") {
		t.Fatalf("output = %q\n%s", tail.Data.Stdout, tail.Text)
	}
	// Ctrl-D on a pipe is the end of input; a sleep is not waiting for input.
	env = srun(t, s, shellgate.Request{Command: "cat; echo done"})
	if env.Data.Job == nil || env.Data.Job.State != envelope.JobWaiting {
		t.Fatalf("cat: %s", env.Text)
	}
	env = s.Input(ctx, env.Data.Job.ID, shellgate.JobInput{Text: "x\n", Keys: []string{"Ctrl-D"}})
	for env.Data.Job.Running() {
		env = s.Output(ctx, env.Data.Job.ID, shellgate.JobRead{WaitMS: 5000})
	}
	if all := s.Output(ctx, env.Data.Job.ID, shellgate.JobRead{TailLines: 5}); all.Data.Stdout != "x\ndone\n" {
		t.Fatalf("cat after Ctrl-D: %q", all.Data.Stdout)
	}
	env = srun(t, s, shellgate.Request{Command: "sleep 1; echo slept"})
	if env.Data.Job != nil || env.Data.Stdout != "slept\n" {
		t.Fatalf("sleep 1: %s", env.Text)
	}
}

func TestSessionTerminal(t *testing.T) {
	lane.Live(t)
	s, _ := session(t, shellgate.Config{}, shellgate.SessionConfig{})
	ctx := context.Background()
	env := srun(t, s, shellgate.Request{Command: "python3 -q", TTY: true})
	for i := 0; i < 10 && env.Data.Job != nil && env.Data.Job.State == envelope.JobRunning; i++ {
		env = s.Output(ctx, env.Data.Job.ID, shellgate.JobRead{WaitMS: 1000}) // a slow start on a loaded machine
	}
	if env.Data.Job == nil || env.Data.Job.State != envelope.JobWaiting || !strings.Contains(env.Data.Stdout, ">>>") {
		t.Fatalf("python3 on a terminal: %s", env.Text)
	}
	id := env.Data.Job.ID
	env = s.Input(ctx, id, shellgate.JobInput{Text: "print(6*7)\n"})
	if !strings.Contains(env.Data.Stdout, "42") || strings.Contains(env.Data.Stdout, "\x1b") {
		t.Fatalf("print(6*7): %q", env.Data.Stdout)
	}
	env = s.Input(ctx, id, shellgate.JobInput{Keys: []string{"Ctrl-D"}})
	for env.Data.Job.Running() {
		env = s.Output(ctx, id, shellgate.JobRead{WaitMS: 5000})
	}
	if env.Data.ExitCode == nil || *env.Data.ExitCode != 0 {
		t.Fatalf("python3 after Ctrl-D: %s", env.Text)
	}
	// The interactive rule refuses a REPL in a plain call, and says how.
	env = srun(t, s, shellgate.Request{Command: "python3"})
	if env.Error == nil || !strings.Contains(env.Error.Message, "tty: true") {
		t.Fatalf("python3 without a terminal: %s", env.Text)
	}
	// A quick command on a terminal: its screen and exit status.
	env = srun(t, s, shellgate.Request{Command: "tty; [ -t 0 ] && echo interactive", TTY: true})
	if !strings.Contains(env.Data.Stdout, "/dev/pts/") || !strings.Contains(env.Data.Stdout, "interactive") || env.Data.ExitCode == nil || *env.Data.ExitCode != 0 {
		t.Fatalf("tty: %s", env.Text)
	}
}

// Without the sandbox, a terminal job needs approval: what it runs is typed
// into it later, unchecked.
// The interactive rule's refusal offers a terminal job where there are
// jobs, in a session, and not to a one-shot Gate.Run (the CLI's run, a
// library's), which has no tty parameter to give.
func TestInteractiveRefusalOffersTerminalJobsInSessionsOnly(t *testing.T) {
	l := newLab(t)
	g := gate(t, shellgate.Config{Root: l.root})
	s := g.NewSession(shellgate.SessionConfig{})
	t.Cleanup(func() { s.Close() })
	for _, tc := range []struct {
		who  string
		env  envelope.Envelope
		jobs bool
	}{
		{"Gate.Run", run(t, g, shellgate.Request{Command: "vim a.txt"}), false},
		{"Session.Run", srun(t, s, shellgate.Request{Command: "vim a.txt"}), true},
	} {
		if e := tc.env.Error; e == nil || e.Rule != "interactive" || strings.Contains(e.Message, "tty: true") != tc.jobs {
			t.Errorf("%s: %s", tc.who, tc.env.Text)
		}
	}
}

// What a command leaves in the background: a session's result advises
// run_in_background, a Gate's own Run, which has no jobs, only a file.
func TestBackgroundAdviceInSessionsOnly(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	g := gate(t, shellgate.Config{Root: l.root})
	s := g.NewSession(shellgate.SessionConfig{})
	t.Cleanup(func() { s.Close() })
	for _, tc := range []struct {
		who  string
		env  envelope.Envelope
		jobs bool
	}{
		{"Gate.Run", run(t, g, shellgate.Request{Command: "sleep 30 &"}), false},
		{"Session.Run", srun(t, s, shellgate.Request{Command: "sleep 31 &"}), true},
	} {
		if !strings.Contains(tc.env.Text, "[Their later output is dropped: redirect it to a file") || strings.Contains(tc.env.Text, "run_in_background") != tc.jobs {
			t.Errorf("%s:\n%s", tc.who, tc.env.Text)
		}
	}
}

func TestSessionTerminalWithoutSandbox(t *testing.T) {
	s, _ := session(t, shellgate.Config{Sandbox: shellgate.SandboxConfig{Mode: sandbox.Off}}, shellgate.SessionConfig{})
	env := srun(t, s, shellgate.Request{Command: "bash", TTY: true})
	if env.Error == nil || env.Error.Code != envelope.ApprovalRequired || env.Error.Rule != "dynamic" {
		t.Fatalf("bash on a terminal without the sandbox: %s", env.Text)
	}
}

func TestSessionAudit(t *testing.T) {
	lane.Live(t)
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	s, _ := session(t, shellgate.Config{Audit: shellgate.AuditConfig{Path: log}}, shellgate.SessionConfig{ID: "sess-1"})
	if s.ID() != "sess-1" {
		t.Errorf("ID() = %q, want the configured sess-1", s.ID())
	}
	ctx := context.Background()
	env := srun(t, s, shellgate.Request{Command: "cat", RunInBackground: true})
	s.Input(ctx, env.Data.Job.ID, shellgate.JobInput{Text: "export TOKEN=sk-abcdefghijklmnopqrstuvwxyz012345\n"})
	s.Kill(ctx, env.Data.Job.ID)
	s.Close()
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if !strings.Contains(l, `"event":"decision"`) { // cat's, before it started
			lines = append(lines, l)
		}
	}
	if len(lines) != 3 {
		t.Fatalf("%d audit lines, want 3:\n%s", len(lines), b)
	}
	for i, want := range []string{`"job":"j1"`, `"action":"input"`, `"action":"kill"`} {
		if !strings.Contains(lines[i], want) || !strings.Contains(lines[i], `"session":"sess-1"`) {
			t.Errorf("line %d lacks %s: %s", i, want, lines[i])
		}
	}
	if strings.Contains(string(b), "sk-abcdefghijklmnopqrstuvwxyz012345") {
		t.Errorf("a key typed into a job reached the audit log:\n%s", b)
	}
}

func TestSessionKeepsExports(t *testing.T) {
	lane.Live(t)
	s, l := session(t, shellgate.Config{Sessions: shellgate.SessionDefaults{KeepExports: true}}, shellgate.SessionConfig{})
	must(t, os.MkdirAll(filepath.Join(l.root, "venv", "bin"), 0o755))
	srun(t, s, shellgate.Request{Command: `export VIRTUAL_ENV="$PWD/venv" PATH="$PWD/venv/bin:$PATH" GREETING='a "quoted"
two-line value'; export LD_PRELOAD=/x.so`})
	env := srun(t, s, shellgate.Request{Command: `echo "$VIRTUAL_ENV|${PATH%%:*}|$GREETING|${LD_PRELOAD-unset}"`})
	want := filepath.Join(l.root, "venv") + "|" + filepath.Join(l.root, "venv", "bin") + "|a \"quoted\"\ntwo-line value|unset\n"
	if env.Data.Stdout != want {
		t.Fatalf("carried exports: %q, want %q", env.Data.Stdout, want)
	}
	srun(t, s, shellgate.Request{Command: "unset GREETING"})
	if env := srun(t, s, shellgate.Request{Command: `echo "${GREETING-unset}"`}); env.Data.Stdout != "unset\n" {
		t.Fatalf("after unset: %q", env.Data.Stdout)
	}
	// Without KeepExports nothing carries over.
	plain, _ := session(t, shellgate.Config{}, shellgate.SessionConfig{})
	srun(t, plain, shellgate.Request{Command: "export X=1"})
	if env := srun(t, plain, shellgate.Request{Command: `echo "${X-unset}"`}); env.Data.Stdout != "unset\n" {
		t.Fatalf("exports carried without KeepExports: %q", env.Data.Stdout)
	}
}

// Full-screen programs work on a terminal job: vim edits a file and saves it,
// git rebase -i drops a commit through its editor, and top shows its header.
func TestSessionTerminalPrograms(t *testing.T) {
	lane.Live(t)
	s, l := session(t, shellgate.Config{}, shellgate.SessionConfig{})
	ctx := context.Background()
	untilState := func(env envelope.Envelope) envelope.Envelope {
		for i := 0; i < 20 && env.Data.Job != nil && env.Data.Job.State == envelope.JobRunning; i++ {
			env = s.Output(ctx, env.Data.Job.ID, shellgate.JobRead{WaitMS: 500})
		}
		return env
	}
	env := untilState(srun(t, s, shellgate.Request{Command: "vim -u NONE -N notes.txt", TTY: true}))
	if env.Data.Job == nil || env.Data.Job.State != envelope.JobWaiting || !strings.Contains(env.Data.Stdout, "notes.txt") {
		t.Fatalf("vim: %s", env.Text)
	}
	id := env.Data.Job.ID
	env = s.Input(ctx, id, shellgate.JobInput{Text: "ihello from vim", Keys: []string{"Escape"}})
	if !strings.Contains(env.Data.Stdout, "hello from vim") || strings.Contains(env.Data.Stdout, "\x1b") {
		t.Fatalf("vim screen after typing: %q", env.Data.Stdout)
	}
	env = s.Input(ctx, id, shellgate.JobInput{Text: ":wq\n"})
	for env.Data.Job.Running() {
		env = s.Output(ctx, id, shellgate.JobRead{WaitMS: 2000})
	}
	if b, err := os.ReadFile(filepath.Join(l.root, "notes.txt")); err != nil || string(b) != "hello from vim\n" {
		t.Fatalf("notes.txt after :wq = %q, %v", b, err)
	}
	git := "git -c user.name=t -c user.email=t@t "
	env = srun(t, s, shellgate.Request{Command: "git init -q && " + git + "commit -q --allow-empty -m one && " + git + "commit -q --allow-empty -m two"})
	if env.Status != envelope.Success {
		t.Fatalf("git setup: %s", env.Text)
	}
	env = untilState(srun(t, s, shellgate.Request{Command: "GIT_EDITOR='vim -u NONE -N' " + git + "rebase -i HEAD~1", TTY: true}))
	if env.Data.Job == nil || env.Data.Job.State != envelope.JobWaiting || !strings.Contains(env.Data.Stdout, "pick") {
		t.Fatalf("git rebase -i: %s", env.Text)
	}
	id = env.Data.Job.ID
	env = s.Input(ctx, id, shellgate.JobInput{Text: ":s/^pick/drop/\n:wq\n"})
	for env.Data.Job != nil && env.Data.Job.Running() {
		env = s.Output(ctx, id, shellgate.JobRead{WaitMS: 2000})
	}
	if log := srun(t, s, shellgate.Request{Command: "git log --format=%s"}); log.Data.Stdout != "one\n" {
		t.Fatalf("after git rebase -i: %q\n%s", log.Data.Stdout, env.Text)
	}
	env = untilState(srun(t, s, shellgate.Request{Command: "top -b -n 1 | head -n 3", TTY: true}))
	if !strings.Contains(env.Data.Stdout, "top -") || !strings.Contains(env.Data.Stdout, "Tasks:") {
		t.Fatalf("top: %q", env.Data.Stdout)
	}
}
