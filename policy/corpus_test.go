package policy_test

import (
	"testing"

	"github.com/shellgate/shellgate/internal/corpus"
	"github.com/shellgate/shellgate/policy"
)

type row struct {
	line    int
	fields  map[string]string
	command string
}

// readCorpus reads a TSV file of the corpus, substituting placeholders.
func readCorpus(t testing.TB, name string, lab *lab) []row {
	t.Helper()
	var rows []row
	for _, r := range corpus.Read(t, name) {
		rows = append(rows, row{line: r.Line, fields: r.Fields, command: lab.substitute(r.Fields["command"])})
	}
	return rows
}

// lab is the corpus fixture (corpus.Lab) as these tests name its paths.
type lab struct {
	root, outside, evil, home, temp string
	c                               *corpus.Lab
}

func (l *lab) substitute(cmd string) string { return l.c.Substitute(cmd, 18081) }

func (l *lab) env() policy.Env {
	return policy.Env{Root: l.root, Dir: l.root, Home: l.home, TempDir: l.temp}
}

func newLab(t testing.TB) *lab {
	t.Helper()
	c := corpus.NewLab(t, t.TempDir())
	return &lab{root: c.Root, outside: c.Outside, evil: c.Evil, home: c.Home, temp: c.Temp, c: c}
}

func TestCorpusLegitIsAllowed(t *testing.T) {
	l := newLab(t)
	e, err := policy.New(policy.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range readCorpus(t, "legit.tsv", l) {
		v := e.Check(r.command, l.env())
		if v.Decision != policy.Allow {
			t.Errorf("legit.tsv:%d %s: %q: got %s (rule %s): %s", r.line, r.fields["category"], r.command, v.Decision, v.Rule, v.Reason)
		}
	}
}

func TestCorpusAttacksAreStopped(t *testing.T) { checkAttackCorpus(t, "attacks.tsv") }

// TestCorpusReviewAttacksAreStopped: the bypasses found by the adversarial
// review of shellgate (issue 10).
func TestCorpusReviewAttacksAreStopped(t *testing.T) { checkAttackCorpus(t, "attacks-review.tsv") }

// checkAttackCorpus: every parse-stage row of the corpus file is denied or
// asked; the other stages are the sandbox's job, and only reported.
func checkAttackCorpus(t *testing.T, name string) {
	l := newLab(t)
	e, err := policy.New(policy.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range readCorpus(t, name, l) {
		v := e.Check(r.command, l.env())
		if r.fields["stage"] == "parse" {
			if v.Decision == policy.Allow {
				t.Errorf("%s:%d %s: %q: allowed; want deny or ask (%s)", name, r.line, r.fields["category"], r.command, r.fields["what"])
			}
			continue
		}
		t.Logf("%s:%d [%s] %s: %s (%s)", name, r.line, r.fields["stage"], r.fields["category"], v.Decision, v.Rule)
	}
}
