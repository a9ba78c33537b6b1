package hook

import (
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/shellgate/shellgate/internal/hint"
	"github.com/shellgate/shellgate/policy"
)

func TestParsePayloads(t *testing.T) {
	env := func(vars map[string]string) func(string) string {
		return func(k string) string { return vars[k] }
	}
	tests := []struct {
		name    string
		agent   string
		payload string
		env     map[string]string
		want    Call
		err     bool
	}{
		{"claude bash", "claude-code", `{"hook_event_name":"PreToolUse","tool_name":"Bash","cwd":"/p/sub","tool_input":{"command":"ls"}}`,
			map[string]string{"CLAUDE_PROJECT_DIR": "/p"}, Call{Shell: true, Command: "ls", Dir: "/p/sub", Root: "/p"}, false},
		{"claude through shellgate's prefix", "claude-code", `{"hook_event_name":"PreToolUse","tool_name":"Bash","cwd":"/p","tool_input":{"command":"ls"}}`,
			map[string]string{"CLAUDE_CODE_SHELL_PREFIX": "/home/u/.local/bin/shellgate-exec --sandbox on"},
			Call{Shell: true, Command: "ls", Dir: "/p", Prefixed: true, PrefixProgram: "/home/u/.local/bin/shellgate-exec", PrefixFlags: []string{"--sandbox", "on"}}, false},
		{"claude through another prefix", "claude-code", `{"hook_event_name":"PreToolUse","tool_name":"Bash","cwd":"/p","tool_input":{"command":"ls"}}`,
			map[string]string{"CLAUDE_CODE_SHELL_PREFIX": "/usr/local/bin/log-exec"}, Call{Shell: true, Command: "ls", Dir: "/p"}, false},
		{"claude other tool", "claude-code", `{"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"/x"}}`, nil, Call{}, false},
		{"claude other event", "claude-code", `{"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`, nil, Call{}, true},
		{"claude no tool", "claude-code", `{"hook_event_name":"PreToolUse"}`, nil, Call{}, true},
		{"claude input not an object", "claude-code", `{"tool_name":"Bash","tool_input":"ls"}`, nil, Call{}, true},
		{"codex bash: the root is cwd", "codex", `{"hook_event_name":"PreToolUse","tool_name":"Bash","cwd":"/p/sub","turn_id":"t","tool_input":{"command":"ls"}}`,
			map[string]string{"CLAUDE_PROJECT_DIR": "/p", "CLAUDE_CODE_SHELL_PREFIX": "/x/shellgate-exec"}, Call{Shell: true, Command: "ls", Dir: "/p/sub"}, false},
		{"codex apply_patch", "codex", `{"hook_event_name":"PreToolUse","tool_name":"apply_patch","tool_input":{"command":"*** Begin Patch"}}`, nil, Call{}, false},
		{"codex mcp tool", "codex", `{"hook_event_name":"PreToolUse","tool_name":"mcp__shellgate__run_shell_command","tool_input":{"command":"ls"}}`, nil, Call{}, false},
		{"codex other event", "codex", `{"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`, nil, Call{}, true},
		{"codex no command", "codex", `{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{}}`, nil, Call{}, true},
		{"gemini dir_path relative to the root", "gemini-cli", `{"hook_event_name":"BeforeTool","tool_name":"run_shell_command","cwd":"/p/a","tool_input":{"command":"ls","dir_path":"b"}}`,
			map[string]string{"GEMINI_PROJECT_DIR": "/p"}, Call{Shell: true, Command: "ls", Dir: "/p/b", Root: "/p"}, false},
		{"gemini dir_path absolute", "gemini-cli", `{"tool_name":"run_shell_command","cwd":"/p","tool_input":{"command":"ls","dir_path":"/p/c"}}`,
			nil, Call{Shell: true, Command: "ls", Dir: "/p/c"}, false},
		{"gemini dir_path without a root", "gemini-cli", `{"tool_name":"run_shell_command","cwd":"/p","tool_input":{"command":"ls","dir_path":"d"}}`,
			nil, Call{Shell: true, Command: "ls", Dir: "/p/d"}, false},
		{"gemini other tool", "gemini-cli", `{"tool_name":"read_file","tool_input":{}}`, nil, Call{}, false},
		{"gemini other event", "gemini-cli", `{"hook_event_name":"AfterTool","tool_name":"run_shell_command","tool_input":{"command":"ls"}}`, nil, Call{}, true},
		{"cursor root holding cwd", "cursor", `{"hook_event_name":"beforeShellExecution","command":"ls","cwd":"/b/x","workspace_roots":["/a","/b"]}`,
			nil, Call{Shell: true, Command: "ls", Dir: "/b/x", Root: "/b"}, false},
		{"cursor root beside a prefix", "cursor", `{"hook_event_name":"beforeShellExecution","command":"ls","cwd":"/ab","workspace_roots":["/a"]}`,
			nil, Call{Shell: true, Command: "ls", Dir: "/ab", Root: "/a"}, false},
		{"cursor no roots", "cursor", `{"hook_event_name":"beforeShellExecution","command":"ls","cwd":"/c"}`, nil, Call{Shell: true, Command: "ls", Dir: "/c"}, false},
		{"cursor other event", "cursor", `{"hook_event_name":"beforeReadFile","file_path":"/x"}`, nil, Call{}, false},
		{"cursor no event", "cursor", `{"command":"ls"}`, nil, Call{}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, _ := Lookup(tc.agent)
			got, err := a.parse([]byte(tc.payload), env(tc.env))
			if (err != nil) != tc.err || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, %v; want %+v, error %v", got, err, tc.want, tc.err)
			}
		})
	}
}

// Codex 0.171 takes only "deny" (with a reason): an allow is no decision and an
// ask a deny that says approval is needed and how the user can give it.
func TestCodexAnswers(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", "") // the user file where Linux reads it by default: ~/.config
	tests := []struct {
		v    policy.Verdict
		want string
	}{
		{policy.Verdict{Decision: policy.Allow}, `{}`},
		{policy.Verdict{Decision: policy.Deny, Rule: "privilege", Reason: "No sudo."},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"shellgate (privilege): No sudo"}}`},
		{policy.Verdict{Decision: policy.Ask, Rule: "sandbox-escape", Reason: "Hands work to docker.", SessionKey: "docker run", AllowPattern: "docker run x"},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"shellgate (sandbox-escape): Hands work to docker. Approval required, and Codex's hook cannot ask for it: do it another way, or ask the user to run it. The user can allow it by adding [policy] allow = [\"docker run x\"] to ~/.config/shellgate/config.toml"}}`},
		// A reason that names its rule is not preceded by it again, and an
		// ask's "the user must approve it" gives way to why no one is asked.
		{policy.Verdict{Decision: policy.Deny, Rule: "privilege", Reason: "`sudo ls` would run with elevated privileges (rule privilege). Work as the current user."},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"shellgate: ` + "`sudo ls`" + ` would run with elevated privileges (rule privilege). Work as the current user"}}`},
		{policy.Verdict{Decision: policy.Ask, Rule: "sandbox-escape", Reason: "`docker run x` hands work to docker (rule sandbox-escape): the user must approve it.", SessionKey: "docker run", AllowPattern: "docker run x"},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"shellgate: ` + "`docker run x`" + ` hands work to docker (rule sandbox-escape). Approval required, and Codex's hook cannot ask for it: do it another way, or ask the user to run it. The user can allow it by adding [policy] allow = [\"docker run x\"] to ~/.config/shellgate/config.toml"}}`},
		{policy.Verdict{Decision: policy.Ask, Rule: "code-execution", Reason: "`python3 -c x`: python3 -c runs a program (rule code-execution). The user must approve it.", SessionKey: "python3 -c x", AllowPattern: "python3 -c x"},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"shellgate: ` + "`python3 -c x`" + `: python3 -c runs a program (rule code-execution). Approval required, and Codex's hook cannot ask for it: do it another way, or ask the user to run it. The user can allow it by adding [policy] allow = [\"python3 -c x\"] to ~/.config/shellgate/config.toml"}}`},
	}
	a, _ := Lookup("codex")
	for _, tc := range tests {
		res := a.encode(a.answer(tc.v))
		if got := strings.TrimSpace(string(res.Stdout)); got != tc.want || res.Exit != 0 {
			t.Errorf("%s: got %s (exit %d)\nwant %s", tc.v.Decision, got, res.Exit, tc.want)
		}
	}
}

// Codex's cwd is the call's workdir: the root is the git work tree above it.
func TestCodexRootIsTheGitWorkTree(t *testing.T) {
	root := t.TempDir()
	sub := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	a, _ := Lookup("codex")
	payload := func(cwd string) []byte {
		return []byte(`{"hook_event_name":"PreToolUse","tool_name":"Bash","cwd":` + strconv.Quote(cwd) + `,"tool_input":{"command":"ls"}}`)
	}
	if c, err := a.parse(payload(sub), nil); err != nil || c.Root != "" || c.Dir != sub {
		t.Errorf("no .git: %+v, %v; want no root (cwd is the root)", c, err)
	}
	if err := os.Mkdir(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if c, err := a.parse(payload(sub), nil); err != nil || c.Root != root || c.Dir != sub {
		t.Errorf("under a .git: %+v, %v; want root %s", c, err, root)
	}
}

// An ask's hint names the exact command as its allow pattern, and says it
// allows that command ("it"), not a class of commands: the pattern lets
// nothing more run (policy.Verdict.AllowPattern).
//
// The file named is the one shellgate reads: with $XDG_CONFIG_HOME set on
// Linux, there (~/.config/shellgate/config.toml was named whatever the system,
// and on macOS the file is under ~/Library/Application Support).
func TestAskHintAllowsTheCommand(t *testing.T) {
	var file string
	if runtime.GOOS == "linux" {
		xdg := t.TempDir()
		t.Setenv("XDG_CONFIG_HOME", xdg)
		file = filepath.Join(xdg, "shellgate", "config.toml")
	} else {
		t.Setenv("XDG_CONFIG_HOME", "")
		file = hint.UserConfig()
	}
	v := policy.Verdict{Decision: policy.Ask, Rule: "sandbox-escape", Reason: "`docker run x` hands work to docker (rule sandbox-escape): the user must approve it.", SessionKey: "docker run", AllowPattern: "docker run x"}
	for _, name := range Names() {
		a, _ := Lookup(name)
		got := string(a.encode(a.answer(v)).Stdout)
		for _, want := range []string{"allow it ", `allow = [\"docker run x\"] to ` + file} {
			if !strings.Contains(got, want) {
				t.Errorf("%s: no %q in\n%s", name, want, got)
			}
		}
		if strings.Contains(got, "such commands") {
			t.Errorf("%s: the hint speaks of such commands, but its pattern is the exact command:\n%s", name, got)
		}
	}
}
