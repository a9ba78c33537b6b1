package hook

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/shellgate/shellgate/policy"
)

// FuzzHandle: whatever an agent writes on the hook's stdin, Handle answers
// without panicking, in one of two shapes: exit 0 with nothing or one JSON
// value on stdout, or exit 2 (blocking) with a reason on stderr and nothing
// on stdout. A call it passes to the decider is a shell call with a command
// that is valid UTF-8, not blank, within MaxCommand, and an absolute
// directory or none; and a call the decider refused is never let through.
func FuzzHandle(f *testing.F) {
	for _, s := range []string{
		`{"hook_event_name":"PreToolUse","tool_name":"Bash","cwd":"/p","tool_input":{"command":"ls"}}`,
		`{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":5}}`,
		`{"hook_event_name":"PreToolUse","tool_name":"shell","cwd":"/p","tool_input":{"command":["bash","-lc","ls"]}}`,
		`{"hook_event_name":"BeforeTool","tool_name":"run_shell_command","cwd":"/p","tool_input":{"command":"ls","dir_path":"b"}}`,
		`{"hook_event_name":"beforeShellExecution","command":"ls","cwd":"/b/x","workspace_roots":["/a","/b"]}`,
		`{"hook_event_name":"PreToolUse","tool_name":"Bash","cwd":"rel","tool_input":{"command":"ls\u0000x"}}`,
		"{\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"\xff\"}}",
		`null`, `[]`, `""`, ``, `{`, `{"a":1} {"b":2}`,
	} {
		for i := range Names() {
			f.Add(s, uint8(i))
		}
	}
	names := Names()
	f.Fuzz(func(t *testing.T, payload string, which uint8) {
		a, _ := Lookup(names[int(which)%len(names)])
		getenv := func(k string) string {
			if strings.HasSuffix(k, "_PROJECT_DIR") {
				return "/p"
			}
			return ""
		}
		var decided []Call
		decide := func(c *Call) (policy.Verdict, error) {
			decided = append(decided, *c)
			return policy.Verdict{Decision: policy.Deny, Rule: policy.RuleParse, Reason: "refused by the fuzz decider"}, nil
		}
		r := a.Handle(strings.NewReader(payload), getenv, decide)
		switch r.Exit {
		case 0:
			if r.Stderr != "" {
				t.Errorf("%s %q: exit 0 with stderr %q", a.Name, payload, r.Stderr)
			}
			if out := bytes.TrimSpace(r.Stdout); len(out) > 0 && !json.Valid(out) {
				t.Errorf("%s %q: stdout is not JSON: %q", a.Name, payload, r.Stdout)
			}
		case ExitBlock:
			if r.Stderr == "" || len(r.Stdout) > 0 {
				t.Errorf("%s %q: blocked with stdout %q, stderr %q", a.Name, payload, r.Stdout, r.Stderr)
			}
		default:
			t.Errorf("%s %q: exit %d", a.Name, payload, r.Exit)
		}
		for _, c := range decided {
			if !c.Shell || strings.TrimSpace(c.Command) == "" || len(c.Command) > MaxCommand || !utf8.ValidString(c.Command) ||
				c.Dir != "" && !strings.HasPrefix(c.Dir, "/") {
				t.Errorf("%s %q: decided %+v", a.Name, payload, c)
			}
		}
		if len(decided) > 0 && r.Exit == 0 && strings.Contains(strings.ToLower(string(r.Stdout)), `"allow"`) {
			t.Errorf("%s %q: a refused call was answered %s", a.Name, payload, r.Stdout)
		}
	})
}
