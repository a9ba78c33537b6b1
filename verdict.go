package shellgate

import (
	"github.com/shellgate/shellgate/envelope"
	"github.com/shellgate/shellgate/policy"
)

// A Verdict is the policy's decision about a request, with the envelope error code
// Run gives when it refuses the request. The policy decides; which code a refusal
// carries is the envelope's business, chosen here and nowhere else.
type Verdict struct {
	policy.Verdict
	// Code is the error code of Run's envelope when it refuses the request without
	// running it: APPROVAL_REQUIRED for an ask no one approves, the code of a
	// refusal for a deny; empty for an allow.
	Code envelope.Code `json:"code,omitempty"`
}

// verdict gives v the code of its refusal.
func verdict(v policy.Verdict) Verdict {
	return Verdict{Verdict: v, Code: refusalCode(v)}
}

// refusalCode is the error code of a refusal by v: ACCESS_DENIED for a path leaving
// the root, EXECUTION_ERROR when shellgate itself is misconfigured (the caller's
// mistake, not the command's), POLICY_DENIED for any other rule (INVALID_PARAM would
// tell a model its parameters were malformed), APPROVAL_REQUIRED for an ask.
func refusalCode(v policy.Verdict) envelope.Code {
	switch {
	case v.Decision == policy.Ask:
		return envelope.ApprovalRequired
	case v.Decision != policy.Deny:
		return ""
	case v.Rule == policy.RuleConfinement:
		return envelope.AccessDenied
	case v.Rule == policy.RuleEnv:
		return envelope.ExecutionError
	}
	return envelope.PolicyDenied
}

// dirVerdict is the refusal of a directory that cannot be used: rule confinement for
// one outside the root, no rule for one that is missing or not a directory (a bad
// parameter), with the code Run gives it. Gate.Check and Checker.Check agree on it.
func dirVerdict(de *dirError) Verdict {
	v := policy.Verdict{Decision: policy.Deny, Reason: de.msg}
	if de.code == envelope.AccessDenied {
		v.Rule = policy.RuleConfinement
	}
	return Verdict{Verdict: v, Code: de.code}
}
