package policy

import "slices"

// Active returns the built-in rules in force under s, with the decision each one
// gives: relaxed rules, the network rule when the network is on, dedicated-tools
// when it is off and untrusted outside untrusted mode are left out, and in ModeNever
// every ask is a deny. Tool descriptions use it to tell the model the exact rules.
func (s Settings) Active() []RuleInfo {
	var out []RuleInfo
	for _, r := range Rules() {
		switch {
		case slices.Contains(s.Relax, r.ID),
			r.ID == RuleNetwork && s.Network,
			r.ID == RuleDedicated && !s.DedicatedTools,
			r.ID == RuleUntrusted && s.Mode != ModeUntrusted:
			continue
		}
		if r.Decision == Ask && s.Mode == ModeNever {
			r.Decision = Deny
		}
		out = append(out, r)
	}
	return out
}
