//go:build darwin || windows

package policy_test

import (
	"testing"

	"github.com/shellgate/shellgate/policy"
)

// Where the file system finds /usr/bin/SUDO for "SUDO", the name tables match any case.
func TestNamesFoldCase(t *testing.T) {
	l := newLab(t)
	e, _ := policy.New(policy.Settings{})
	for cmd, rule := range map[string]string{
		"SUDO true":        policy.RulePrivilege,
		"Sudo.exe true":    policy.RulePrivilege,
		"Docker run x":     policy.RuleEscape,
		"VIM notes.txt":    policy.RuleInteractive,
		"Curl https://x.y": policy.RuleNetwork,
	} {
		if v := e.Check(cmd, l.env()); v.Decision == policy.Allow || v.Rule != rule {
			t.Errorf("%q: %s rule %q, want rule %q", cmd, v.Decision, v.Rule, rule)
		}
	}
}
