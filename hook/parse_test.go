package hook

import (
	"reflect"
	"testing"
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
