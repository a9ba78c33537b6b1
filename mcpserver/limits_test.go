package mcpserver

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/shellgate/shellgate/internal/lane"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/envelope"
)

// Oversized inputs are refused before anything acts on them, with INVALID_PARAM
// naming the parameter: a 1 MiB description used to let the command run and then
// report EXECUTION_ERROR, because the result echoing it passed 1 MiB; 3 MB of
// job_input was typed into the job before the same failure.
func TestOversizedInputsRefusedUpFront(t *testing.T) {
	lane.Live(t)
	srv, root := newServer(t, shellgate.Config{}, Options{})
	var maxWrite atomic.Int64
	cs := connect(t, srv, nil, &maxWrite)
	ctx := context.Background()
	mark := filepath.Join(root, "ran")
	big := func(n int) string { return strings.Repeat("\x01d", n/2) } // escaped six bytes a byte, half of it
	for _, tc := range []struct {
		name, param string
		args        map[string]any
	}{
		{"1 MiB description", "description", args("command", "echo x > ran", "description", big(1<<20))},
		{"100 KiB description", "description", args("command", "echo x > ran", "description", big(100<<10))},
		{"1 MiB directory", "directory", args("command", "echo x > ran", "directory", big(1<<20))},
		{"1 MiB unknown parameter", "junk", args("command", "echo x > ran", "junk", big(1<<20))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := call(t, ctx, cs, &mcp.CallToolParams{Arguments: tc.args})
			if env.Error == nil || env.Error.Code != envelope.InvalidParam || !strings.Contains(env.Error.Message, "'"+tc.param+"'") {
				t.Errorf("%s: %s; want INVALID_PARAM naming '%s'", tc.name, cut(env.Text), tc.param)
			}
			if _, err := os.Stat(mark); err == nil {
				t.Fatalf("%s: the command ran", tc.name)
			}
		})
	}

	env := call(t, ctx, cs, &mcp.CallToolParams{Arguments: args("command", "cat", "run_in_background", true)})
	if env.Data.Job == nil {
		t.Fatalf("no job: %s", env.Text)
	}
	id := env.Data.Job.ID
	for _, tc := range []struct {
		name, tool, param string
		args              map[string]any
	}{
		{"3 MB job_input text", JobInputTool, "text", map[string]any{"job_id": id, "text": big(3 << 20)}},
		{"100 KiB job_input text", JobInputTool, "text", map[string]any{"job_id": id, "text": big(100 << 10)}},
		{"100 000 keys", JobInputTool, "keys", map[string]any{"job_id": id, "keys": repeat("Enter", 100000)}},
		{"1 MiB filter", JobOutputTool, "filter", map[string]any{"job_id": id, "filter": strings.Repeat("a", 1<<20)}},
		{"1 MiB until", JobOutputTool, "until", map[string]any{"job_id": id, "until": strings.Repeat("a", 1<<20)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := call(t, ctx, cs, &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args})
			if env.Error == nil || env.Error.Code != envelope.InvalidParam || !strings.Contains(env.Error.Message, "'"+tc.param+"'") {
				t.Errorf("%s: %s; want INVALID_PARAM naming '%s'", tc.name, cut(env.Text), tc.param)
			}
		})
	}
	env = call(t, ctx, cs, &mcp.CallToolParams{Name: JobOutputTool, Arguments: map[string]any{"job_id": id}})
	if env.Data.Stdout != "" {
		t.Errorf("the job got input: it printed %d bytes", len(env.Data.Stdout))
	}
	if n := maxWrite.Load(); n > MaxMessage {
		t.Errorf("largest message %d bytes, over %d", n, MaxMessage)
	}

	// Within the limits, the call runs and its echo fits.
	desc := big(shellgate.MaxDescription)
	env = call(t, ctx, cs, &mcp.CallToolParams{Arguments: args("command", "echo ok", "description", desc)})
	if env.Status != envelope.Success || env.Context.ParamsInput["description"] != desc {
		t.Errorf("a %d-byte description: %s", len(desc), cut(env.Text))
	}
}

func cut(s string) string { return envelope.CutMiddle(s, 600) }

func repeat(s string, n int) []string {
	r := make([]string, n)
	for i := range r {
		r[i] = s
	}
	return r
}
