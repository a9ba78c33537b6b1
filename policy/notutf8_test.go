package policy_test

import (
	"strings"
	"testing"

	"github.com/shellgate/shellgate/policy"
)

// A line that is not UTF-8 is refused saying which byte, where, that it is
// not UTF-8, that nothing ran, and how bash writes the byte: it used to be
// called "not valid bash", which bash would have run.
func TestNotUTF8Refusal(t *testing.T) {
	e, err := policy.New(policy.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	l := newLab(t)
	tests := []struct {
		cmd       string
		line, col int
		says      []string
	}{
		{"echo \xff", 1, 6, []string{"byte 0xff at offset 5 (line 1, column 6) is not UTF-8", "nothing ran", `$'\xff'`}},
		{"ls\nprintf '%s' a\xc3", 2, 14, []string{"byte 0xc3 at offset 16 (line 2, column 14) is not UTF-8", "nothing ran", `$'\xc3'`}},
	}
	for _, tt := range tests {
		v := e.Check(tt.cmd, l.env())
		if v.Decision != policy.Deny || v.Rule != policy.RuleParse || v.Line != tt.line || v.Col != tt.col {
			t.Errorf("%q: %s (rule %s) at %d:%d, want deny (rule parse) at %d:%d", tt.cmd, v.Decision, v.Rule, v.Line, v.Col, tt.line, tt.col)
		}
		for _, s := range tt.says {
			if !strings.Contains(v.Reason, s) {
				t.Errorf("%q: reason %q does not say %q", tt.cmd, v.Reason, s)
			}
		}
		if strings.Contains(v.Reason, "not valid bash") {
			t.Errorf("%q: reason %q calls it invalid bash", tt.cmd, v.Reason)
		}
	}
}
