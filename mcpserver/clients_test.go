package mcpserver

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shellgate/shellgate/internal/lane"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/envelope"
)

// Gemini CLI adds wait_for_previous to every MCP tool's schema and tells its model
// to set it: each tool accepts it (and ignores it), and still refuses a name it
// does not know.
func TestGeminiWaitForPrevious(t *testing.T) {
	lane.Live(t)
	srv, _ := newServer(t, shellgate.Config{}, Options{})
	cs := connect(t, srv, nil, nil)
	ctx := context.Background()
	for _, wait := range []any{true, false, nil} {
		env := call(t, ctx, cs, &mcp.CallToolParams{Arguments: args("command", "echo hi", "wait_for_previous", wait)})
		if env.Status != envelope.Success || env.Data.Stdout != "hi\n" {
			t.Fatalf("wait_for_previous %v: %s", wait, env.Text)
		}
	}
	env := call(t, ctx, cs, &mcp.CallToolParams{Arguments: args("command", "sleep 30", "run_in_background", true, "wait_for_previous", true)})
	if env.Data.Job == nil {
		t.Fatalf("no job: %s", env.Text)
	}
	id := env.Data.Job.ID
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{JobOutputTool, map[string]any{"job_id": id, "wait_for_previous": true}},
		{JobInputTool, map[string]any{"job_id": id, "text": "x\n", "wait_ms": 1, "wait_for_previous": false}},
		{JobListTool, map[string]any{"wait_for_previous": true}},
		{JobKillTool, map[string]any{"job_id": id, "wait_for_previous": true}},
	} {
		env := call(t, ctx, cs, &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args})
		if env.Error != nil {
			t.Errorf("%s %v: %s", tc.tool, tc.args, env.Text)
		}
	}
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{DefaultToolName, args("command", "true", "wait_for_prev", true), "Unknown parameter 'wait_for_prev'"},
		{DefaultToolName, args("command", "true", "wait_for_previous", "yes"), "'wait_for_previous' must be true or false"},
		{JobListTool, map[string]any{"wait_for_previous": true, "x": 1}, "Unknown parameter 'x'"},
		{JobOutputTool, map[string]any{"job_id": id, "wait_for_previous": 1}, "'wait_for_previous' must be true or false"},
	} {
		env := call(t, ctx, cs, &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args})
		if env.Error == nil || env.Error.Code != envelope.InvalidParam || !strings.Contains(env.Error.Message, tc.want) {
			t.Errorf("%s %v: %s; want INVALID_PARAM containing %q", tc.tool, tc.args, env.Text, tc.want)
		}
	}
	// Not advertised: it is Gemini's parameter, which Gemini adds itself.
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		if b, _ := tool.InputSchema.(map[string]any); b != nil {
			if p, _ := b["properties"].(map[string]any); p["wait_for_previous"] != nil {
				t.Errorf("tool %s advertises wait_for_previous", tool.Name)
			}
		}
	}
}

// Seed 001 §3.2: context.cwd is required and directory_resolved is given; the
// brief envelope (structuredContent) carries both, for a command that ran, one
// that was refused, and a job tool's answer.
func TestBriefContextSeed001(t *testing.T) {
	lane.Live(t)
	srv, root := newServer(t, shellgate.Config{}, Options{})
	if err := os.Mkdir(filepath.Join(root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, srv, nil, nil)
	ctx := context.Background()
	for _, tc := range []struct {
		params        *mcp.CallToolParams
		cwd, resolved string
	}{
		{&mcp.CallToolParams{Name: DefaultToolName, Arguments: args("command", "echo hi", "directory", "sub")}, "sub", "sub"},
		{&mcp.CallToolParams{Name: DefaultToolName, Arguments: args("command", "cd sub")}, ".", "."},
		{&mcp.CallToolParams{Name: DefaultToolName, Arguments: args("command", "pwd")}, "sub", "sub"},
		{&mcp.CallToolParams{Name: DefaultToolName, Arguments: args("command", "sudo id")}, "sub", "sub"},
		{&mcp.CallToolParams{Name: DefaultToolName, Arguments: args("command", "true", "timeout_ms", 0)}, "sub", ""},
		{&mcp.CallToolParams{Name: JobListTool, Arguments: map[string]any{}}, "sub", ""},
	} {
		res, err := cs.CallTool(ctx, tc.params)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(res.StructuredContent)
		var brief struct {
			Context map[string]any `json:"context"`
		}
		if err := json.Unmarshal(b, &brief); err != nil {
			t.Fatal(err)
		}
		if got, ok := brief.Context["cwd"]; !ok || got != tc.cwd {
			t.Errorf("%s %v: context.cwd = %v (present %v), want %q\n%s", tc.params.Name, tc.params.Arguments, got, ok, tc.cwd, b)
		}
		if tc.resolved != "" && brief.Context["directory_resolved"] != tc.resolved {
			t.Errorf("%s %v: context.directory_resolved = %v, want %q\n%s", tc.params.Name, tc.params.Arguments, brief.Context["directory_resolved"], tc.resolved, b)
		}
	}
}
