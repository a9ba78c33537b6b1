package shellgate_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shellgate/shellgate/internal/lane"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/envelope"
	"github.com/shellgate/shellgate/internal/sandbox"
	"github.com/shellgate/shellgate/policy"
)

// subreapEnv set to 1 makes this test binary a child subreaper
// (TestSubreapGate's child).
const subreapEnv = "SHELLGATE_TEST_SUBREAP"

func TestMain(m *testing.M) {
	// No test writes the user's own audit log: those about it name their file.
	os.Setenv(shellgate.AuditLogEnv, "off")
	// Nor the user\'s own checkpoint store: those about checkpoints name theirs.
	os.Setenv(shellgate.CheckpointsEnv, "off")
	removeState := lane.PrivateState() // nor the user's own state
	if os.Getenv(subreapEnv) == "1" {
		if err := shellgate.Subreap(); err != nil {
			panic(err)
		}
	}
	// Cleanup takes over the exit: a leak found after the tests passed must still fail the run.
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) { removeState(); os.Exit(code) }),
		goleak.IgnoreAnyFunction("github.com/shellgate/shellgate/internal/runner.reaper")) // Subreap's
}

// lab is a project root with a subdirectory, a file, a symlink that escapes, and a
// sibling whose name starts with the root's path.
type lab struct {
	root, outside string
}

func newLab(t *testing.T) lab {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	l := lab{root: filepath.Join(base, "root"), outside: filepath.Join(base, "outside")}
	for _, d := range []string{l.root + "/sub", l.outside, l.root + "-evil"} {
		must(t, os.MkdirAll(d, 0o755))
	}
	must(t, os.WriteFile(l.root+"/file.txt", []byte("hello\n"), 0o644))
	must(t, os.Symlink(l.outside, l.root+"/escape"))
	must(t, os.Symlink("sub", l.root+"/inner"))
	return l
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func gate(t *testing.T, cfg shellgate.Config) *shellgate.Gate {
	t.Helper()
	if cfg.SpillDir == "" {
		cfg.SpillDir = t.TempDir()
	}
	g, err := shellgate.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

func ms(n int64) *int64 { return &n }

func run(t *testing.T, g *shellgate.Gate, req shellgate.Request, opts ...shellgate.Option) envelope.Envelope {
	t.Helper()
	return g.Run(context.Background(), req, opts...)
}

func TestSuccessEnvelope(t *testing.T) {
	l := newLab(t)
	g := gate(t, shellgate.Config{Root: l.root})
	env := run(t, g, shellgate.Request{Command: "echo hi; echo oops >&2"})
	if env.Status != envelope.Success || env.Error != nil {
		t.Fatalf("status %q error %+v, want success: %s", env.Status, env.Error, env.Text)
	}
	d := env.Data
	if d.Stdout != "hi\n" || d.Stderr != "oops\n" {
		t.Errorf("stdout %q stderr %q", d.Stdout, d.Stderr)
	}
	if d.ExitCode == nil || *d.ExitCode != 0 || d.Signal != nil || d.Truncated || d.TimedOut || d.Binary {
		t.Errorf("data %+v", d)
	}
	if env.Stats.StdoutBytes != 3 || env.Stats.StderrBytes != 5 {
		t.Errorf("stats %+v", env.Stats)
	}
	if diff := cmp.Diff(map[string]any{"command": "echo hi; echo oops >&2"}, env.Context.ParamsInput); diff != "" {
		t.Errorf("params_input: %s", diff)
	}
	if env.Context.Cwd != "." || env.Context.DirectoryResolved != "." || d.Directory != "." {
		t.Errorf("context %+v directory %q", env.Context, d.Directory)
	}
	wantText := "Command succeeded: echo hi; echo oops >&2\n(Exit code 0. Took "
	if !strings.HasPrefix(env.Text, wantText) || !strings.Contains(env.Text, "--- STDOUT (3 bytes) ---\nhi\n") ||
		!strings.Contains(env.Text, "--- STDERR (5 bytes) ---\noops") {
		t.Errorf("text:\n%s", env.Text)
	}
}

// The JSON has exactly seed 001's top-level fields, error only on error, and nulls
// where the seed says null.
func TestEnvelopeJSONShape(t *testing.T) {
	l := newLab(t)
	g := gate(t, shellgate.Config{Root: l.root})
	keys := func(env envelope.Envelope) (top, data map[string]any) {
		b, err := json.Marshal(env)
		must(t, err)
		must(t, json.Unmarshal(b, &top))
		return top, top["data"].(map[string]any)
	}
	top, data := keys(run(t, g, shellgate.Request{Command: "true"}))
	want := []string{"context", "data", "stats", "status", "text"}
	if diff := cmp.Diff(want, slices.Sorted(maps.Keys(top))); diff != "" {
		t.Errorf("top-level keys: %s", diff)
	}
	for _, k := range []string{"stdout", "stderr", "exit_code", "signal", "truncated", "command", "directory",
		"timed_out", "binary", "full_output_path", "background_pids"} {
		if _, ok := data[k]; !ok {
			t.Errorf("data.%s missing", k)
		}
	}
	if data["signal"] != nil || data["full_output_path"] != nil {
		t.Errorf("signal %v full_output_path %v, want null", data["signal"], data["full_output_path"])
	}
	if pids, ok := data["background_pids"].([]any); !ok || len(pids) != 0 {
		t.Errorf("background_pids = %#v, want []", data["background_pids"])
	}
	top, data = keys(run(t, g, shellgate.Request{Command: "kill -9 $$"}))
	if data["exit_code"] != nil || data["signal"] != "SIGKILL" || top["status"] != "partial" {
		t.Errorf("killed: exit_code %v signal %v status %v", data["exit_code"], data["signal"], top["status"])
	}
	top, _ = keys(run(t, g, shellgate.Request{Command: ""}))
	errObj, ok := top["error"].(map[string]any)
	if !ok || errObj["code"] != "INVALID_PARAM" || errObj["message"] == "" {
		t.Errorf("error = %#v", top["error"])
	}
}

// Seed 001 §4 and §6: every status rule and error code.
func TestStatusRulesAndErrorCodes(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	g := gate(t, shellgate.Config{Root: l.root, OutputLimit: 1000})
	tests := []struct {
		name    string
		req     shellgate.Request
		status  envelope.Status
		code    envelope.Code
		message string // substring of error.message
	}{
		{"success", shellgate.Request{Command: "true"}, envelope.Success, "", ""},
		{"non-zero exit is partial", shellgate.Request{Command: "echo out; exit 3"}, envelope.Partial, "", ""},
		{"non-zero exit without output is partial", shellgate.Request{Command: "false"}, envelope.Partial, "", ""},
		{"signal is partial", shellgate.Request{Command: "kill -TERM $$"}, envelope.Partial, "", ""},
		{"truncated output is partial", shellgate.Request{Command: "seq 1 2000"}, envelope.Partial, "", ""},
		{"timeout with output is partial", shellgate.Request{Command: "echo started; sleep 10", TimeoutMS: ms(300)}, envelope.Partial, "", ""},
		{"timeout without output", shellgate.Request{Command: "sleep 10", TimeoutMS: ms(300)}, envelope.Error, envelope.Timeout, "No output before the timeout (300ms)"},
		{"missing command", shellgate.Request{}, envelope.Error, envelope.InvalidParam, "Missing required parameter 'command'."},
		{"blank command", shellgate.Request{Command: " \t\n"}, envelope.Error, envelope.InvalidParam, "empty or only whitespace"},
		{"command too long for one argument", shellgate.Request{Command: "echo " + strings.Repeat("a", 128<<10)}, envelope.Error, envelope.InvalidParam, "fit in one bash command line. Write the script to a file"},
		{"NUL in command", shellgate.Request{Command: "echo a\x00b"}, envelope.Error, envelope.InvalidParam, "NUL byte at offset 6"},
		{"timeout zero", shellgate.Request{Command: "true", TimeoutMS: ms(0)}, envelope.Error, envelope.InvalidParam, "timeout_ms must be an integer between 1 and 600000"},
		{"timeout too long", shellgate.Request{Command: "true", TimeoutMS: ms(600001)}, envelope.Error, envelope.InvalidParam, "between 1 and 600000 (got 600001)"},
		{"negative timeout", shellgate.Request{Command: "true", TimeoutMS: ms(-5)}, envelope.Error, envelope.InvalidParam, "timeout_ms"},
		{"directory missing", shellgate.Request{Command: "true", Directory: "nope"}, envelope.Error, envelope.NotFound, "Directory 'nope' does not exist."},
		{"directory is a file", shellgate.Request{Command: "true", Directory: "file.txt"}, envelope.Error, envelope.InvalidParam, "'file.txt' is not a directory."},
		{"directory below a file", shellgate.Request{Command: "true", Directory: "file.txt/sub"}, envelope.Error, envelope.InvalidParam, "'file.txt/sub' is not a directory."},
		{"directory ..", shellgate.Request{Command: "true", Directory: ".."}, envelope.Error, envelope.AccessDenied, "Path must be within project root"},
		{"directory ../ missing", shellgate.Request{Command: "true", Directory: "../nothing"}, envelope.Error, envelope.AccessDenied, "within project root"},
		{"directory sub/../..", shellgate.Request{Command: "true", Directory: "sub/../.."}, envelope.Error, envelope.AccessDenied, "within project root"},
		{"directory symlink escape", shellgate.Request{Command: "true", Directory: "escape"}, envelope.Error, envelope.AccessDenied, "within project root"},
		{"directory absolute outside", shellgate.Request{Command: "true", Directory: l.outside}, envelope.Error, envelope.AccessDenied, "within project root"},
		{"directory prefix sibling", shellgate.Request{Command: "true", Directory: l.root + "-evil"}, envelope.Error, envelope.AccessDenied, "within project root"},
		{"directory NUL", shellgate.Request{Command: "true", Directory: "a\x00"}, envelope.Error, envelope.InvalidParam, "NUL"},
		// Commands refused in these tests are harmless if they ever ran: a test must not
		// depend on the policy it tests to keep the machine safe.
		{"blocked by policy", shellgate.Request{Command: "sudo -n true"}, envelope.Error, envelope.PolicyDenied, "rule privilege"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := run(t, g, tt.req)
			if env.Status != tt.status {
				t.Fatalf("status %q, want %q\n%s", env.Status, tt.status, env.Text)
			}
			if tt.code == "" {
				if env.Error != nil {
					t.Fatalf("unexpected error %+v", env.Error)
				}
				return
			}
			if env.Error == nil || env.Error.Code != tt.code || !strings.Contains(env.Error.Message, tt.message) {
				t.Fatalf("error %+v, want code %s with %q", env.Error, tt.code, tt.message)
			}
			if !strings.Contains(env.Text, string(tt.code)) {
				t.Errorf("text does not name the code:\n%s", env.Text)
			}
		})
	}
}

func TestDirectoryInsideRoot(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	g := gate(t, shellgate.Config{Root: l.root})
	for _, dir := range []string{"sub", "./sub/", "inner", "sub/../sub", l.root + "/sub"} {
		env := run(t, g, shellgate.Request{Command: "pwd", Directory: dir})
		if env.Status != envelope.Success || env.Data.Stdout != l.root+"/sub\n" {
			t.Errorf("directory %q: %s %q %+v", dir, env.Status, env.Data.Stdout, env.Error)
			continue
		}
		if env.Context.Cwd != "sub" || env.Context.DirectoryResolved != "sub" || env.Data.Directory != "sub" {
			t.Errorf("directory %q: context %+v", dir, env.Context)
		}
		if env.Context.ParamsInput["directory"] != dir {
			t.Errorf("params_input lost the directory as given: %v", env.Context.ParamsInput)
		}
	}
}

// Seed 002 §5: `python -c "import time; time.sleep(10)"` with a 2 s timeout is killed
// and reported; and nothing it started survives, with or without the sandbox.
func TestTimeoutKillsEverything(t *testing.T) {
	lane.Live(t)
	for _, mode := range []sandbox.Mode{sandbox.Auto, sandbox.Off} {
		t.Run(string(mode), func(t *testing.T) {
			l := newLab(t)
			tag := newTag()
			// Without the sandbox python3 -c is asked about: relaxed here.
			g := gate(t, shellgate.Config{Root: l.root, Env: tag.env(), Sandbox: shellgate.SandboxConfig{Mode: mode},
				Policy: policy.Settings{Relax: []string{policy.RuleExecFlags}}})
			// Killed at the timeout, not waited out: python would say so
			// after its sleep. (How long the call took measures the machine
			// too: the first call also starts the sandbox.)
			env := run(t, g, shellgate.Request{
				Command:   `echo started; python3 -c "import time; time.sleep(10); print('slept')" & (trap '' TERM; sleep 100) & wait`,
				TimeoutMS: ms(2000),
			})
			if strings.Contains(env.Data.Stdout, "slept") {
				t.Errorf("python's sleep ran out: the call was not ended at its timeout:\n%s", env.Text)
			}
			if !env.Data.TimedOut || env.Status != envelope.Partial || env.Data.ExitCode != nil {
				t.Fatalf("status %s timed_out %v exit %v:\n%s", env.Status, env.Data.TimedOut, env.Data.ExitCode, env.Text)
			}
			if !strings.Contains(env.Text, "Timed out after") {
				t.Errorf("text does not say it timed out:\n%s", env.Text)
			}
			for pid, cmd := range tagged(tag.String()) {
				t.Errorf("pid %d (%s) survived the timeout", pid, cmd)
			}
		})
	}
}

// testTag marks the processes of one test through their environment, so that
// survivors are found whatever PID namespace they are in.
type testTag string

func newTag() testTag {
	return testTag("SHELLGATE_TEST_TAG=" + strconv.FormatInt(time.Now().UnixNano(), 36))
}

func (t testTag) String() string { return string(t) }

func (t testTag) env() map[string]string {
	name, value, _ := strings.Cut(string(t), "=")
	return map[string]string{name: value}
}

// alive reports whether pid is a live (non-zombie) process.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || !strings.HasPrefix(s[i+1:], " Z")
}

func TestCancellation(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	tag := newTag()
	g := gate(t, shellgate.Config{Root: l.root, Env: tag.env()})
	run(t, g, shellgate.Request{Command: "true"}) // the sandbox starts first, on a loaded machine slowly
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	env := g.Run(ctx, shellgate.Request{Command: "echo started; sleep 100"})
	if !env.Data.Cancelled || env.Status != envelope.Partial {
		t.Fatalf("status %s cancelled %v:\n%s", env.Status, env.Data.Cancelled, env.Text)
	}
	for pid, cmd := range tagged(tag.String()) {
		t.Errorf("pid %d (%s) still alive after cancellation", pid, cmd)
	}

	ctx, cancel = context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	env = g.Run(ctx, shellgate.Request{Command: "sleep 100"})
	if env.Status != envelope.Error || env.Error.Code != envelope.Cancelled {
		t.Errorf("silent cancelled command: %s %+v", env.Status, env.Error)
	}

	done, cancelNow := context.WithCancel(context.Background())
	cancelNow()
	env = g.Run(done, shellgate.Request{Command: "touch should-not-exist"})
	if env.Error == nil || env.Error.Code != envelope.Cancelled {
		t.Errorf("already-cancelled: %+v", env.Error)
	}
	if _, err := os.Stat(l.root + "/should-not-exist"); err == nil {
		t.Error("a command ran after its context was cancelled")
	}
}

// Seed 003: a background job doesn't hold the call open; its PID is reported as
// the next command sees it, and the Gate kills it when closed.
func TestBackgroundReturnsAtOnce(t *testing.T) {
	lane.Live(t)
	for _, mode := range []sandbox.Mode{sandbox.Auto, sandbox.Off} {
		t.Run(string(mode), func(t *testing.T) {
			l := newLab(t)
			tag := newTag()
			g, err := shellgate.New(shellgate.Config{Root: l.root, SpillDir: t.TempDir(), Env: tag.env(), Sandbox: shellgate.SandboxConfig{Mode: mode}})
			must(t, err)
			// The call ends on its own (success, not a timeout) while the job
			// runs on (the next command sees it): it did not wait for the
			// job. How long it took measures the machine too: the first call
			// also starts the sandbox.
			env := run(t, g, shellgate.Request{Command: "sleep 300 & echo started"})
			if env.Status != envelope.Success || env.Data.Stdout != "started\n" {
				t.Fatalf("%s %q", env.Status, env.Data.Stdout)
			}
			if len(env.Data.BackgroundPIDs) != 1 {
				t.Fatalf("background_pids %v", env.Data.BackgroundPIDs)
			}
			pid := strconv.Itoa(env.Data.BackgroundPIDs[0])
			if !strings.Contains(env.Text, "Background processes still running: "+pid) {
				t.Errorf("text does not list the PID:\n%s", env.Text)
			}
			// The job is bash's fork until it has exec'd sleep, which on a
			// loaded machine may come after the next command's ps.
			var ps envelope.Envelope
			for range 20 {
				if ps = run(t, g, shellgate.Request{Command: "ps -o args= -p " + pid}); strings.TrimSpace(ps.Data.Stdout) == "sleep 300" {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			if strings.TrimSpace(ps.Data.Stdout) != "sleep 300" {
				t.Errorf("the next commands do not see pid %s as the job: %q %s", pid, ps.Data.Stdout, ps.Data.Stderr)
			}
			must(t, g.Close())
			for pid, cmd := range tagged(tag.String()) {
				t.Errorf("pid %d (%s) outlived the gate", pid, cmd)
			}
		})
	}
}

func TestTruncationSpillsFullOutput(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	g := gate(t, shellgate.Config{Root: l.root, OutputLimit: 4096})
	env := run(t, g, shellgate.Request{Command: "seq 1 100000"})
	want, err := exec.Command("seq", "1", "100000").Output()
	must(t, err)
	d := env.Data
	if !d.Truncated || env.Status != envelope.Partial || d.FullOutputPath == nil {
		t.Fatalf("truncated %v status %s path %v", d.Truncated, env.Status, d.FullOutputPath)
	}
	if env.Stats.StdoutBytes != int64(len(want)) {
		t.Errorf("stdout_bytes %d, want %d", env.Stats.StdoutBytes, len(want))
	}
	if len(d.Stdout) > 4096+300 || !strings.HasPrefix(d.Stdout, "1\n2\n3\n") || !strings.HasSuffix(d.Stdout, "99999\n100000\n") {
		t.Errorf("head/tail wrong (%d bytes): %.60q … %.60q", len(d.Stdout), d.Stdout, d.Stdout[max(0, len(d.Stdout)-60):])
	}
	if !strings.Contains(d.Stdout, "omitted") {
		t.Errorf("no omission marker in stdout")
	}
	full, err := os.ReadFile(*d.FullOutputPath)
	must(t, err)
	if sha256.Sum256(full) != sha256.Sum256(want) {
		t.Errorf("spill file differs from the output (%d vs %d bytes)", len(full), len(want))
	}
	if !strings.Contains(env.Text, "Truncated") || !strings.Contains(env.Text, *d.FullOutputPath) {
		t.Errorf("text does not explain the truncation:\n%.500s", env.Text)
	}
}

func TestBinaryOutput(t *testing.T) {
	l := newLab(t)
	g := gate(t, shellgate.Config{Root: l.root})
	env := run(t, g, shellgate.Request{Command: `printf 'PK\003\004\000\001binary'`})
	d := env.Data
	if !d.Binary || d.Stdout != "" || d.FullOutputPath == nil {
		t.Fatalf("binary %v stdout %q path %v", d.Binary, d.Stdout, d.FullOutputPath)
	}
	full, err := os.ReadFile(*d.FullOutputPath)
	must(t, err)
	if string(full) != "PK\003\004\000\001binary" || env.Stats.StdoutBytes != 12 {
		t.Errorf("spilled %q, %d bytes", full, env.Stats.StdoutBytes)
	}
	if !strings.Contains(env.Text, "BINARY OUTPUT (12 bytes stdout") || strings.Contains(env.Text, "\000") {
		t.Errorf("text:\n%q", env.Text)
	}
}

func TestEnvironment(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	t.Setenv("MY_SERVICE_API_KEY", "sk-secret")
	t.Setenv("GITHUB_TOKEN", "ghp_secret")
	t.Setenv("KEPT_TOKEN", "public")
	t.Setenv("BASH_ENV", l.outside+"/evil.sh")
	must(t, os.WriteFile(l.outside+"/evil.sh", []byte("echo BASH_ENV-ran\n"), 0o644))
	g := gate(t, shellgate.Config{Root: l.root, Env: map[string]string{"MYCODEAGENT": "1"}, KeepEnv: []string{"KEPT_TOKEN"}})
	env := run(t, g, shellgate.Request{Command: `echo "key=${MY_SERVICE_API_KEY-unset} gh=${GITHUB_TOKEN-unset} kept=$KEPT_TOKEN agent=$MYCODEAGENT sg=$SHELLGATE pager=$GIT_PAGER prompt=$GIT_TERMINAL_PROMPT"`})
	want := "key=unset gh=unset kept=public agent=1 sg=1 pager=cat prompt=0\n"
	if env.Data.Stdout != want {
		t.Errorf("got  %q\nwant %q", env.Data.Stdout, want)
	}
}

// stdin is closed and there is no terminal: commands that want input fail at once.
func TestNoInputNoTerminal(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	g := gate(t, shellgate.Config{Root: l.root})
	for _, cmd := range []string{
		"read x; echo rc=$?",
		`python3 -c 'input()' 2>/dev/null; echo rc=$?`,
		`exec 3</dev/tty 2>/dev/null; echo rc=$?`,
	} {
		// A read that waited would be ended by the timeout: ending before
		// it, on its own and failing, is what "at once" means here; a time
		// measured on a loaded machine is not.
		env := run(t, g, shellgate.Request{Command: cmd, TimeoutMS: ms(10000)})
		if rc := strings.TrimSpace(env.Data.Stdout); env.Data.TimedOut || !strings.HasPrefix(rc, "rc=") || rc == "rc=0" {
			t.Errorf("%s: %q timed_out=%v\n%s", cmd, env.Data.Stdout, env.Data.TimedOut, env.Text)
		}
	}
}

// Seed 000's test cases.
func TestSeed000Cases(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	must(t, exec.Command("git", "init", "-q", l.root).Run())
	g := gate(t, shellgate.Config{Root: l.root})
	if env := run(t, g, shellgate.Request{Command: "pwd", Description: "Show current directory"}); env.Data.ExitCode == nil || *env.Data.ExitCode != 0 || env.Data.Stdout != l.root+"\n" {
		t.Errorf("pwd: %+v", env.Data)
	}
	if env := run(t, g, shellgate.Request{Command: "git status --short"}); env.Data.ExitCode == nil {
		t.Errorf("git status: no exit code: %s", env.Text)
	}
	// Checked, never run: if the policy regressed, running it would be a disaster.
	if v := g.Check(shellgate.Request{Command: "rm -rf /"}); v.Decision != policy.Deny || v.Rule != policy.RuleCatastrophic {
		t.Errorf("rm -rf / was not blocked: %+v", v)
	}
	if env := run(t, g, shellgate.Request{Command: "pwd", Directory: "sub"}); env.Data.Stdout != l.root+"/sub\n" {
		t.Errorf("workdir: %q", env.Data.Stdout)
	}
}

func TestApproval(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	var cfg shellgate.Config
	cfg.Root = l.root
	cfg.Policy.Ask = []string{"touch *"}
	g := gate(t, cfg)

	env := run(t, g, shellgate.Request{Command: "touch a"})
	if env.Error == nil || env.Error.Code != envelope.ApprovalRequired || !strings.Contains(env.Error.Message, "take the ask rule out") ||
		strings.Count(env.Error.Message, "(rule ") != 1 {
		t.Fatalf("no approver: %+v", env.Error)
	}
	asked := 0
	answer := shellgate.Deny
	approver := func(ctx context.Context, q shellgate.Question) shellgate.Answer {
		asked++
		if !strings.HasPrefix(q.Command, "touch ") || q.Reason == "" || q.SessionKey != "touch *" {
			t.Errorf("question %+v", q)
		}
		return answer
	}
	env = run(t, g, shellgate.Request{Command: "touch a"}, shellgate.WithApprover(approver))
	if env.Error == nil || env.Error.Code != envelope.ApprovalRequired || fileExists(l.root+"/a") || !strings.Contains(env.Error.Message, "The user declined") {
		t.Fatalf("declined: %+v", env.Error)
	}
	answer = shellgate.NotAsked // a client that can be asked only between calls
	env = run(t, g, shellgate.Request{Command: "touch a"}, shellgate.WithApprover(approver))
	if env.Error == nil || env.Error.Code != envelope.ApprovalRequired || fileExists(l.root+"/a") ||
		!strings.HasPrefix(env.Error.Message, "No one could be asked to approve it: ") || strings.Contains(env.Error.Message, "declined") || strings.Contains(env.Error.Message, "must approve") {
		t.Fatalf("not asked: %+v", env.Error)
	}
	answer = shellgate.AllowOnce
	env = run(t, g, shellgate.Request{Command: "touch a"}, shellgate.WithApprover(approver))
	if env.Status != envelope.Success || !fileExists(l.root+"/a") || env.Context.Policy.Approved != "once" {
		t.Fatalf("allowed once: %s %+v", env.Status, env.Context.Policy)
	}
	var session shellgate.SessionApprovals
	answer = shellgate.AllowSession
	asked = 0
	for _, name := range []string{"b", "c"} {
		env = run(t, g, shellgate.Request{Command: "touch " + name}, shellgate.WithApprover(session.Wrap(approver)))
		if env.Status != envelope.Success {
			t.Fatalf("session: %s", env.Text)
		}
	}
	if asked != 1 {
		t.Errorf("asked %d times; the session answer should have been remembered", asked)
	}
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

func TestStartFailure(t *testing.T) {
	l := newLab(t)
	if _, err := shellgate.New(shellgate.Config{Root: l.root + "/nope"}); err == nil {
		t.Error("missing root accepted")
	}
	if _, err := shellgate.New(shellgate.Config{Root: l.root + "/file.txt"}); err == nil {
		t.Error("file as root accepted")
	}
	if _, err := shellgate.New(shellgate.Config{Root: l.root, Shell: "/nonexistent/shell"}); err == nil {
		t.Error("missing shell accepted")
	}
}

func TestLiveOutput(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	g := gate(t, shellgate.Config{Root: l.root})
	var got strings.Builder
	first := make(chan time.Time, 1)
	env := run(t, g, shellgate.Request{Command: "echo one; sleep 2; echo two"}, shellgate.WithOutput(func(o shellgate.Output) {
		select {
		case first <- time.Now():
		default:
		}
		got.Write(o.Data)
	}))
	if got.String() != "one\ntwo\n" || env.Data.Stdout != "one\ntwo\n" {
		t.Errorf("live %q envelope %q", got.String(), env.Data.Stdout)
	}
	// "one" is printed 2 s before the command ends.
	if since := time.Since(<-first); since < time.Second {
		t.Errorf("first output arrived %s before the end, not live", since)
	}
}

func TestRunAfterClose(t *testing.T) {
	l := newLab(t)
	g, err := shellgate.New(shellgate.Config{Root: l.root, SpillDir: t.TempDir()})
	must(t, err)
	must(t, g.Close())
	env := run(t, g, shellgate.Request{Command: "touch after-close"})
	if env.Error == nil || env.Error.Code != envelope.Cancelled || !strings.Contains(env.Error.Message, "shutting down") {
		t.Errorf("run after close: %+v", env.Error)
	}
	if fileExists(l.root + "/after-close") {
		t.Error("a command ran after the gate was closed")
	}
}

// The OS refusing to execute is PERMISSION_DENIED; any other failure to start is
// EXECUTION_ERROR. Both name the shell and the cause.
func TestStartErrors(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	l := newLab(t)
	shellCopy := filepath.Join(t.TempDir(), "bash")
	data, err := os.ReadFile(bash)
	must(t, err)
	must(t, os.WriteFile(shellCopy, data, 0o755))
	// Without the sandbox: a session started earlier keeps the shell it saw.
	g := gate(t, shellgate.Config{Root: l.root, Shell: shellCopy, Sandbox: shellgate.SandboxConfig{Mode: sandbox.Off}})
	if env := run(t, g, shellgate.Request{Command: "true"}); env.Status != envelope.Success {
		t.Fatalf("the copied shell does not work: %s", env.Text)
	}

	must(t, os.Chmod(shellCopy, 0o644))
	env := run(t, g, shellgate.Request{Command: "true"})
	if env.Error == nil || env.Error.Code != envelope.PermissionDenied || !strings.Contains(env.Error.Message, shellCopy) {
		t.Errorf("non-executable shell: %+v", env.Error)
	}

	must(t, os.Remove(shellCopy))
	env = run(t, g, shellgate.Request{Command: "true"})
	if env.Error == nil || env.Error.Code != envelope.ExecutionError || !strings.Contains(env.Error.Message, "could not start "+shellCopy) {
		t.Errorf("missing shell: %+v", env.Error)
	}
}

// Past the spill cap output is counted, not kept, and the text says so.
func TestSpillCap(t *testing.T) {
	l := newLab(t)
	g := gate(t, shellgate.Config{Root: l.root, OutputLimit: 1000, SpillMax: 10000})
	env := run(t, g, shellgate.Request{Command: "seq 1 100000"})
	if env.Stats.StdoutBytes != 588895 || env.Data.FullOutputPath == nil {
		t.Fatalf("stdout_bytes %d, path %v", env.Stats.StdoutBytes, env.Data.FullOutputPath)
	}
	fi, err := os.Stat(*env.Data.FullOutputPath)
	must(t, err)
	if fi.Size() != 10000 {
		t.Errorf("spill file %d bytes, want the cap, 10000", fi.Size())
	}
	if !strings.Contains(env.Text, "stopped at 10000 bytes (a file's cap, or the session's for all its files); 588895 bytes were printed in all") {
		t.Errorf("text does not say the spill file was capped:\n%s", env.Text)
	}
}

// Without the sandbox, commands get a private TMPDIR they may write; the shared
// system temp dir is outside like anything else, and Close removes the private one.
func TestPrivateTempDir(t *testing.T) {
	l := newLab(t)
	g, err := shellgate.New(shellgate.Config{Root: l.root, SpillDir: t.TempDir(), Sandbox: shellgate.SandboxConfig{Mode: sandbox.Off}})
	must(t, err)
	tmp := g.Info().TempDir
	if tmp == "" || tmp == os.TempDir() || !strings.Contains(filepath.Base(tmp), "shellgate-tmp-") {
		t.Fatalf("temp dir %q", tmp)
	}
	env := run(t, g, shellgate.Request{Command: `echo "$TMPDIR"; echo data > "$TMPDIR/f" && cat "$TMPDIR/f"; mktemp -d`})
	lines := strings.Split(env.Data.Stdout, "\n")
	if env.Status != envelope.Success || len(lines) != 4 || lines[0] != tmp || lines[1] != "data" || !strings.HasPrefix(lines[2], tmp+"/") {
		t.Errorf("%s %q %+v", env.Status, env.Data.Stdout, env.Error)
	}
	// Checked, not run.
	for _, cmd := range []string{"rm -rf " + os.TempDir(), "echo x > " + os.TempDir() + "/shellgate-test", "cd .. && touch x", "rm -rf " + tmp + "/../*"} {
		if v := g.Check(shellgate.Request{Command: cmd}); v.Decision == policy.Allow {
			t.Errorf("%s: allowed", cmd)
		}
	}
	if v := g.Check(shellgate.Request{Command: "rm -rf " + tmp + "/build"}); v.Decision != policy.Allow {
		t.Errorf("writing in the private temp dir: %+v", v)
	}
	must(t, g.Close())
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("temp dir %s left after Close: %v", tmp, err)
	}
}

// A Gate's temp dir is held while it lives: a new Gate removes those left
// by owners that are gone (killed before Close), never a live Gate's.
func TestDeadOwnersTempDirsSwept(t *testing.T) {
	dead := exec.Command("true")
	must(t, dead.Run())
	stale := filepath.Join(os.TempDir(), fmt.Sprintf("shellgate-tmp-%d-test", dead.Process.Pid))
	must(t, os.MkdirAll(filepath.Join(stale, "left"), 0o700))
	t.Cleanup(func() { os.RemoveAll(stale) })
	off := shellgate.SandboxConfig{Mode: sandbox.Off}
	first, err := shellgate.New(shellgate.Config{Root: newLab(t).root, SpillDir: t.TempDir(), Sandbox: off})
	must(t, err)
	defer first.Close()
	live := first.Info().TempDir
	old := time.Now().Add(-2 * time.Minute)
	for _, d := range []string{stale, live} {
		must(t, os.Chtimes(d, old, old))
	}
	g, err := shellgate.New(shellgate.Config{Root: newLab(t).root, SpillDir: t.TempDir(), Sandbox: off})
	must(t, err)
	defer g.Close()
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("a dead owner's temp dir was kept: %v", err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("a live Gate's temp dir was removed: %v", err)
	}
	if tmp := g.Info().TempDir; !strings.Contains(filepath.Base(tmp), fmt.Sprintf("shellgate-tmp-%d-", os.Getpid())) {
		t.Errorf("the temp dir %q does not name its owner", tmp)
	}
}
