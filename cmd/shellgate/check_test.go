package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"

	"github.com/shellgate/shellgate/envelope"
)

// checkLab is a project root with a subdirectory and an optional .shellgate.toml.
func checkLab(t *testing.T, projectFile string) string {
	t.Helper()
	t.Setenv("BASH_ALLOW_NETWORK", "")
	root := t.TempDir()
	// The temp dir is writable, so "cd .." from a root under /tmp would be allowed: use
	// one that does not contain the root, as on a real machine.
	t.Setenv("TMPDIR", t.TempDir())
	if err := os.MkdirAll(filepath.Join(root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if projectFile != "" {
		if err := os.WriteFile(filepath.Join(root, ".shellgate.toml"), []byte(projectFile), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func runCheck(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = cmdCheck(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestCheckDecisions(t *testing.T) {
	const project = `
[policy]
deny = ["git push --force *"]
ask = ["npm publish *"]
`
	tests := []struct {
		name      string
		args      []string
		code      int
		stdout    []string // substrings
		stderr    string
		notStdout string
	}{
		{"allow", []string{"--", "git", "status", "--short"}, exitCheckAllow,
			[]string{"decision: allow", "git status --short"}, "", "rule:"},
		{"allow, one argument", []string{"--", "echo 'a b' | tr a b"}, exitCheckAllow,
			[]string{"decision: allow", "echo 'a b'", "tr a b"}, "", ""},
		{"built-in deny", []string{"--", "rm", "-rf", "/"}, exitCheckDeny,
			[]string{"decision: deny", "rule:     catastrophic", "reason:", "rm -rf /"}, "", ""},
		{"deny behind a wrapper", []string{"--", "bash -c 'sudo rm -rf ~'"}, exitCheckDeny,
			[]string{"decision: deny"}, "", ""},
		{"project deny pattern", []string{"--", "git push --force origin main"}, exitCheckDeny,
			[]string{"decision: deny", "rule:     user.deny"}, "", ""},
		// npm publish reaches the registry: with the network off it is denied
		// whatever the project says.
		{"project ask pattern", []string{"--allow-network", "--", "npm publish --tag next"}, exitCheckAsk,
			[]string{"decision: ask", "rule:     user.ask", `approve:  "npm publish *"`}, "", "allow:"},
		// An ask a user allow pattern can lift says which.
		{"ask with an allow pattern", []string{"--", "docker run alpine true"}, exitCheckAsk,
			[]string{"decision: ask", "rule:     sandbox-escape", `allow:    [policy] allow = ["docker run alpine true"] runs it without asking`}, "", ""},
		{"mode never turns ask into deny", []string{"--mode", "never", "--allow-network", "--", "npm publish"}, exitCheckDeny,
			[]string{"decision: deny", "rule:     user.ask", "policy:   mode never, network on"}, "", ""},
		{"network off by default", []string{"--", "curl https://example.com"}, exitCheckDeny,
			[]string{"rule:     network"}, "", ""},
		{"--allow-network", []string{"--allow-network", "--", "curl https://example.com"}, exitCheckAllow,
			[]string{"decision: allow", "policy:   mode auto, network on"}, "", ""},
		{"cd outside the root", []string{"--", "cd .. && ls"}, exitCheckDeny,
			[]string{"rule:     confinement"}, "", ""},
		{"--dir", []string{"--dir", "sub", "--", "cd .. && make"}, exitCheckAllow,
			[]string{"decision: allow", "make", "(in .)"}, "", ""},
		{"--dir outside the root", []string{"--dir", "../..", "--", "ls"}, exitCheckDeny,
			[]string{"decision: deny", "Path must be within project root"}, "", ""},
		{"parse error", []string{"--", "echo 'unterminated"}, exitCheckDeny,
			[]string{"decision: deny", "rule:     parse"}, "", ""},
		{"lose-work without checkpoints", []string{"--checkpoints", "off", "--", "git reset --hard"}, exitCheckAsk,
			[]string{"decision: ask", "rule:     lose-work"}, "", "relaxed:"},
		{"stored-code without the sandbox", []string{"--sandbox", "off", "--", `eval "$X"`}, exitCheckAsk,
			[]string{"decision: ask", "rule:     stored-code"}, "", "relaxed:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := checkLab(t, project)
			args := append([]string{"--root", root, "--no-user-config"}, tt.args...)
			code, out, errOut := runCheck(args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, out, errOut)
			}
			for _, s := range tt.stdout {
				if !strings.Contains(out, s) {
					t.Errorf("stdout lacks %q:\n%s", s, out)
				}
			}
			if tt.notStdout != "" && strings.Contains(out, tt.notStdout) {
				t.Errorf("stdout has %q:\n%s", tt.notStdout, out)
			}
			if !strings.Contains(errOut, tt.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tt.stderr, errOut)
			}
		})
	}
}

// A rule that fired but did not decide is named beside the decision, with why.
func TestCheckSaysWhatWasRelaxed(t *testing.T) {
	root := checkLab(t, "")
	cfg := filepath.Join(t.TempDir(), "relax.toml")
	if err := os.WriteFile(cfg, []byte("[policy]\nrelax = [\"interactive\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCheck("--root", root, "--no-user-config", "--config", cfg, "--", "vim x")
	if code != exitCheckAllow || !strings.Contains(out, "relaxed:  interactive (switched off by [policy] relax)") {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = runCheck("--root", root, "--no-user-config", "--config", cfg, "--json", "--", "vim x")
	var v checkJSON
	if err := json.Unmarshal([]byte(out), &v); err != nil || code != exitCheckAllow || len(v.Relaxed) != 1 || v.Relaxed[0] != "interactive" {
		t.Errorf("--json: exit %d %v\n%s", code, err, out)
	}
}

// Bad invocations say what to fix on stderr, print nothing on stdout, and exit with a
// status no decision uses.
func TestCheckUsageAndConfigErrors(t *testing.T) {
	tests := []struct {
		name    string
		project string
		args    []string
		code    int
		stderr  []string
	}{
		{"unknown flag", "", []string{"--bogus", "--", "ls"}, exitCheckUsage,
			[]string{"unknown flag --bogus", "; see `shellgate check -h`"}},
		{"no command", "", []string{}, exitCheckUsage, []string{"no command given", "-- COMMAND"}},
		{"blank command", "", []string{"--", "  "}, exitCheckUsage, []string{"no command given"}},
		{"bad mode", "", []string{"--mode", "yolo", "--", "ls"}, exitCheckUsage, []string{`--mode "yolo": want auto, untrusted or never`}},
		{"missing --config", "", []string{"--config", "/nonexistent/x.toml", "--", "ls"}, exitCheckConfig,
			[]string{"/nonexistent/x.toml does not exist (given with --config)"}},
		{"unknown key", "[policy]\nnetwrok = true\n", []string{"--", "ls"}, exitCheckConfig,
			[]string{`.shellgate.toml:2: unknown key "netwrok" in [policy]; did you mean "network"?`}},
		{"bad duration", "[limits]\ndefault_timeout = \"2 minutes\"\n", []string{"--", "ls"}, exitCheckConfig,
			[]string{`.shellgate.toml:2: [limits] default_timeout: "2 minutes" is not a duration`}},
		{"missing root", "", []string{"--root", "/nonexistent/root", "--", "ls"}, exitCheckConfig,
			[]string{"/nonexistent/root (from --root) does not exist"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := checkLab(t, tt.project)
			args := tt.args
			if !strings.Contains(strings.Join(args, " "), "--root") {
				args = append([]string{"--root", root, "--no-user-config"}, args...)
			}
			code, out, errOut := runCheck(args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d\nstderr:\n%s", code, tt.code, errOut)
			}
			if out != "" {
				t.Errorf("stdout should be empty on error, got:\n%s", out)
			}
			for _, s := range tt.stderr {
				if !strings.Contains(errOut, s) {
					t.Errorf("stderr lacks %q:\n%s", s, errOut)
				}
			}
			// With --json, stdout has the error as JSON too, for a script
			// that reads it (it was empty).
			code, out, errOut = runCheck(append([]string{"--json"}, args...)...)
			var got struct{ Error envelope.Err }
			if code != tt.code || json.Unmarshal([]byte(out), &got) != nil || got.Error.Code != envelope.InvalidParam ||
				!strings.Contains(got.Error.Message, tt.stderr[0]) || !strings.Contains(errOut, tt.stderr[0]) {
				t.Errorf("--json: exit %d, stdout:\n%s\nstderr:\n%s", code, out, errOut)
			}
		})
	}
}

func TestCheckHelpAndRules(t *testing.T) {
	code, out, errOut := runCheck("-h")
	if code != 0 || !strings.Contains(out, "Exit status: 0 allow, 1 ask, 2 deny") || !strings.Contains(out, "-json") || errOut != "" {
		t.Errorf("-h: exit %d, stdout %q, stderr:\n%s", code, out, errOut)
	}
	code, out, _ = runCheck("--rules")
	for _, rule := range []string{"catastrophic", "network", "interactive", "confinement"} {
		if code != 0 || !strings.Contains(out, rule) {
			t.Errorf("--rules: exit %d, want rule %q in:\n%s", code, rule, out)
		}
	}
}

// The untrusted project file's ignored settings are reported on stderr, and the
// decision is made without them.
func TestCheckWarnsAboutIgnoredProjectSettings(t *testing.T) {
	root := checkLab(t, "[policy]\nnetwork = true\n")
	code, out, errOut := runCheck("--root", root, "--no-user-config", "--", "curl https://example.com")
	if code != exitCheckDeny {
		t.Errorf("exit %d: a project file alone must not turn the network on\n%s", code, out)
	}
	if !strings.Contains(errOut, ".shellgate.toml:2: [policy] network ignored") {
		t.Errorf("stderr lacks the warning:\n%s", errOut)
	}
	code, _, _ = runCheck("--root", root, "--no-user-config", "--trust-project", "--", "curl https://example.com")
	if code != exitCheckAllow {
		t.Errorf("--trust-project: exit %d, want allow", code)
	}
}

type checkOutput struct {
	Decision   string `json:"decision"`
	Reason     string `json:"reason"`
	Rule       string `json:"rule"`
	Code       string `json:"code"`
	SessionKey string `json:"session_key"`
	Commands   []struct {
		Name string   `json:"name"`
		Args []string `json:"args"`
		Dir  string   `json:"dir"`
	} `json:"commands"`
	ConfigFiles []string `json:"config_files"`
	Mode        string   `json:"mode"`
	Network     *bool    `json:"network"`
}

func TestCheckJSON(t *testing.T) {
	root := checkLab(t, "[policy]\nask = [\"npm publish *\"]\n")
	tests := []struct {
		command  string
		code     int
		decision string
		rule     string
		errCode  string // what run's envelope says when it refuses
		names    []string
	}{
		{"echo hi | tr a-z A-Z && cd sub && make test", exitCheckAllow, "allow", "", "", []string{"echo", "tr", "cd", "make"}},
		{"npm publish", exitCheckAsk, "ask", "user.ask", "APPROVAL_REQUIRED", []string{"npm"}},
		{"true; sudo rm -rf /", exitCheckDeny, "deny", "privilege", "POLICY_DENIED", []string{"true", "sudo", "rm"}},
		{"cd ../..", exitCheckDeny, "deny", "confinement", "ACCESS_DENIED", []string{"cd"}},
	}
	for _, tt := range tests {
		t.Run(tt.command, func(t *testing.T) {
			// npm publish with the network on, where it meets the project's
			// ask (with it off, it is denied).
			netOn := strings.HasPrefix(tt.command, "npm publish")
			args := []string{"--root", root, "--no-user-config", "--json", "--", tt.command}
			if netOn {
				args = append([]string{"--allow-network"}, args...)
			}
			code, out, errOut := runCheck(args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d; stderr %s", code, tt.code, errOut)
			}
			var got checkOutput
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("stdout is not one JSON object: %v\n%s", err, out)
			}
			if got.Decision != tt.decision || got.Rule != tt.rule || got.Code != tt.errCode {
				t.Errorf("decision %q rule %q code %q, want %q %q %q", got.Decision, got.Rule, got.Code, tt.decision, tt.rule, tt.errCode)
			}
			if tt.decision != "allow" && got.Reason == "" {
				t.Errorf("a %s needs a reason: %s", got.Decision, out)
			}
			// No empty field: an allow has no rule or reason to give.
			if strings.Contains(out, `:""`) {
				t.Errorf("an empty field: %s", out)
			}
			var names []string
			for _, c := range got.Commands {
				names = append(names, c.Name)
				if c.Args == nil {
					t.Errorf("command %q: args is null, want an array", c.Name)
				}
			}
			if strings.Join(names, " ") != strings.Join(tt.names, " ") {
				t.Errorf("commands %q, want %q", names, tt.names)
			}
			if got.Mode != "auto" || got.Network == nil || *got.Network != netOn {
				t.Errorf("mode %q network %v, want auto and %v", got.Mode, got.Network, netOn)
			}
			if len(got.ConfigFiles) != 1 {
				t.Errorf("config_files = %q, want the project file", got.ConfigFiles)
			}
		})
	}
	// The first command's arguments, as a user reads them.
	_, out, _ := runCheck("--root", root, "--no-user-config", "--json", "--", `grep -n "a b" 'c d'`)
	var got checkOutput
	if err := json.Unmarshal([]byte(out), &got); err != nil || len(got.Commands) != 1 ||
		strings.Join(got.Commands[0].Args, "|") != "-n|a b|c d" {
		t.Errorf("grep args: %+v (err %v)", got.Commands, err)
	}
}

// The real binary, as a user or a script calls it.
func TestCheckBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "shellgate")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	goBuild(t, false, bin, ".")
	root := checkLab(t, "")
	home := t.TempDir()
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"check", "--root", root, "--json", "--", "git status"}, 0, `"decision":"allow"`},
		{[]string{"check", "--root", root, "--json", "--", "rm -rf /"}, 2, `"decision":"deny"`},
		{[]string{"check", "--root", root, "--nope"}, exitCheckUsage, ""},
	}
	for _, tt := range tests {
		cmd := exec.Command(bin, tt.args...)
		// A private home and config dir: the user's own configuration must not leak in.
		cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "BASH_ALLOW_NETWORK=")
		out, err := cmd.Output()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != tt.code || !strings.Contains(strings.ReplaceAll(string(out), " ", ""), tt.want) {
			t.Errorf("shellgate %q: exit %d, stdout %s; want exit %d and %s", tt.args, code, out, tt.code, tt.want)
		}
	}
}

// check's allow: line is TOML 1.0 the user can paste: read back by the
// configuration's own parser, it is the allow_pattern --json gives.
func TestCheckAllowLineIsTOML(t *testing.T) {
	root := checkLab(t, "")
	for _, command := range []string{"docker run alpine true", `docker run alpine $'\e[31m' $'\x7f'`} {
		_, out, _ := runCheck("--root", root, "--no-user-config", "--", command)
		_, js, _ := runCheck("--root", root, "--no-user-config", "--json", "--", command)
		var want checkJSON
		if err := json.Unmarshal([]byte(js), &want); err != nil || want.AllowPattern == "" {
			t.Fatalf("%s: no allow_pattern (%v): %s", command, err, js)
		}
		_, line, _ := strings.Cut(out, "allow:    [policy] ")
		line, _, ok := strings.Cut(line, " runs it without asking\n")
		var doc struct{ Policy struct{ Allow []string } }
		if err := toml.Unmarshal([]byte("[policy]\n"+line+"\n"), &doc); !ok || err != nil || len(doc.Policy.Allow) != 1 || doc.Policy.Allow[0] != want.AllowPattern || strings.Contains(line, `\x`) {
			t.Errorf("%s: the allow line %q reads as %q (%v), want %q in TOML 1.0", command, line, doc.Policy.Allow, err, want.AllowPattern)
		}
	}
}

// check's text shows a control character in a command's words as an escape,
// as its at: line does, never as is: a terminal would act on it (an ESC
// sequence repainted the line, '[31m' shown where the word was ESC[31m).
func TestCheckTextShowsControls(t *testing.T) {
	root := checkLab(t, "")
	_, out, _ := runCheck("--root", root, "--no-user-config", "--", `cd $'\e]0;x\a' ; docker run alpine $'\e[31m' $'a\rb'`)
	if strings.ContainsAny(out, "\x1b\x07\r") || !strings.Contains(out, `'\e[31m'`) {
		t.Errorf("controls in check's text:\n%q", out)
	}
}

// check lists each command as the line would run it, in a way that reads
// right: an argument known only at run time as written (it showed `eval
// '"$X"'`, which reads as the text "$X"), and find -exec's {} as {} (it
// showed `rm .`, which reads as removing the directory).
func TestCheckListingAsWritten(t *testing.T) {
	root := checkLab(t, "")
	for _, tc := range []struct{ line, want string }{
		{`eval "$X"`, `eval "$X"`},
		{`rm -- "$@" ${Y:-a b}`, `rm -- "$@" ${Y:-a b}`},
		{`find . sub -exec rm {} \;`, `rm {}`},
		{`find . -exec sh -c "echo {}" \;`, `sh -c 'echo ./x'`},
		{`echo "a b" 'c'`, `echo 'a b' c`},
		// Two words after --: the text "$X" itself, quoted as exec took it.
		{"", `eval '"$X"'`},
	} {
		args := []string{"--root", root, "--no-user-config", "--", tc.line}
		if tc.line == "" {
			args = []string{"--root", root, "--no-user-config", "--", "eval", `"$X"`}
		}
		_, stdout, stderr := runCheck(args...)
		found := false
		for _, l := range strings.Split(stdout, "\n") {
			if f := strings.SplitN(strings.TrimSpace(l), "  ", 3); len(f) >= 2 && strings.TrimSpace(f[1]) == tc.want {
				found = true
			}
		}
		if !found {
			t.Errorf("check %q: no command listed as %s\n%s%s", tc.line, tc.want, stdout, stderr)
		}
	}
}
