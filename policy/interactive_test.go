package policy_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/shellgate/shellgate/policy"
)

// What the interactive rule advises instead is allowed: a command the
// advice spells out in backquotes passes the same policy.
func TestInteractiveAdviceIsAllowed(t *testing.T) {
	l := newLab(t)
	e, err := policy.New(policy.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	quoted := regexp.MustCompile("`([^`]+)`")
	for _, denied := range []string{"git rebase -i HEAD~2", "git rebase --interactive main", "man ls"} {
		v := e.Check(denied, l.env())
		_, advice, ok := strings.Cut(v.Reason, " Instead, ")
		if v.Decision != policy.Deny || v.Rule != policy.RuleInteractive || !ok {
			t.Fatalf("%q: %s (rule %s): %s; want a denial that says what to do instead", denied, v.Decision, v.Rule, v.Reason)
		}
		examples := quoted.FindAllStringSubmatch(advice, -1)
		if len(examples) == 0 {
			t.Errorf("%q: the advice spells out no command: %s", denied, advice)
		}
		for _, m := range examples {
			if w := e.Check(m[1], l.env()); w.Decision != policy.Allow {
				t.Errorf("%q advises `%s`, which is %s (rule %s): %s", denied, m[1], w.Decision, w.Rule, w.Reason)
			}
		}
	}
}

// The interactive rule offers a terminal job (tty, job_input) only to a
// caller that can start one (Env.TerminalJobs: a session); the CLI, a hook or
// a one-shot run would be told of parameters it does not have.
func TestInteractiveOffersTerminalJobsOnlyWhereThereAreAny(t *testing.T) {
	l := newLab(t)
	e, err := policy.New(policy.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	for _, jobs := range []bool{false, true} {
		env := l.env()
		env.TerminalJobs = jobs
		for _, cmd := range []string{"vim a.txt", "top", "python3"} {
			v := e.Check(cmd, env)
			if v.Decision != policy.Deny || v.Rule != policy.RuleInteractive {
				t.Fatalf("%s: %s (rule %s), want the interactive rule's deny", cmd, v.Decision, v.Rule)
			}
			if got := strings.Contains(v.Reason, "tty: true") && strings.Contains(v.Reason, "job_input"); got != jobs {
				t.Errorf("TerminalJobs %v: %s: %q", jobs, cmd, v.Reason)
			}
		}
	}
}
