package mcpserver

import (
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/shellgate/shellgate/envelope"
)

// MaxMessage is the largest MCP message shellgate sends. Clients commonly cap a
// message (a line on stdio) at 1 MiB or thereabouts; a result beyond it would be
// lost entirely, so output is cut to fit instead.
const MaxMessage = 1 << 20

// resultOverhead is room left in a message for the JSON-RPC envelope and the tool
// result's own fields.
const resultOverhead = 4 << 10

// toolResult wraps env as a tools/call result. The text content is the envelope's
// text, complete on its own; with structured, structuredContent is the envelope's
// Brief, complete on its own too and without the text's output sections: a client
// that shows the model one channel loses nothing, and no channel says a thing
// twice. briefOutput > 0 bounds the output the Brief repeats (briefOf).
// isError is set when the status is "error".
// known is what the tool's description told the model already (the shell,
// the default timeout), which the Brief leaves out.
func toolResult(env envelope.Envelope, maxMessage int, structured bool, briefOutput int, known envelope.Known) (*mcp.CallToolResult, error) {
	brief, err := fit(&env, maxMessage, structured, briefOutput, known)
	if err != nil {
		// Still a tool result the model can read, never a protocol error.
		env = envelope.NotRun(env.Data.Command, nil, envelope.Err{Code: envelope.ExecutionError, Message: err.Error()})
		if brief, err = json.Marshal(briefOf(&env, known, briefOutput)); err != nil {
			return nil, err
		}
	}
	res := &mcp.CallToolResult{
		Content: []mcp.Content{&mcp.TextContent{Text: env.Text}},
		IsError: env.Status == envelope.Error,
	}
	if structured {
		res.StructuredContent = json.RawMessage(brief)
	}
	return res, nil
}

// fit cuts env's output until the result (the text, and the Brief when structured)
// fits in maxMessage bytes, and returns the Brief's JSON. The Gate already bounds
// output by its budget; this guards against a budget too large for one message,
// and against JSON escaping (a control byte becomes six) inflating what it allowed.
func fit(env *envelope.Envelope, maxMessage int, structured bool, briefOutput int, known envelope.Known) ([]byte, error) {
	budget := maxMessage - resultOverhead
	size := func(e *envelope.Envelope) (int, []byte, error) {
		var b []byte
		if structured {
			var err error
			if b, err = json.Marshal(briefOf(e, known, briefOutput)); err != nil {
				return 0, nil, fmt.Errorf("encoding the envelope: %w", err)
			}
		}
		// The text's JSON is at most 6 bytes a byte (\u00XX) and two quotes:
		// when even that fits, it need not be encoded to be measured.
		if len(b)+6*len(e.Text)+2 <= budget {
			return len(b) + len(e.Text), b, nil
		}
		text, err := json.Marshal(e.Text)
		return len(b) + len(text), b, err
	}
	n, b, err := size(env)
	if err != nil || n <= budget {
		return b, err
	}
	orig := *env
	// Each byte of output appears about twice or three times: in the text, in
	// stdout or stderr, and escaped; start from there and halve.
	keep := min(max(len(orig.Data.Stdout), len(orig.Data.Stderr)), budget/4)
	for {
		*env = orig
		env.Data.Stdout = envelope.CutMiddle(orig.Data.Stdout, keep)
		env.Data.Stderr = envelope.CutMiddle(orig.Data.Stderr, keep)
		env.Data.Truncated = true
		env.Note(fmt.Sprintf("Output cut further to fit one MCP message (%d bytes max).", maxMessage))
		env.Settle()
		if n, b, err = size(env); err != nil || n <= budget {
			return b, err
		}
		if keep == 0 {
			break
		}
		keep /= 2
	}
	// Output alone cannot explain the size: the command or another parameter
	// echoed is huge. (The Gate bounds each; this is the last guard.)
	*env = orig
	env.Data.Command = envelope.CutMiddle(orig.Data.Command, budget/8)
	if env.Context.ParamsInput != nil {
		p := envelope.CutParams(env.Context.ParamsInput, budget/64)
		if _, ok := p["command"]; ok {
			p["command"] = env.Data.Command
		}
		env.Context.ParamsInput = p
	}
	env.Settle()
	if n, b, err = size(env); err != nil || n > budget {
		return nil, fmt.Errorf("result of %d bytes does not fit in one %d-byte MCP message", n, maxMessage)
	}
	return b, nil
}

// briefOf is e's Brief for a reader who knows known, its output cut to about
// limit bytes (0: whole) for a client that may show its model both channels:
// the text has the output already. A stream no longer than half of limit is
// kept whole, so that a short stderr after a long stdout is all there; each
// cut keeps more of the end, where errors are, and the Brief's text says so.
// Nothing else changes: data.truncated, the status and stats say what the
// text says.
func briefOf(e *envelope.Envelope, known envelope.Known, limit int) envelope.Brief {
	b := e.BriefKnowing(known)
	so, se := len(b.Data.Stdout), len(b.Data.Stderr)
	if limit <= 0 || so+se <= limit {
		return b
	}
	switch {
	case se <= limit/2:
		so = limit - se
	case so <= limit/2:
		se = limit - so
	default:
		so, se = limit/2, limit-limit/2
	}
	b.Data.Stdout = cutTail(b.Data.Stdout, so)
	b.Data.Stderr = cutTail(b.Data.Stderr, se)
	note := fmt.Sprintf("Output cut here to %d of the %d bytes returned, more of its end than of its start; the result's text content has them all.", limit, len(e.Data.Stdout)+len(e.Data.Stderr))
	if b.Text == "" {
		b.Text = note
	} else {
		b.Text += "\n" + note
	}
	return b
}
