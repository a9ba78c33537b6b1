package policy

import (
	"os"
	"path/filepath"
	"testing"
)

// catalogues are every table of facts, by the rule that reads it.
var catalogues = map[string]*catalogue{
	"network":      networkFacts,
	"fetchers":     fetchers,
	"execution":    execFacts,
	"interactive":  interactiveFacts,
	"catastrophic": catastrophicFacts,
	"untrusted":    safeFacts,
	"lose-work":    loseWorkFacts,
	"daemon reads": daemonReads,
}

// TestCatalogueExamples checks every fact of every catalogue against its
// examples: it holds for a command of each match line and for no command of
// each notMatch line, as the line is analysed.
func TestCatalogueExamples(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	if err := os.Mkdir(filepath.Join(root, "p"), 0o755); err != nil {
		t.Fatal(err)
	}
	e, err := New(Settings{})
	if err != nil {
		t.Fatal(err)
	}
	env := Env{Root: filepath.Join(root, "p"), Home: home}
	for name, k := range catalogues {
		for i := range k.facts {
			f := &k.facts[i]
			if f.test == nil || len(f.match) == 0 || len(f.notMatch) == 0 {
				t.Errorf("%s fact %d (%v): wants a test, match and notMatch examples", name, i, f.programs)
				continue
			}
			for _, line := range f.match {
				if what := holds(e, env, f, line); what == "" {
					t.Errorf("%s fact %d (%v): does not hold for its match example %q", name, i, f.programs, line)
				}
			}
			for _, line := range f.notMatch {
				if what := holds(e, env, f, line); what != "" {
					t.Errorf("%s fact %d (%v): holds for its notMatch example %q: %s", name, i, f.programs, line, what)
				}
			}
		}
	}
}

// holds analyses line and returns what f says of the first of its commands
// f holds for, or "".
func holds(e *Engine, env Env, f *fact, line string) string {
	j := e.Judge(line, env)
	if j.x == nil || j.x.a == nil {
		return ""
	}
	for i := range j.x.a.Commands {
		c := &j.x.a.Commands[i]
		if c.Dynamic || !f.covers(c.Name) {
			continue
		}
		j.x.cur = i
		if what := f.test(j.x, c); what != "" {
			return what
		}
	}
	return ""
}
