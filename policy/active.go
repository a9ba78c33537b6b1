package policy

import "slices"

// Active returns the built-in rules in force under s: relaxed rules, the network rule
// when the network is on, dedicated-tools when it is off, untrusted outside
// untrusted mode and secrets where a sandbox contains the commands are left out. (In ModeNever an ask rule still says "ask"; the mode
// turns its answer into a refusal.) Tool descriptions use it to tell the model the
// exact rules.
func (s Settings) Active() []RuleInfo {
	var out []RuleInfo
	for _, r := range Rules() {
		switch {
		case slices.Contains(s.Relax, r.ID),
			r.ID == RuleNetwork && s.Network,
			r.ID == RuleDedicated && !s.DedicatedTools,
			r.ID == RuleUntrusted && s.Mode != ModeUntrusted,
			r.ID == RuleSecrets && !s.Unconfined,
			fixed(r.ID): // the configuration's own patterns, or a misconfiguration
			continue
		}
		out = append(out, r)
	}
	return out
}
