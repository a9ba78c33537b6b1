package mcpserver

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/envelope"
)

// call handles tools/call: arguments → Request → Gate.Run → envelope → result.
// Whatever happens to the command, the answer is a tool result, never a JSON-RPC
// error, so that the model can read it.
func (s *Server) call(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	r, bad := parseArguments(req.Params.Arguments, s.info.MaxTimeout.Milliseconds(), s.info.MaxOutputLimit)
	if bad != nil {
		return s.result(req.Session, *bad)
	}
	capped := s.budget(s.profile(req.Session), &r)
	sessionID := sessionKey(req.Session)
	s.pruneSessions()
	ctx, done, ok := s.begin(ctx, sessionID)
	if !ok {
		return s.result(req.Session, envelope.NotRun(r.Command, nil, envelope.Err{Code: envelope.Cancelled, Message: "The server is shutting down; the command was not run."}))
	}
	defer done()

	opts := []shellgate.Option{shellgate.WithSpillFiles(func(path string) { s.spills.add(sessionID, path) })}
	if ss := req.Session; ss != nil {
		if token := req.Params.GetProgressToken(); token != nil {
			p := startProgress(ctx, ss.NotifyProgress, token, s.opts.ProgressInterval)
			defer p.stop()
			opts = append(opts, shellgate.WithOutput(p.add))
		}
		if canElicit(ss) {
			approve, first := s.approver(req, r)
			if first != nil {
				return first, nil
			}
			opts = append(opts, shellgate.WithApprover(approve))
		}
	}
	var env envelope.Envelope
	if sess := s.session(sessionID); sess != nil {
		env = sess.Run(ctx, r, opts...)
	} else {
		env = envelope.NotRun(r.Command, nil, envelope.Err{Code: envelope.Cancelled, Message: "The session has ended; the command was not run."})
	}
	if capped > 0 {
		env.Note(fmt.Sprintf("max_output_bytes %d is more than %s shows its model in a result; %d were returned.", capped, s.profile(req.Session).Client, r.MaxOutputBytes))
		env.Settle()
	}
	if s.opts.Summarize > 0 {
		summarize(ctx, req.Session, &env, s.opts.Summarize)
	}
	s.log.Info("call", "command", envelope.CutMiddle(r.Command, 512), "status", env.Status, "time_ms", env.Stats.TimeMS)
	return s.result(req.Session, env)
}

// result is env as a tool result for ss's client (profile).
func (s *Server) result(ss *mcp.ServerSession, env envelope.Envelope) (*mcp.CallToolResult, error) {
	p := s.profile(ss)
	// The text says how to take a command back in a way the model can act on:
	// with the undo tool, or, without it, by telling its user.
	if s.opts.UndoTool {
		env.SetUndo(envelope.UndoTool)
	} else {
		env.SetUndo(envelope.UndoUser)
	}
	fitText(&env, p.MaxText, p.Client)
	// The tool's description names the shell and the default timeout.
	known := envelope.Known{Shell: s.info.Shell, TimeoutMS: s.info.DefaultTimeout.Milliseconds()}
	return toolResult(env, s.opts.MaxMessage, !p.TextOnly, p.BriefOutput, known)
}

// approver returns how "ask" verdicts of this call are decided, in the client's
// session. For a client on 2026-07-28 or later that has not answered yet, it returns
// instead the result asking for the answer.
func (s *Server) approver(req *mcp.CallToolRequest, r shellgate.Request) (shellgate.Approver, *mcp.CallToolResult) {
	ss := req.Session
	approvals := s.approvals.of(ss, s.live)
	if !multiRoundTrip(ss) {
		return approvals.Wrap(elicitApprover(ss, s.log)), nil
	}
	res, answered := s.rounds.answer(req.Params, r)
	if !answered {
		if first, ok := s.rounds.askFirst(s.gate, r, approvals); ok {
			return nil, first
		}
	}
	// The answer is about the question asked, the line's first ask not approved
	// for the session: a further ask of the line (another rule) was never put
	// to the user, and must not ride on it (once this one is approved for the
	// session, a retry asks about the next).
	asked := s.gate.CheckApproved(r, approvals.Allowed).SessionKey
	return approvals.Wrap(func(_ context.Context, q shellgate.Question) shellgate.Answer {
		if q.SessionKey != asked {
			return shellgate.NotAsked // the client can be asked only between calls
		}
		return answerOf(res, q.SessionKey)
	}), nil
}
