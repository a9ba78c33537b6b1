package mcpserver

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/shellgate/shellgate/envelope"
)

// MaxMessage is the largest MCP message shellgate sends. Clients commonly cap a
// message (a line on stdio) at 1 MiB or thereabouts; a result beyond it would be
// lost entirely, so output is cut to fit instead.
const MaxMessage = 1 << 20

// resultOverhead is room left in a message for the JSON-RPC envelope, the tool
// result's own fields and the duplicate of the text in "content".
const resultOverhead = 4 << 10

// toolResult wraps env as a tools/call result: structuredContent is the envelope,
// the text content is its text, and isError is set when its status is "error".
func toolResult(env envelope.Envelope, maxMessage int) (*mcp.CallToolResult, error) {
	if env.Context.ParamsInput == nil {
		env.Context.ParamsInput = map[string]any{}
	}
	structured, err := fit(&env, maxMessage)
	if err != nil {
		// Still a tool result the model can read, never a protocol error.
		short := envelope.Envelope{Data: envelope.Data{Command: cutMiddle(env.Data.Command, 1024)}, Context: envelope.Context{ParamsInput: map[string]any{}}}
		env = *short.Fail(envelope.ExecutionError, err.Error())
		if structured, err = json.Marshal(env); err != nil {
			return nil, err
		}
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: env.Text}},
		StructuredContent: json.RawMessage(structured),
		IsError:           env.Status == envelope.Error,
	}, nil
}

// fit cuts env's output until the whole result (the envelope, plus its text a second
// time as the text content) fits in maxMessage bytes, and returns the envelope's
// JSON. The Gate already bounds output by its per-stream limit; this guards against
// a configured limit too large for one message, and against JSON escaping (a control
// byte becomes six) inflating what the limit allowed.
func fit(env *envelope.Envelope, maxMessage int) ([]byte, error) {
	budget := maxMessage - resultOverhead
	size := func() (int, []byte, error) {
		b, err := json.Marshal(env)
		if err != nil {
			return 0, nil, fmt.Errorf("encoding the envelope: %w", err)
		}
		text, _ := json.Marshal(env.Text)
		return len(b) + len(text), b, nil
	}
	n, b, err := size()
	if err != nil || n <= budget {
		return b, err
	}
	d := &env.Data
	stdout, stderr := d.Stdout, d.Stderr
	notes := appendedNotes(env)
	// Each byte of output appears about four times: in stdout or stderr, in the
	// envelope's text, and in the text content; start from there and halve.
	keep := min(max(len(stdout), len(stderr)), budget/4)
	for {
		d.Stdout = cutMiddle(stdout, keep)
		d.Stderr = cutMiddle(stderr, keep)
		d.Truncated = true
		env.Settle()
		env.Text += notes + fmt.Sprintf("\n[Output cut further to fit one MCP message (%d bytes max).]", maxMessage)
		if n, b, err = size(); err != nil || n <= budget {
			return b, err
		}
		if keep == 0 {
			break
		}
		keep /= 2
	}
	// Output alone cannot explain the size: the command itself is huge.
	cutCommand(env, budget/8)
	env.Settle()
	env.Text += notes
	if n, b, err = size(); err != nil || n > budget {
		return nil, fmt.Errorf("result of %d bytes does not fit in one %d-byte MCP message", n, maxMessage)
	}
	return b, nil
}

// appendedNotes is what the Gate added to env's text after settling it (where the
// full output went, for instance), to be kept when the text is written again.
func appendedNotes(env *envelope.Envelope) string {
	c := *env
	c.Settle()
	notes, ok := strings.CutPrefix(env.Text, c.Text)
	if !ok {
		return ""
	}
	return notes
}

// cutMiddle keeps about n bytes of s, half from the head and half from the tail, on
// UTF-8 boundaries, with a marker saying how much was cut.
func cutMiddle(s string, n int) string {
	if len(s) <= n {
		return s
	}
	head, tail := n/2, len(s)-n/2
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	for tail < len(s) && !utf8.RuneStart(s[tail]) {
		tail++
	}
	return fmt.Sprintf("%s\n[… %d bytes cut …]\n%s", s[:head], tail-head, s[tail:])
}

// cutCommand shortens a command too large to echo back in full.
func cutCommand(env *envelope.Envelope, n int) {
	short := cutMiddle(env.Data.Command, n)
	env.Data.Command = short
	if env.Context.ParamsInput != nil {
		if _, ok := env.Context.ParamsInput["command"]; ok {
			p := make(map[string]any, len(env.Context.ParamsInput))
			for k, v := range env.Context.ParamsInput {
				p[k] = v
			}
			p["command"] = short
			env.Context.ParamsInput = p
		}
	}
}
