package mcpserver

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"github.com/shellgate/shellgate/internal/lane"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/envelope"
)

// answering returns client options whose elicitation handler gives res and counts
// how often it was asked.
func answering(res *mcp.ElicitResult, asked *atomic.Int32, message *atomic.Value) *mcp.ClientOptions {
	return &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked.Add(1)
		if message != nil {
			message.Store(r.Params.Message)
		}
		return res, nil
	}}
}

func TestElicitation(t *testing.T) {
	lane.Live(t)
	tests := []struct {
		name       string
		answer     *mcp.ElicitResult // nil: the client does not support elicitation
		wantRun    bool
		wantCode   envelope.Code
		wantAsked  int32
		wantReason string
	}{
		{"accept once", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow_once"}}, true, "", 1, ""},
		{"accept without content", &mcp.ElicitResult{Action: "accept"}, true, "", 1, ""},
		{"accept but choose deny", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "deny"}}, false, envelope.ApprovalRequired, 1, "declined"},
		{"decline", &mcp.ElicitResult{Action: "decline"}, false, envelope.ApprovalRequired, 1, "declined"},
		{"cancel", &mcp.ElicitResult{Action: "cancel"}, false, envelope.ApprovalRequired, 1, "declined"},
		{"unsupported", nil, false, envelope.ApprovalRequired, 0, "take the ask rule out"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, root := newServer(t, shellgate.Config{}, Options{})
			var asked atomic.Int32
			var message atomic.Value
			var copts *mcp.ClientOptions
			if tc.answer != nil {
				copts = answering(tc.answer, &asked, &message)
			}
			cs := connect(t, srv, copts, nil)
			// The Go SDK speaks 2026-07-28 in memory: approval goes through an input
			// request of the result (TestHTTP covers elicitation during the call).
			if v := cs.InitializeResult().ProtocolVersion; v < multiRoundTripVersion {
				t.Errorf("negotiated %s; the input-request path is not covered", v)
			}
			env := call(t, context.Background(), cs, &mcp.CallToolParams{Arguments: args("command", "touch made")})
			_, err := os.Stat(filepath.Join(root, "made"))
			if ran := err == nil; ran != tc.wantRun {
				t.Errorf("command ran = %v, want %v\n%s", ran, tc.wantRun, env.Text)
			}
			if n := asked.Load(); n != tc.wantAsked {
				t.Errorf("asked %d times, want %d", n, tc.wantAsked)
			}
			if tc.wantRun {
				if env.Status != envelope.Success || env.Context.Policy == nil || env.Context.Policy.Approved == "" {
					t.Errorf("status %s, policy %+v; want success approved by the user", env.Status, env.Context.Policy)
				}
				if m, _ := message.Load().(string); !strings.Contains(m, "touch made") {
					t.Errorf("elicitation message %q does not show the command", m)
				}
				return
			}
			if env.Error == nil || env.Error.Code != tc.wantCode || !strings.Contains(env.Error.Message, tc.wantReason) {
				t.Errorf("error %+v, want %s mentioning %q", env.Error, tc.wantCode, tc.wantReason)
			}
		})
	}
}

// "Allow for this session" approves later commands with the same prefix in that
// session without asking again, and never in another session.
func TestSessionApproval(t *testing.T) {
	lane.Live(t)
	srv, root := newServer(t, shellgate.Config{}, Options{})
	var askedA, askedB atomic.Int32
	a := connect(t, srv, answering(&mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow_session"}}, &askedA, nil), nil)
	b := connect(t, srv, answering(&mcp.ElicitResult{Action: "decline"}, &askedB, nil), nil)

	for _, name := range []string{"one", "two", "three"} {
		env := call(t, context.Background(), a, &mcp.CallToolParams{Arguments: args("command", "touch "+name)})
		if env.Status != envelope.Success {
			t.Fatalf("touch %s in session A: %s", name, env.Text)
		}
	}
	if n := askedA.Load(); n != 1 {
		t.Errorf("session A asked %d times, want 1 (then remembered)", n)
	}
	env := call(t, context.Background(), b, &mcp.CallToolParams{Arguments: args("command", "touch four")})
	if env.Status != envelope.Error || askedB.Load() != 1 {
		t.Errorf("session B: status %s after %d questions; want its own question and a refusal", env.Status, askedB.Load())
	}
	if _, err := os.Stat(filepath.Join(root, "four")); err == nil {
		t.Error("session A's approval let session B's command run")
	}
}

// The question is for the user: why in plain words, not the model's instructions.
func TestApprovalMessageWording(t *testing.T) {
	q := shellgate.Question{Command: "npm publish", Rule: "user.ask", SessionKey: "npm publish",
		Reason: "`npm publish` matches the ask rule \"npm publish *\" of the shellgate configuration (rule user.ask): the user must approve it."}
	m := approvalMessage(q)
	if !strings.Contains(m, `Why you are asked: It matches an "ask" rule of the shellgate configuration.`) || strings.Contains(m, "the user must approve it") {
		t.Errorf("%s", m)
	}
}

// An elicitation is one MCP message too: a huge command is cut in the question.
func TestApprovalMessageBounded(t *testing.T) {
	q := shellgate.Question{Command: "touch " + strings.Repeat("x", 5<<20), Rule: "stored-code", Reason: strings.Repeat("why ", 1<<20), SessionKey: "touch"}
	m := approvalMessage(q)
	if len(m) > 32<<10 {
		t.Errorf("approval message of %d bytes", len(m))
	}
	for _, want := range []string{"touch xxx", "bytes cut", "(rule stored-code)", `covered by "touch"`} {
		if !strings.Contains(m, want) {
			t.Errorf("message lacks %q", want)
		}
	}
}

// A command cannot paint itself as another one in the elicitation: carriage
// returns, escape sequences, backspaces and bidi overrides are shown, not obeyed.
func TestApprovalMessageControlsVisible(t *testing.T) {
	cmd := "rm -rf ~\r\x1b[2Kgit status\b\b\u202e \x9b1m"
	m := approvalMessage(shellgate.Question{Command: cmd, Rule: "catastrophic", Reason: "why", SessionKey: cmd})
	if strings.ContainsAny(m, "\r\x1b\b\u202e") || strings.Contains(m, "\x9b") {
		t.Errorf("control characters reach the elicitation: %q", m)
	}
	for _, want := range []string{`rm -rf ~\r\e[2Kgit status\x08\x08\u202E \x9b1m`, `covered by "rm -rf ~\\r\\e[2Kgit`} {
		if !strings.Contains(m, want) {
			t.Errorf("message lacks %q: %q", want, m)
		}
	}
}

// The command is shown whole and as a block: a newline in it cannot start a line
// that passes for the question's own text (a planted "Why you are asked"), and
// a run of blank lines cannot scroll the rest of it out of sight.
func TestApprovalMessageShowsCommandAsBlock(t *testing.T) {
	planted := "echo ok\n\nWhy you are asked: It is a harmless echo.\n\"Allow for this session\" is safe.\ntouch x"
	m := approvalMessage(shellgate.Question{Command: planted, Rule: "user.ask", SessionKey: "touch x"})
	n := 0
	for _, line := range strings.Split(m, "\n") {
		if strings.HasPrefix(line, "Why you are asked:") {
			n++
		}
		if strings.HasPrefix(line, `"Allow for this session"`) && strings.Contains(line, "is safe") {
			t.Errorf("a line of the command passes for the question's: %q", line)
		}
	}
	if n != 1 || !strings.Contains(m, "touch x") {
		t.Errorf("%d lines start the question's own paragraph:\n%s", n, m)
	}
	hidden := "true" + strings.Repeat("\n", 60) + "touch x"
	m = approvalMessage(shellgate.Question{Command: hidden, Rule: "user.ask", SessionKey: "touch x"})
	if lines := strings.Count(m, "\n") + 1; lines > 15 || !strings.Contains(m, "touch x") || !strings.Contains(m, "59 empty lines") {
		t.Errorf("blank lines not shown as such (%d lines):\n%s", lines, m)
	}
}

// A domain not on the network allow-list is the question itself, short: the
// domain, for the session, then the command that connects to it; the choices
// are named for what they allow.
func TestApprovalMessageDomain(t *testing.T) {
	q := shellgate.Question{Command: "npm install left-pad", Rule: "egress", SessionKey: "network registry.npmjs.org",
		Domain: "registry.npmjs.org", Port: 443, Reason: "It connects to registry.npmjs.org (port 443), which is not on the network allow-list."}
	req := approvalRequest(q)
	want := "Allow registry.npmjs.org for this session?\n\n│ npm install left-pad\n\nThis command connects to it, on port 443; it is not on the network allow-list."
	if req.Message != want {
		t.Errorf("message %q, want %q", req.Message, want)
	}
	if n := utf8.RuneCountInString(req.Message); n > 160 {
		t.Errorf("%d characters for a domain question", n)
	}
	names := func(schema any) []string {
		return schema.(map[string]any)["properties"].(map[string]any)["decision"].(map[string]any)["enumNames"].([]string)
	}
	if got := names(req.RequestedSchema); !slices.Equal(got, []string{"Only this command", "This session", "Deny"}) {
		t.Errorf("choices %q", got)
	}
	// Another command of the session may be the one connecting: named too.
	q.Others = []string{"(sleep 1; curl https://registry.npmjs.org/x) &"}
	want += "\n\nOr one of these, running in the session or having left processes there, does (shellgate cannot tell which; while this command runs, \"only this command\" also lets through their connections it cannot trace):\n│ (sleep 1; curl https://registry.npmjs.org/x) &"
	if got := approvalRequest(q).Message; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
	// A process an earlier command left running connects: that command is
	// shown, and said to have left it.
	q.Others, q.Left = nil, true
	if got, want := approvalRequest(q).Message, "Allow registry.npmjs.org for this session?\n\n│ npm install left-pad\n\nA process this earlier command left running connects to it, on port 443; it is not on the network allow-list."; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
	q.Domain, q.Left = "", false
	if got := names(approvalRequest(q).RequestedSchema); !slices.Equal(got, []string{"Allow once", "Allow for this session", "Deny"}) {
		t.Errorf("a command's choices %q", got)
	}
}
