package policy

import (
	"slices"
	"testing"
)

func TestActive(t *testing.T) {
	ids := func(rs []RuleInfo) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.ID)
		}
		return out
	}
	def := ids(Settings{}.Active())
	for _, id := range []string{RuleCatastrophic, RuleNetwork, RuleInteractive, RuleStoredCode} {
		if !slices.Contains(def, id) {
			t.Errorf("default settings lack %s: %v", id, def)
		}
	}
	for _, id := range []string{RuleDedicated, RuleUntrusted} {
		if slices.Contains(def, id) {
			t.Errorf("default settings list %s, which is off: %v", id, def)
		}
	}
	s := Settings{Network: true, Relax: []string{RuleInteractive}, DedicatedTools: true, Mode: ModeUntrusted}
	got := ids(s.Active())
	if slices.Contains(got, RuleNetwork) || slices.Contains(got, RuleInteractive) ||
		!slices.Contains(got, RuleDedicated) || !slices.Contains(got, RuleUntrusted) {
		t.Errorf("%+v: %v", s, got)
	}
}
