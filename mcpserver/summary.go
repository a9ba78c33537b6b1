//lint:file-ignore SA1019 Sampling is deprecated (SEP-2577) but works on protocol versions before 2026-07-28, and summaries are asked for only there.

package mcpserver

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/shellgate/shellgate/envelope"
)

// summaryTimeout bounds the wait for the client's model: a summary is a
// convenience, and the output is there without it.
const summaryTimeout = 60 * time.Second

// summaryPrompt is the system prompt of a summary request.
const summaryPrompt = "You summarize the output of a shell command for a coding agent that ran it. " +
	"The output was cut: the agent sees its start and end and the error-like lines of the middle. " +
	"In plain text, say what the command did and whether it worked; name every error, failure and " +
	"warning with its file and line where given; copy exact messages. No advice, no preamble."

// canSample reports whether the client takes sampling requests in the middle of
// a call (protocol versions before 2026-07-28, which dropped them).
func canSample(ss *mcp.ServerSession) bool {
	if ss == nil || multiRoundTrip(ss) {
		return false
	}
	p := ss.InitializeParams()
	return p != nil && p.Capabilities != nil && p.Capabilities.Sampling != nil
}

// summarize asks the client's model for a summary of env's truncated output
// within tokens, and puts it in data.summary (first in the text). When the
// client cannot, declines or fails, a note says so and the output stands alone.
func summarize(ctx context.Context, ss *mcp.ServerSession, env *envelope.Envelope, tokens int) {
	d := &env.Data
	if !d.Truncated || d.Binary || d.Job != nil || env.Error != nil || !canSample(ss) {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Command: %s\n", envelope.CutMiddle(d.Command, 2<<10))
	switch {
	case d.ExitCode != nil:
		fmt.Fprintf(&b, "Exit code: %d\n", *d.ExitCode)
	case d.Signal != nil:
		fmt.Fprintf(&b, "Ended by %s\n", *d.Signal)
	}
	for _, part := range []struct {
		name, text string
		total      int64
	}{{"STDOUT", d.Stdout, env.Stats.StdoutBytes}, {"STDERR", d.Stderr, env.Stats.StderrBytes}, {"ERROR-LIKE LINES OF THE OMITTED MIDDLE", d.Digest, 0}} {
		if part.text != "" {
			fmt.Fprintf(&b, "\n--- %s", part.name)
			if part.total > 0 {
				fmt.Fprintf(&b, " (%d bytes in all; the middle is cut)", part.total)
			}
			fmt.Fprintf(&b, " ---\n%s\n", part.text)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, summaryTimeout)
	defer cancel()
	res, err := ss.CreateMessage(ctx, &mcp.CreateMessageParams{
		MaxTokens:    int64(tokens),
		SystemPrompt: summaryPrompt,
		Messages:     []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: b.String()}}},
	})
	text := ""
	if err == nil {
		if t, ok := res.Content.(*mcp.TextContent); ok {
			text = strings.TrimSpace(t.Text)
		}
	}
	if text == "" {
		why := "the client's model sent no text"
		if err != nil {
			why = "asking the client's model failed: " + err.Error()
		}
		env.Note("No summary: " + shorten(why))
		env.Settle()
		return
	}
	// The budget is the client's to keep; a runaway answer is still cut.
	d.Summary = envelope.CutMiddle(text, 16*tokens)
	env.Settle()
}

func shorten(s string) string {
	const max = 200
	if len(s) > max {
		return s[:max] + "…"
	}
	return s
}
