package shellgate_test

import (
	"strings"
	"testing"

	"github.com/shellgate/shellgate/internal/lane"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/envelope"
	"github.com/shellgate/shellgate/policy"
)

// Check's code is the one Run's refusal carries, whichever rule or directory
// refuses; the policy decides and the facade alone picks the code.
func TestCheckCodeIsRunCode(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	ask := policy.Settings{Ask: []string{"touch *"}}
	tests := []struct {
		name string
		p    policy.Settings
		req  shellgate.Request
		want envelope.Code
	}{
		{"allow", policy.Settings{}, shellgate.Request{Command: "true"}, ""},
		{"privilege", policy.Settings{}, shellgate.Request{Command: "sudo -n true"}, envelope.PolicyDenied},
		{"parse", policy.Settings{}, shellgate.Request{Command: "echo 'x"}, envelope.PolicyDenied},
		{"user deny", policy.Settings{Deny: []string{"touch *"}}, shellgate.Request{Command: "touch x"}, envelope.PolicyDenied},
		{"confinement", policy.Settings{}, shellgate.Request{Command: "cd .. && touch x"}, envelope.AccessDenied},
		{"ask, no approver", ask, shellgate.Request{Command: "touch x"}, envelope.ApprovalRequired},
		{"ask in mode never", policy.Settings{Mode: policy.ModeNever, Ask: ask.Ask}, shellgate.Request{Command: "touch x"}, envelope.PolicyDenied},
		{"directory outside", policy.Settings{}, shellgate.Request{Command: "true", Directory: ".."}, envelope.AccessDenied},
		{"directory missing", policy.Settings{}, shellgate.Request{Command: "true", Directory: "nope"}, envelope.NotFound},
		// A request Run does not take is refused before it is judged.
		{"blank command", policy.Settings{}, shellgate.Request{Command: " \n"}, envelope.InvalidParam},
		{"1 MiB command", policy.Settings{}, shellgate.Request{Command: strings.Repeat("true;", 1<<20/5)}, envelope.InvalidParam},
		{"timeout out of range", policy.Settings{}, shellgate.Request{Command: "true", TimeoutMS: ms(-1)}, envelope.InvalidParam},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := gate(t, shellgate.Config{Root: l.root, Policy: tt.p})
			v := g.Check(tt.req)
			if v.Code != tt.want {
				t.Errorf("Check: %s rule %q code %q, want code %q", v.Decision, v.Rule, v.Code, tt.want)
			}
			if a := g.CheckApproved(tt.req, func(string) bool { return false }); a.Code != v.Code {
				t.Errorf("CheckApproved: code %q, Check's %q", a.Code, v.Code)
			}
			env := run(t, g, tt.req)
			var got envelope.Code
			if env.Error != nil {
				got = env.Error.Code
				if env.Error.Rule != v.Rule {
					t.Errorf("Run's error.rule %q, Check's rule %q", env.Error.Rule, v.Rule)
				}
			}
			if got != tt.want {
				t.Errorf("Run: code %q, want %q\n%s", got, tt.want, env.Text)
			}
		})
	}
}
