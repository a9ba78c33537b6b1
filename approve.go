package shellgate

import (
	"context"
	"fmt"

	"github.com/shellgate/shellgate/envelope"
	"github.com/shellgate/shellgate/internal/hint"
	"github.com/shellgate/shellgate/policy"
)

// approve asks the approver about an "ask" verdict.
func (g *Gate) approve(ctx context.Context, req Request, v policy.Verdict, a Approver) (answer string, ok, asked bool) {
	if a == nil {
		return "", false, false
	}
	q := Question{Command: req.Command, Rule: v.Rule, Reason: v.Reason, SessionKey: v.SessionKey}
	if _, ok := q.Shown(); !ok {
		return "", false, true // approveAll says why
	}
	switch a(ctx, q) {
	case AllowOnce:
		return "once", true, true
	case AllowSession:
		return "session", true, true
	case NotAsked:
		return "", false, false
	}
	return "", false, true
}

// approveAll asks about v, then about each further ask of the line (another
// rule, another sub-command) that the answers so far do not cover, so that no
// command rides on another's approval. It returns "once" if any answer was
// for this run only, else "session", and the protected paths the questions
// named; or the refusal of the first not approved.
func (g *Gate) approveAll(ctx context.Context, req Request, v policy.Verdict, j *policy.Judgement, covers policy.Covers, a Approver) (string, []string, *envelope.Err) {
	var shownPaths []string
	approved := map[string]bool{}
	asked := map[string]bool{}
	who := "session"
	for {
		answer, ok, put := g.approve(ctx, req, v, a)
		if _, shown := (Question{Command: req.Command}).Shown(); !ok && a != nil && !shown {
			return "", nil, &envelope.Err{Code: envelope.ApprovalRequired, Rule: v.Rule, Message: fmt.Sprintf(
				"Approval required: %s The command is too long to show for approval (%d bytes; at most %d bytes and %d lines are shown whole), so the user was not asked. Split it into shorter commands, or write it to a script file in the project and ask the user to review and allow that.",
				v.Unasked(), len(req.Command), MaxShownCommand, MaxShownLines)}
		}
		if !ok {
			return "", nil, &envelope.Err{Code: envelope.ApprovalRequired, Rule: v.Rule, Message: g.approvalMessage(v, put)}
		}
		shownPaths = append(shownPaths, v.Paths...)
		if answer == "once" {
			who = "once"
		}
		asked[askID(v)] = true
		if v.SessionKey == "" {
			// The engine cannot look past an ask that has no key: the others
			// (if any) were shown to the user with the whole command line.
			return who, shownPaths, nil
		}
		approved[v.SessionKey] = true
		next := j.Verdict(covers, func(key string) bool { return approved[key] })
		if next.Decision != policy.Ask || asked[askID(next)] {
			return who, shownPaths, nil
		}
		v = next
	}
}

func askID(v policy.Verdict) string {
	return fmt.Sprintf("%s\x00%s\x00%d:%d\x00%s", v.Rule, v.Command, v.Line, v.Col, v.SessionKey)
}

func (g *Gate) approvalMessage(v policy.Verdict, asked bool) string {
	if asked {
		return fmt.Sprintf("Not approved: %s The user declined this command; do not retry it as is.", v.Unasked())
	}
	// Not the project's .shellgate.toml: a project file may not loosen the policy.
	how := "The user can run it where a person can approve it."
	if v.Rule == policy.RuleUserAsk {
		how = "The user can take the ask rule out of the config that sets it, or run it where a person can approve it."
	} else if v.AllowPattern != "" && g.cfg.PolicyFile != "" {
		how = fmt.Sprintf("To allow it without asking, the user can add [policy] allow = [%s] to %s, or run it where a person can approve it.", hint.TOMLString(v.AllowPattern), hint.Tilde(g.cfg.PolicyFile))
	} else if v.AllowPattern != "" {
		// No file is read (a Config built in code): the program's own settings.
		how = fmt.Sprintf("To allow it without asking, the user can add %s to shellgate's allow patterns (Config.Policy.Allow, or [policy] allow in a configuration file), or run it where a person can approve it.", hint.TOMLString(v.AllowPattern))
	}
	return fmt.Sprintf("No one could be asked to approve it: %s %s", v.Unasked(), how)
}
