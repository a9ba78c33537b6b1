package mcpserver

import (
	"context"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/shellgate/shellgate/envelope"
)

// Bounds of a summary asked of the client's model.
const (
	defaultSummaryTokens = 400
	summaryTimeout       = time.Minute
	maxSummary           = 4 << 10 // bytes kept of what the client returns
)

// canSample reports whether the client offers sampling and may be asked during a
// call (protocol versions before 2026-07-28; later ones get the digest alone).
func canSample(ss *mcp.ServerSession) bool {
	p := ss.InitializeParams()
	return p != nil && p.Capabilities != nil && p.Capabilities.Sampling != nil && !multiRoundTrip(ss)
}

// summarize asks the client's model to summarize env's cut output and returns env
// with the summary, or env as it was if the client cannot or does not answer.
func (s *Server) summarize(ctx context.Context, ss *mcp.ServerSession, env envelope.Envelope) envelope.Envelope {
	ctx, cancel := context.WithTimeout(ctx, summaryTimeout)
	defer cancel()
	tokens := s.opts.SummaryTokens
	if tokens <= 0 {
		tokens = defaultSummaryTokens
	}
	res, err := ss.CreateMessage(ctx, &mcp.CreateMessageParams{
		SystemPrompt: "You summarize shell command output for a coding agent. Be factual and brief.",
		MaxTokens:    int64(tokens),
		Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: fmt.Sprintf(
			"The output of this command was too long and was cut: its head and tail are below, with the lines of the "+
				"omitted middle that look like errors. In at most %d tokens, say what the command did, every error, "+
				"warning or failure (with line numbers when given), and how it ended.\n\n%s", tokens, env.Text)}}},
	})
	if err != nil {
		s.log.Warn("summary not obtained", "error", err)
		return env
	}
	text, ok := res.Content.(*mcp.TextContent)
	if !ok || text.Text == "" {
		return env
	}
	env.Data.Summary = envelope.CutMiddle(text.Text, maxSummary)
	env.Settle()
	return env
}
