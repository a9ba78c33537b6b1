package mcpserver

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/envelope"
)

// The choices offered when the policy asks about a command.
const (
	choiceAllowOnce    = "allow_once"
	choiceAllowSession = "allow_session"
	choiceDeny         = "deny"
)

// approvalSchema is the elicitation form: one choice, defaulting to "allow once".
var approvalSchema = decisionSchema(
	"Allow this command once, allow commands like it for the rest of this session, or deny it.",
	"Allow once", "Allow for this session", "Deny")

// domainSchema is the form asking about a domain not on the network
// allow-list: the same choices, named for what they allow.
var domainSchema = decisionSchema(
	"Allow the domain for the rest of this command, for this session, or deny it.",
	"Only this command", "This session", "Deny")

func decisionSchema(description string, names ...string) map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"decision": map[string]any{
				"type":        "string",
				"title":       "Decision",
				"description": description,
				"enum":        []string{choiceAllowOnce, choiceAllowSession, choiceDeny},
				"enumNames":   names,
				"default":     choiceAllowOnce,
			},
		},
		"required": []string{"decision"},
	}
}

// canElicit reports whether the client declared form elicitation support.
func canElicit(ss *mcp.ServerSession) bool {
	p := ss.InitializeParams()
	if p == nil || p.Capabilities == nil || p.Capabilities.Elicitation == nil {
		return false
	}
	e := p.Capabilities.Elicitation
	return e.Form != nil || e.URL == nil // neither declared means form, for older clients
}

// elicitApprover asks the client's user through elicitation/create, in the middle
// of the call (protocol versions before 2026-07-28). Anything but an explicit allow
// (decline, cancel, an error, a closed session) is a denial.
func elicitApprover(ss *mcp.ServerSession, log *slog.Logger) shellgate.Approver {
	return func(ctx context.Context, q shellgate.Question) shellgate.Answer {
		res, err := ss.Elicit(ctx, approvalRequest(q))
		if err != nil {
			log.Warn("elicitation failed; command denied", "command", q.Command, "error", err)
			return shellgate.Deny
		}
		return answerOf(res, q.SessionKey)
	}
}

// approvalRequest is the elicitation asking about q.
func approvalRequest(q shellgate.Question) *mcp.ElicitParams {
	if q.Domain != "" {
		return &mcp.ElicitParams{Message: approvalMessage(q), RequestedSchema: domainSchema}
	}
	return &mcp.ElicitParams{Message: approvalMessage(q), RequestedSchema: approvalSchema}
}

// answerOf reads the user's choice from an elicitation result.
func answerOf(res *mcp.ElicitResult, sessionKey string) shellgate.Answer {
	if res == nil || res.Action != "accept" {
		return shellgate.Deny
	}
	switch res.Content["decision"] {
	case choiceAllowSession:
		if sessionKey == "" {
			return shellgate.AllowOnce // nothing to remember it by
		}
		return shellgate.AllowSession
	case choiceDeny:
		return shellgate.Deny
	}
	return shellgate.AllowOnce
}

// approvalMessage shows the command whole, as a block (Question.Shown: the Gate
// does not ask about one too long to show; were it asked, its head is shown and
// says it is cut), and why the policy asks, each quoted on one line.
func approvalMessage(q shellgate.Question) string {
	var b strings.Builder
	shown, ok := q.Shown()
	if q.Domain != "" {
		// The question is the domain; the command is what connects to it.
		domain := shellgate.OneLine(q.Domain)
		who := "This command connects"
		if q.Left {
			who = "A process this earlier command left running connects"
		}
		fmt.Fprintf(&b, "Allow %s for this session?\n\n%s\n\n%s to it, on port %d; it is not on the network allow-list.", domain, shown, who, q.Port)
		if len(q.Others) > 0 {
			// The proxy sees a connection, not its process: any of these may be it.
			b.WriteString("\n\nOr one of these, running in the session or having left processes there, does (shellgate cannot tell which; while this command runs, \"only this command\" also lets through their connections it cannot trace):")
			for _, c := range q.Others {
				b.WriteString("\n│ " + shellgate.OneLine(envelope.CutMiddle(c, 200)))
			}
		}
		return b.String()
	}
	fmt.Fprintf(&b, "Allow this shell command?\n\n%s\n\n", shown)
	if !ok {
		fmt.Fprintf(&b, "(The command is %d bytes; not all of it is shown.)\n\n", len(q.Command))
	}
	if why := q.Why(); why != "" {
		fmt.Fprintf(&b, "Why you are asked: %s\n", shellgate.OneLine(envelope.CutMiddle(why, 4<<10)))
	}
	if q.SessionKey != "" {
		fmt.Fprintf(&b, "\"Allow for this session\" also allows later commands covered by %q until the client disconnects.", shellgate.OneLine(envelope.CutMiddle(q.SessionKey, 1<<10)))
	}
	return strings.TrimRight(b.String(), "\n")
}

// sessionApprovals keeps one allowlist per MCP session, so one client's "allow for
// this session" never approves another client's commands.
type sessionApprovals struct {
	mu  sync.Mutex
	all map[*mcp.ServerSession]*shellgate.SessionApprovals
}

// of returns ss's allowlist, forgetting those of sessions that have ended.
func (s *sessionApprovals) of(ss *mcp.ServerSession, live func(*mcp.ServerSession) bool) *shellgate.SessionApprovals {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a, ok := s.all[ss]; ok {
		return a
	}
	for old := range s.all {
		if !live(old) {
			delete(s.all, old)
		}
	}
	if s.all == nil {
		s.all = map[*mcp.ServerSession]*shellgate.SessionApprovals{}
	}
	a := new(shellgate.SessionApprovals)
	s.all[ss] = a
	return a
}
