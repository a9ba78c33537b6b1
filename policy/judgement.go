package policy

// Covers are what contains a command besides the policy, known only once the
// sandbox has started or a checkpoint is taken: each makes some hits moot,
// and Judgement.Verdict leaves those out.
type Covers struct {
	// Sandbox: the kernel sandbox confines what the parser cannot see (rules
	// dynamic, stored-code, exec-flags: code known only when it runs can
	// write only inside the root, reach only the session's loopback, and
	// dies with the session).
	Sandbox bool
	// PrivateLoopback: commands run in a network namespace of their own, whose
	// loopback holds only their own servers: an HTTP client that only talks
	// to loopback is not network use.
	PrivateLoopback bool
	// Egress: with the network off, commands reach it only through
	// shellgate's allow-listing proxy, which decides per domain: the network
	// rule stops judging by program names.
	Egress bool
	// Checkpoint: what rule lose-work asks about is taken back by `shellgate
	// undo`.
	Checkpoint bool
}

// SandboxRules are the rules the sandbox makes moot (Covers.Sandbox).
var SandboxRules = []string{RuleDynamic, RuleStoredCode, RuleExecFlags}

// cover reports whether c makes h moot.
func (c Covers) cover(h *hit) bool {
	switch {
	case h.covered != nil && h.covered(c):
		return true
	case c.Checkpoint && h.rule == RuleLoseWork && !h.beyondUndo:
		return true
	}
	if c.Sandbox {
		for _, r := range SandboxRules {
			if h.rule == r {
				return true
			}
		}
	}
	return false
}

// Judgement is a command line judged once: every rule's hits, from which a
// verdict is taken for what contains the command and what the user approved.
type Judgement struct {
	x     *check
	fixed *Verdict // a refusal nothing changes: the line does not parse, a misconfiguration
}

// Verdict decides with c known and approved (nil: nothing approved), as
// CheckApproved does.
func (j *Judgement) Verdict(c Covers, approved func(key string) bool) Verdict {
	if j.fixed != nil {
		return *j.fixed
	}
	return j.x.verdict(c, approved)
}
