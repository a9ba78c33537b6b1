package policy_test

import (
	"testing"

	"github.com/shellgate/shellgate/policy"
)

// An interpreter whose program is its own standard input runs whatever is
// sent to it later (a session job's input): unchecked code, rule dynamic.
// A program in the line — inline, a here-string, a pipe — is judged as usual.
func TestProgramOnStdin(t *testing.T) {
	e, err := policy.New(policy.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	env := policy.Env{Root: "/work/p", Home: "/home/u"}
	for _, c := range []struct {
		cmd  string
		want policy.Decision
	}{
		{"python3 -", policy.Ask},
		{"python3 -u -", policy.Ask},
		{"python3 /dev/stdin", policy.Ask},
		{"node -", policy.Ask},
		{"node /dev/fd/0", policy.Ask},
		{"bash /dev/stdin", policy.Ask},
		{"perl -- -", policy.Ask},
		{"ruby /proc/self/fd/0", policy.Ask},
		{"cat | python3", policy.Ask},
		{"head -c 999 | python3", policy.Ask},
		{"cat | node", policy.Ask},
		{"tee | perl", policy.Ask},
		{"python3 < /dev/stdin", policy.Ask},
		{"sh < /dev/fd/0", policy.Ask},
		{"python3 --version", policy.Allow},
		{"python3 -V", policy.Allow},
		{"python3 -c 'print(1)'", policy.Allow},
		{"python3 -m json.tool data.json", policy.Allow},
		{"node -e 'console.log(1)'", policy.Allow},
		{"python3 script.py", policy.Allow},
		{"python3 - <<< 'print(1)'", policy.Allow},
		{"echo 'print(1)' | python3 -", policy.Allow},
	} {
		v := e.Check(c.cmd, env)
		if v.Decision != c.want || c.want == policy.Ask && v.Rule != policy.RuleDynamic {
			t.Errorf("%s: %s %s (%s), want %s", c.cmd, v.Decision, v.Rule, v.Reason, c.want)
		}
	}
}
