package hook

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/shellgate/shellgate/policy"
)

// The hook's own refusals (an empty or oversized command) name no rule, or one
// that `shellgate check --rules` lists.
func TestHookRefusalRulesListed(t *testing.T) {
	var listed []string
	for _, r := range policy.Rules() {
		listed = append(listed, r.ID)
	}
	a, _ := Lookup("claude-code")
	never := func(*Call) (policy.Verdict, error) {
		t.Error("the hook asked the policy about a command it refuses itself")
		return policy.Verdict{Decision: policy.Allow}, nil
	}
	ruleRE := regexp.MustCompile(`shellgate \(([^)]*)\):`)
	for _, cmd := range []string{"  \t", strings.Repeat("x", MaxCommand+1)} {
		payload, _ := json.Marshal(map[string]any{"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": map[string]string{"command": cmd}})
		res := a.Handle(strings.NewReader(string(payload)), func(string) string { return "" }, never)
		out := string(res.Stdout)
		if !strings.Contains(out, "deny") {
			t.Errorf("%.20q: not refused: %s", cmd, out)
		}
		if m := ruleRE.FindStringSubmatch(out); m != nil && !slices.Contains(listed, m[1]) {
			t.Errorf("%.20q: refused under rule %q, which check --rules does not list", cmd, m[1])
		}
	}
}
