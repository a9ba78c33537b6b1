package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/envelope"
)

// call handles tools/call: arguments → Request → Gate.Run → envelope → result.
// Whatever happens to the command, the answer is a tool result, never a JSON-RPC
// error, so that the model can read it.
func (s *Server) call(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	r, bad := parseArguments(req.Params.Arguments, s.info.MaxTimeout.Milliseconds())
	if bad != nil {
		return toolResult(*bad, s.opts.MaxMessage)
	}
	var sessionID string
	if req.Session != nil {
		sessionID = req.Session.ID()
	}
	ctx, done, ok := s.begin(ctx, sessionID)
	if !ok {
		env := envelope.Envelope{Data: envelope.Data{Command: r.Command}}
		return toolResult(*env.Fail(envelope.Cancelled, "The server is shutting down; the command was not run."), s.opts.MaxMessage)
	}
	defer done()

	var opts []shellgate.Option
	if ss := req.Session; ss != nil {
		if token := req.Params.GetProgressToken(); token != nil {
			p := startProgress(ctx, ss.NotifyProgress, token, s.opts.ProgressInterval)
			defer p.stop()
			opts = append(opts, shellgate.WithOutput(p.add))
		}
		if canElicit(ss) {
			approvals := s.approvals.of(ss, s.live)
			ask := elicitApprover(ss, s.log)
			if multiRoundTrip(ss) {
				res, answered := s.rounds.answer(req.Params, r)
				if !answered {
					if ask, ok := s.rounds.askFirst(s.gate, r, approvals); ok {
						return ask, nil
					}
				}
				ask = func(_ context.Context, q shellgate.Question) shellgate.Answer { return answerOf(res, q.SessionKey) }
			}
			opts = append(opts, shellgate.WithApprover(approvals.Wrap(ask)))
		}
	}
	env := s.gate.Run(ctx, r, opts...)
	s.log.Info("call", "command", cutMiddle(r.Command, 512), "status", env.Status, "time_ms", env.Stats.TimeMS)
	return toolResult(env, s.opts.MaxMessage)
}
