package shellgate_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shellgate/shellgate/internal/lane"
	"github.com/shellgate/shellgate/internal/sandbox"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/envelope"
	"github.com/shellgate/shellgate/policy"
)

// One budget for the whole call: a big stdout leaves room for all of a small
// stderr, and the two together stay within the budget.
func TestOneOutputBudgetPerCall(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	g := gate(t, shellgate.Config{Root: l.root, OutputLimit: 4000})
	env := run(t, g, shellgate.Request{Command: "seq 1 100000; echo 'the one error' >&2"})
	d := env.Data
	if d.Stderr != "the one error\n" || !d.Truncated {
		t.Fatalf("stderr %q, truncated %v", d.Stderr, d.Truncated)
	}
	marker := 200 // the omission marker names the spill file
	if n := len(d.Stdout) + len(d.Stderr); n > 4000+marker {
		t.Errorf("%d bytes of output kept with a 4000-byte budget", n)
	}
	if len(d.Stdout) < 3000 {
		t.Errorf("stdout got only %d bytes of the budget stderr did not need", len(d.Stdout))
	}
	// Both big: each gets about half.
	env = run(t, g, shellgate.Request{Command: "seq 1 100000; seq 1 100000 >&2"})
	if o, e := len(env.Data.Stdout), len(env.Data.Stderr); o > 2000+marker || e > 2000+marker || o < 1500 || e < 1500 {
		t.Errorf("stdout %d, stderr %d bytes", o, e)
	}
}

func TestMaxOutputBytes(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	g := gate(t, shellgate.Config{Root: l.root, OutputLimit: 1000, MaxOutputLimit: 100000})
	env := run(t, g, shellgate.Request{Command: "seq 1 10000", MaxOutputBytes: 60000})
	if env.Status != envelope.Success || len(env.Data.Stdout) != 48894 || env.Context.ParamsInput["max_output_bytes"] != 60000 {
		t.Errorf("%s: %d bytes; params %v", env.Status, len(env.Data.Stdout), env.Context.ParamsInput)
	}
	env = run(t, g, shellgate.Request{Command: "seq 1 10000", MaxOutputBytes: 100001})
	if env.Error == nil || env.Error.Code != envelope.InvalidParam || !strings.Contains(env.Error.Message, "max_output_bytes must be an integer between 1 and 100000 (got 100001)") {
		t.Errorf("%+v", env.Error)
	}
}

// One stray byte that is not UTF-8 is shown as U+FFFD, not as binary output.
func TestStrayByteIsText(t *testing.T) {
	l := newLab(t)
	g := gate(t, shellgate.Config{Root: l.root})
	env := run(t, g, shellgate.Request{Command: `printf 'caf\351 au lait\n'`})
	if env.Data.Binary || env.Data.Stdout != "caf\uFFFD au lait\n" || env.Data.FullOutputPath != nil || strings.Contains(env.Text, "Binary") {
		t.Errorf("binary %v, stdout %q\n%s", env.Data.Binary, env.Data.Stdout, env.Text)
	}
	env = run(t, g, shellgate.Request{Command: `head -c 20000 /dev/urandom`})
	if !env.Data.Binary || env.Data.Stdout != "" || strings.Contains(env.Text, "head and tail") {
		t.Errorf("random bytes: binary %v\n%s", env.Data.Binary, env.Text)
	}
}

// Lines that look like errors in the omitted middle are listed with their numbers.
func TestDigestOfTruncatedOutput(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	g := gate(t, shellgate.Config{Root: l.root, OutputLimit: 2000})
	env := run(t, g, shellgate.Request{Command: `seq 1 5000 | sed '2500s/.*/main.go:12: error: undefined: x/'`})
	want := "stdout line 2500: main.go:12: error: undefined: x"
	if env.Data.Digest != want || !strings.Contains(env.Text, "--- DIGEST") || !strings.Contains(env.Text, want) {
		t.Errorf("digest %q\n%s", env.Data.Digest, env.Text)
	}
}

// A command refused for its size is not sent back whole.
func TestHugeCommandNotEchoed(t *testing.T) {
	l := newLab(t)
	g := gate(t, shellgate.Config{Root: l.root})
	env := run(t, g, shellgate.Request{Command: "echo " + strings.Repeat("x", 1<<20)})
	if env.Error == nil || env.Error.Code != envelope.InvalidParam || len(env.Data.Command) > 4096 || env.Data.Truncated {
		t.Fatalf("%+v, command %d bytes, truncated %v", env.Error, len(env.Data.Command), env.Data.Truncated)
	}
	if c, _ := env.Context.ParamsInput["command"].(string); len(c) > 4096 {
		t.Errorf("params_input.command is %d bytes", len(c))
	}
	if len(env.Text) > 1000 || strings.Contains(env.Text, "runcated") {
		t.Errorf("text of %d bytes:\n%s", len(env.Text), env.Text)
	}
}

func TestTimeoutSaysSoFirst(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	g := gate(t, shellgate.Config{Root: l.root})
	env := run(t, g, shellgate.Request{Command: "sleep 10", TimeoutMS: ms(1000)})
	if !strings.HasPrefix(env.Text, "Timed out after 1s: sleep 10\n") || strings.Contains(env.Text, "kept") {
		t.Errorf("%s", env.Text)
	}
}

// Go callers may give the timeout as a time.Duration.
func TestRequestTimeout(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	g := gate(t, shellgate.Config{Root: l.root})
	env := run(t, g, shellgate.Request{Command: "sleep 10", Timeout: 300 * time.Millisecond})
	if !env.Data.TimedOut || env.Context.TimeoutMS != 300 || env.Context.ParamsInput["timeout_ms"] != int64(300) {
		t.Errorf("%s\n%v", env.Text, env.Context.ParamsInput)
	}
	for _, req := range []shellgate.Request{
		{Command: "true", Timeout: time.Hour},
		{Command: "true", Timeout: time.Microsecond},
		{Command: "true", Timeout: time.Second, TimeoutMS: ms(1000)},
	} {
		if env := run(t, g, req); env.Error == nil || env.Error.Code != envelope.InvalidParam {
			t.Errorf("%+v: %+v", req, env.Error)
		}
	}
}

// Every rule a verdict names is one `shellgate check --rules` lists.
func TestCheckDirectoryRules(t *testing.T) {
	l := newLab(t)
	g := gate(t, shellgate.Config{Root: l.root})
	if v := g.Check(shellgate.Request{Command: "true", Directory: ".."}); v.Rule != policy.RuleConfinement || v.Decision != policy.Deny {
		t.Errorf("outside the root: %+v", v)
	}
	if v := g.Check(shellgate.Request{Command: "true", Directory: "nope"}); v.Rule != "" || v.Decision != policy.Deny || v.Code != envelope.NotFound {
		t.Errorf("missing directory: %+v", v)
	}
	// The Checker (hooks) answers alike.
	c, err := shellgate.NewChecker(shellgate.Config{Root: l.root})
	must(t, err)
	if v := c.Check(shellgate.Request{Command: "true", Directory: ".."}); v.Rule != policy.RuleConfinement || v.Decision != policy.Deny {
		t.Errorf("checker, outside the root: %+v", v)
	}
	if v := c.Check(shellgate.Request{Command: "true", Directory: "nope"}); v.Rule != "" || v.Decision != policy.Deny || v.Code != envelope.NotFound {
		t.Errorf("checker, missing directory: %+v", v)
	}
}

// A hook's Checker asks before reading the credentials the sandbox hides by
// never showing them (the agents' own tokens, shell histories), not only
// those it names (session 30 review).
func TestCheckerAsksAboutUnshownCredentials(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	c, err := shellgate.NewChecker(shellgate.Config{Root: t.TempDir()})
	must(t, err)
	for _, cmd := range []string{"cat ~/.claude/.credentials.json", "cat ~/.codex/auth.json", "cp ~/.gemini/oauth_creds.json .", "cat ~/.bash_history", "grep -r token ~/.claude", "cat ~/.ssh/id_rsa"} {
		if v := c.Check(shellgate.Request{Command: cmd}); v.Decision != policy.Ask || v.Rule != policy.RuleSecrets {
			t.Errorf("%s: %s (%s): %s", cmd, v.Decision, v.Rule, v.Reason)
		}
	}
	for _, cmd := range []string{"cat ~/.bashrc", "cat ~/.claude/settings.json", "ls ~/.claude"} {
		if v := c.Check(shellgate.Request{Command: cmd}); v.Decision != policy.Allow {
			t.Errorf("%s: %s (%s): %s", cmd, v.Decision, v.Rule, v.Reason)
		}
	}
}

// A Gate without a sandbox (--sandbox off, profile full-access) decides as a
// hook's Checker: a program given on the command line and a read of the
// secrets are asked about, since nothing but the policy stands in their
// way; with the sandbox they are allowed (session 30 review).
func TestGateWithoutSandboxAsksAsUnconfined(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	root := t.TempDir()
	for _, sc := range []shellgate.SandboxConfig{{Mode: sandbox.Off}, {Profile: sandbox.FullAccess}} {
		g := gate(t, shellgate.Config{Root: root, Sandbox: sc})
		for _, tc := range []struct{ cmd, rule string }{
			{"python3 -c 'import shutil'", policy.RuleExecFlags},
			{"python3 <<< 'import shutil'", policy.RuleExecFlags},
			{"cat ~/.ssh/id_rsa", policy.RuleSecrets},
		} {
			if v := g.Check(shellgate.Request{Command: tc.cmd}); v.Decision != policy.Ask || v.Rule != tc.rule {
				t.Errorf("%+v %s: %s (%s): %s", sc, tc.cmd, v.Decision, v.Rule, v.Reason)
			}
		}
		if v := g.Check(shellgate.Request{Command: "python3 x.py"}); v.Decision != policy.Allow {
			t.Errorf("%+v python3 x.py: %s (%s): %s", sc, v.Decision, v.Rule, v.Reason)
		}
		if !slices.ContainsFunc(g.Info().Rules, func(r policy.RuleInfo) bool { return r.ID == policy.RuleSecrets }) {
			t.Errorf("%+v: the secrets rule is not listed in force", sc)
		}
	}
	g := gate(t, shellgate.Config{Root: root})
	if !g.Info().Sandboxed {
		return
	}
	for _, cmd := range []string{"python3 -c 'import shutil'", "cat ~/.ssh/id_rsa"} {
		if v := g.Check(shellgate.Request{Command: cmd}); v.Decision != policy.Allow {
			t.Errorf("sandboxed %s: %s (%s): %s", cmd, v.Decision, v.Rule, v.Reason)
		}
	}
}

// Terminal control sequences in the output never reach the text the model reads;
// the spill file keeps the bytes as printed.
func TestOutputControlsRemoved(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	g := gate(t, shellgate.Config{Root: l.root})
	env := run(t, g, shellgate.Request{Command: `printf '\033]0;pwned\007\033[2J\033[31mred\033[0m\n10%%\r100%%\n\233' ; printf '日本語 😀\n'`})
	d := env.Data
	if d.Stdout != "red\n100%\n日本語 😀\n" || !d.ControlsRemoved || d.FullOutputPath == nil {
		t.Fatalf("stdout %q, controls_removed %v, full output %v", d.Stdout, d.ControlsRemoved, d.FullOutputPath)
	}
	if strings.ContainsAny(env.Text, "\x1b\r\a") || !strings.Contains(env.Text, "Terminal control sequences removed") {
		t.Errorf("text:\n%q", env.Text)
	}
	raw, err := os.ReadFile(*d.FullOutputPath)
	if err != nil || !strings.Contains(string(raw), "\x1b]0;pwned\a") {
		t.Errorf("spill file %q, %v", raw, err)
	}
	plain := run(t, g, shellgate.Request{Command: `echo hi`})
	if plain.Data.ControlsRemoved || plain.Data.FullOutputPath != nil {
		t.Errorf("plain output flagged: %+v", plain.Data)
	}
	// Colours say nothing the text does not: they go without a word.
	coloured := run(t, g, shellgate.Request{Command: `printf '\033[32mPASS\033[0m ok\n'`})
	if d := coloured.Data; d.Stdout != "PASS ok\n" || d.ControlsRemoved || d.FullOutputPath != nil || strings.Contains(coloured.Text, "removed") {
		t.Errorf("coloured output: stdout %q, controls_removed %v, full output %v, text:\n%s", d.Stdout, d.ControlsRemoved, d.FullOutputPath, coloured.Text)
	}
}

// A secret stripped from the environment but printed anyway (read from a file) is
// redacted in the output and in the spill file the model may read.
func TestStrippedSecretRedacted(t *testing.T) {
	lane.Live(t)
	const token = "ghp_RedactMe0123456789abcdefghijkl"
	t.Setenv("SHELLGATE_TEST_GITHUB_TOKEN", token)
	l := newLab(t)
	must(t, os.WriteFile(filepath.Join(l.root, "leak.txt"), []byte("token: "+token+"\n"), 0o600))
	g := gate(t, shellgate.Config{Root: l.root, OutputLimit: 1000})
	env := run(t, g, shellgate.Request{Command: `echo "env: ${SHELLGATE_TEST_GITHUB_TOKEN-unset}"; cat leak.txt; cat leak.txt >&2`})
	d := env.Data
	if d.Stdout != "env: unset\ntoken: [REDACTED:SHELLGATE_TEST_GITHUB_TOKEN]\n" || d.Stderr != "token: [REDACTED:SHELLGATE_TEST_GITHUB_TOKEN]\n" {
		t.Errorf("stdout %q, stderr %q", d.Stdout, d.Stderr)
	}
	env = run(t, g, shellgate.Request{Command: `for i in $(seq 200); do cat leak.txt; done`})
	if env.Data.FullOutputPath == nil {
		t.Fatal("no spill file")
	}
	spill, err := os.ReadFile(*env.Data.FullOutputPath)
	if err != nil || strings.Contains(string(spill), token) || strings.Count(string(spill), "[REDACTED:SHELLGATE_TEST_GITHUB_TOKEN]") != 200 {
		t.Errorf("spill file (%v): %q", err, spill)
	}
	if strings.Contains(env.Text, token) {
		t.Errorf("text: %s", env.Text)
	}
}

// The commands' environment is built once and kept while the process's
// environment stays the same: a variable changed, or a secret set, between
// two calls of one Gate is seen by the second as it now is, and the secret
// stripped and redacted.
func TestEnvironmentChangedBetweenCalls(t *testing.T) {
	lane.Live(t)
	const token = "ghp_Later0123456789abcdefghijklmnop"
	l := newLab(t)
	must(t, os.WriteFile(filepath.Join(l.root, "leak.txt"), []byte(token+"\n"), 0o600))
	t.Setenv("SHELLGATE_TEST_PLAIN", "one")
	g := gate(t, shellgate.Config{Root: l.root})
	cmd := `echo "$SHELLGATE_TEST_PLAIN ${SHELLGATE_TEST_LATER_TOKEN-unset}"; cat leak.txt`
	if env := run(t, g, shellgate.Request{Command: cmd}); env.Data.Stdout != "one unset\n"+token+"\n" {
		t.Errorf("first call: %q", env.Data.Stdout)
	}
	t.Setenv("SHELLGATE_TEST_PLAIN", "two")
	t.Setenv("SHELLGATE_TEST_LATER_TOKEN", token)
	if env := run(t, g, shellgate.Request{Command: cmd}); env.Data.Stdout != "two unset\n[REDACTED:SHELLGATE_TEST_LATER_TOKEN]\n" {
		t.Errorf("after the environment changed: %q", env.Data.Stdout)
	}
}
