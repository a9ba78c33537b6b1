package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/envelope"
)

// The job tools work on the jobs of the caller's session: commands started
// with run_in_background or tty, or still running at yield_after_ms, or
// waiting for input.
const (
	JobOutputTool = "job_output"
	JobInputTool  = "job_input"
	JobKillTool   = "job_kill"
	JobListTool   = "job_list"
)

// jobOutputArgs, jobInputArgs and jobIDArgs are the job tools' arguments.
type jobOutputArgs struct {
	JobID string `json:"job_id"`
	shellgate.JobRead
}

type jobInputArgs struct {
	JobID string `json:"job_id"`
	shellgate.JobInput
}

type jobIDArgs struct {
	JobID string `json:"job_id"`
}

// jobOutputLimit is job_output's max_output_bytes description, for a default
// of n bytes (the client's own, clientInfo).
func jobOutputLimit(n int) string {
	return fmt.Sprintf("Bytes of text to return at most. Default %d.", n)
}

// addJobTools registers the job tools.
func (s *Server) addJobTools() {
	jobID := &jsonschema.Schema{Type: "string", Description: "The job's id: j1, j2, …"}
	integer := func(desc string) *jsonschema.Schema {
		zero := 0.0
		return &jsonschema.Schema{Type: "integer", Description: desc, Minimum: &zero}
	}
	str := func(desc string) *jsonschema.Schema { return &jsonschema.Schema{Type: "string", Description: desc} }
	object := func(order []string, props map[string]*jsonschema.Schema, required ...string) *jsonschema.Schema {
		return &jsonschema.Schema{Type: "object", Properties: props, PropertyOrder: order, Required: required,
			AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}}}
	}
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true}
	s.mcp.AddTool(&mcp.Tool{
		Name:  JobOutputTool,
		Title: "Job output",
		Description: "Read a job's output: what it printed since the last read (stdout and stderr apart), or the last lines, or only the lines matching a filter; " +
			"optionally wait first for new output, a line matching `until` (a server's ready line), or a `port` accepting connections in this session. " +
			"It says whether the job runs, waits for input or ended. A terminal job's stdout is its screen.",
		InputSchema: object([]string{"job_id", "wait_ms", "until", "port", "tail_lines", "filter", "max_output_bytes"}, map[string]*jsonschema.Schema{
			"job_id":           jobID,
			"wait_ms":          integer("Wait up to this long (ms) for new output, the end, or input being waited for — or for `until`/`port` when given. Default 0: return at once; 30000 with `until`/`port`."),
			"until":            str("A regular expression (RE2): wait, up to wait_ms, for a line of output matching it."),
			"port":             integer("A TCP port: wait, up to wait_ms, until something in this session listens on it."),
			"tail_lines":       integer("Return the last N lines of the whole output instead of what is new."),
			"filter":           str("A regular expression (RE2): return only the lines that match."),
			"max_output_bytes": integer(jobOutputLimit(s.info.OutputLimit)),
		}, "job_id"),
		Annotations: readOnly,
	}, s.jobCall(func(ctx context.Context, sess *shellgate.Session, raw json.RawMessage) envelope.Envelope {
		var a jobOutputArgs
		if env := decodeArgs(raw, &a, "job_id", "wait_ms", "until", "port", "tail_lines", "filter", "max_output_bytes"); env != nil {
			return *env
		}
		if p := profileOf(ctx); p.Output > 0 { // the client's output limits, as for a command
			info := s.clientInfo(p)
			if a.MaxOutputBytes == 0 || a.MaxOutputBytes > info.MaxOutputLimit {
				a.MaxOutputBytes = min(info.OutputLimit, info.MaxOutputLimit)
			}
		}
		return sess.Output(ctx, a.JobID, a.JobRead)
	}))
	s.mcp.AddTool(&mcp.Tool{
		Name:  JobInputTool,
		Title: "Job input",
		Description: "Type into a job: `text` is sent as is (on a terminal each \\n is Enter), then `keys` such as Enter, Tab, Escape, Up, Down, Ctrl-C, Ctrl-D. " +
			"Without a terminal, Ctrl-C interrupts the job and Ctrl-D closes its input. Returns what the job printed in answer (waits up to wait_ms, default 1000, for it to go quiet).",
		InputSchema: object([]string{"job_id", "text", "keys", "wait_ms"}, map[string]*jsonschema.Schema{
			"job_id":  jobID,
			"text":    str("Text to send, e.g. \"print(6*7)\\n\" or \"yes\\n\"."),
			"keys":    {Type: "array", Items: &jsonschema.Schema{Type: "string"}, Description: "Keys to send after the text: Enter, Tab, Escape, Backspace, Up, Down, Left, Right, Home, End, PageUp, PageDown, Ctrl-A … Ctrl-Z."},
			"wait_ms": integer("How long to wait for the answer. Default 1000."),
		}, "job_id"),
	}, s.jobCall(func(ctx context.Context, sess *shellgate.Session, raw json.RawMessage) envelope.Envelope {
		var a jobInputArgs
		if env := decodeArgs(raw, &a, "job_id", "text", "keys", "wait_ms"); env != nil {
			return *env
		}
		return sess.Input(ctx, a.JobID, a.JobInput)
	}))
	s.mcp.AddTool(&mcp.Tool{
		Name:        JobKillTool,
		Title:       "Kill job",
		Description: "Stop a job and everything it started (its whole process group), and return its last output.",
		InputSchema: object([]string{"job_id"}, map[string]*jsonschema.Schema{"job_id": jobID}, "job_id"),
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(true)},
	}, s.jobCall(func(ctx context.Context, sess *shellgate.Session, raw json.RawMessage) envelope.Envelope {
		var a jobIDArgs
		if env := decodeArgs(raw, &a, "job_id"); env != nil {
			return *env
		}
		return sess.Kill(ctx, a.JobID)
	}))
	s.mcp.AddTool(&mcp.Tool{
		Name:        JobListTool,
		Title:       "List jobs",
		Description: "List this session's jobs: id, state (running, waiting_for_input, exited, killed), exit status, runtime, output size and command.",
		InputSchema: object(nil, map[string]*jsonschema.Schema{}),
		Annotations: readOnly,
	}, s.jobCall(func(ctx context.Context, sess *shellgate.Session, raw json.RawMessage) envelope.Envelope {
		if env := decodeArgs(raw, &struct{}{}); env != nil {
			return *env
		}
		return sess.Jobs()
	}))
}

// jobCall adapts a job tool's handler: it runs in the caller's session, as a
// call of the server (Close waits for it), and answers with a tool result.
func (s *Server) jobCall(h func(context.Context, *shellgate.Session, json.RawMessage) envelope.Envelope) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		key := sessionKey(req.Session)
		ctx, done, ok := s.begin(ctx, key)
		if !ok {
			return s.result(req.Session, jobRefusal(nil, envelope.Err{Code: envelope.Cancelled, Message: "The server is shutting down."}))
		}
		defer done()
		sess := s.session(key)
		if sess == nil {
			return s.result(req.Session, jobRefusal(nil, envelope.Err{Code: envelope.Cancelled, Message: "The session has ended."}))
		}
		ctx = context.WithValue(ctx, profileKey{}, s.profile(req.Session))
		return s.result(req.Session, h(ctx, sess, req.Params.Arguments))
	}
}

// decodeArgs decodes a job tool's arguments into dst, refusing unknown names
// and wrong types with a message the model can act on.
func decodeArgs(raw json.RawMessage, dst any, names ...string) *envelope.Envelope {
	params, bad := argsError(raw, dst, names...)
	if bad == nil {
		return nil
	}
	env := jobRefusal(params, *bad)
	return &env
}

// jobRefusal is a job tool's refusal, headed by what was not done ("Nothing
// done to job j3"): a job tool runs no command, so "Command not run" would
// read as if one had been asked for. params is the input as given.
func jobRefusal(params map[string]any, err envelope.Err) envelope.Envelope {
	head := "Nothing done"
	if id, ok := params["job_id"]; ok {
		head = envelope.NothingDoneTo(id)
	}
	return envelope.NotAnswered(head, params, err)
}

// argsError decodes a tool's arguments into dst as decodeArgs does, and
// returns what was wrong with them (nil: nothing), with the arguments as
// given, cut, for the refusal's params_input: a tool whose refusal is no
// command's (undo) heads it its own way.
func argsError(raw json.RawMessage, dst any, names ...string) (map[string]any, *envelope.Err) {
	fail := func(format string, args ...any) (map[string]any, *envelope.Err) {
		input := map[string]any{}
		json.Unmarshal(raw, &input)
		return envelope.CutParams(input, envelope.EchoLimit), &envelope.Err{Code: envelope.InvalidParam, Message: fmt.Sprintf(format, args...)}
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		raw = []byte("{}")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return fail("Arguments must be a JSON object, not %s.", kind(raw))
	}
	for k := range fields {
		if !slices.Contains(names, k) && !slices.Contains(clientParams, k) {
			if len(names) == 0 {
				return fail("Unknown parameter '%s'; this tool takes none.", envelope.CutMiddle(k, 64))
			}
			return fail("Unknown parameter '%s'; the parameters are %s.", envelope.CutMiddle(k, 64), strings.Join(names, ", "))
		}
	}
	if msg := checkClientParams(fields); msg != "" {
		return fail("%s", msg)
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			field := te.Field[strings.LastIndexByte(te.Field, '.')+1:]
			return fail("Parameter '%s' must be %s, not %s.", field, jsonType(te.Type.Kind().String()), envelope.CutMiddle(te.Value, 64))
		}
		return fail("Invalid arguments: %v.", err)
	}
	if slices.Contains(names, "job_id") {
		if id, _ := fields["job_id"]; len(id) == 0 || bytes.Equal(id, []byte(`""`)) {
			return fail("Missing required parameter 'job_id' (j1, j2, …: the call that started the job gave it; job_list lists them).")
		}
	}
	return nil, nil
}

func jsonType(goKind string) string {
	switch {
	case strings.HasPrefix(goKind, "int"), strings.HasPrefix(goKind, "uint"):
		return "an integer"
	case goKind == "string":
		return "a string"
	case goKind == "slice":
		return "an array"
	case goKind == "bool":
		return "true or false"
	}
	return goKind
}
