package policy_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shellgate/shellgate/policy"
)

// A line with bytes that are not UTF-8 is judged as bash takes it (it used
// to be refused as "not valid bash"), its paths resolved with their own
// bytes: a link so named is followed.
func TestNotUTF8Judged(t *testing.T) {
	l := newLab(t)
	if err := os.Symlink(l.outside, filepath.Join(l.root, "\xff")); err != nil {
		t.Fatal(err)
	}
	checkDefaults(t, l, []decisionCase{
		{"printf '%s\\n' caf\xe9", allow, ""},
		{"touch notes-\xe9.txt && rm notes-\xe9.txt", allow, ""},
		{"rm -rf \xff/victim", deny, "confinement"},
		{"rm -rf /\xfe", deny, "confinement"},
		{"cd \xff && rm -rf victim", deny, "confinement"},
	})
}

// A line that is not UTF-8 and also holds a rune of those that stand for
// such bytes while it is read is refused saying which byte, where, that
// nothing ran, and how bash writes the byte.
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
		{"echo \xff \uf7ff", 1, 6, []string{"byte 0xff at offset 5 (line 1, column 6) is not UTF-8", "nothing ran", `$'\xff'`}},
		{"ls \uf780\nprintf '%s' a\xc3", 2, 14, []string{"byte 0xc3 at offset 20 (line 2, column 14) is not UTF-8", "nothing ran", `$'\xc3'`}},
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
	}
}
