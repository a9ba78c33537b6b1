package policy_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/shellgate/shellgate/policy"
)

// A command that writes several protected paths is asked about once, naming
// every one of them: the question used to name only the first, and an
// approval kept only that one.
func TestAskNamesEveryProtectedPath(t *testing.T) {
	l := newLab(t)
	e, err := policy.New(policy.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		cmd   string
		paths []string
	}{
		{"tee .envrc .vscode/settings.json < x", []string{".envrc", ".vscode/settings.json"}},
		{"echo x > .envrc", []string{".envrc"}},
		{"tar -xf a.tar -C .vscode", []string{".vscode"}},
		{"tar xfC a.tar .github", []string{".github"}},
		{"cd .vscode && unzip ../a.zip", []string{".vscode"}},
		{"cp x .envrc && cp x .vscode/tasks.json", []string{".envrc"}}, // two commands: two questions, one at a time
	}
	for _, tc := range tests {
		v := e.Check(tc.cmd, l.env())
		var want []string
		for _, p := range tc.paths {
			want = append(want, filepath.Join(l.root, p))
		}
		if v.Decision != policy.Ask || v.Rule != policy.RuleProtected || !slices.Equal(v.Paths, want) {
			t.Errorf("%q: %s (rule %s), paths %q; want ask (rule %s), paths %q", tc.cmd, v.Decision, v.Rule, v.Paths, policy.RuleProtected, want)
		}
		for _, p := range want {
			if !strings.Contains(v.Reason, p) {
				t.Errorf("%q: the question does not name %s: %s", tc.cmd, p, v.Reason)
			}
		}
	}
}
