package policy_test

import (
	"os"
	"testing"

	"github.com/shellgate/shellgate/policy"
)

// TestCorpusReport prints every decision with its reason (SHELLGATE_CORPUS_REPORT=1).
func TestCorpusReport(t *testing.T) {
	if os.Getenv("SHELLGATE_CORPUS_REPORT") == "" {
		t.Skip("set SHELLGATE_CORPUS_REPORT=1 to print every decision")
	}
	l := newLab(t)
	e, _ := policy.New(policy.Settings{})
	for _, name := range []string{"attacks.tsv", "legit.tsv"} {
		for _, r := range readCorpus(t, name, l) {
			v := e.Check(r.command, l.env())
			t.Logf("%s:%d [%s] %s → %s %s: %s", name, r.line, r.fields["stage"], r.fields["category"], v.Decision, v.Rule, v.Reason)
		}
	}
}
