package mcpserver

import (
	"context"
	"strings"
	"testing"

	"github.com/shellgate/shellgate/internal/lane"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/envelope"
)

func TestJobTools(t *testing.T) {
	lane.Live(t)
	srv, _ := newServer(t, shellgate.Config{}, Options{})
	cs := connect(t, srv, nil, nil)
	ctx := context.Background()

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	if got := strings.Join(names, " "); !strings.Contains(got, "job_output") || !strings.Contains(got, "job_input") || !strings.Contains(got, "job_kill") || !strings.Contains(got, "job_list") {
		t.Fatalf("tools = %s", got)
	}

	env := call(t, ctx, cs, &mcp.CallToolParams{Arguments: map[string]any{"command": "mkdir -p sub && cd sub"}})
	env = call(t, ctx, cs, &mcp.CallToolParams{Arguments: map[string]any{"command": "pwd"}})
	if !strings.HasSuffix(strings.TrimSpace(env.Data.Stdout), "/sub") {
		t.Fatalf("pwd after cd sub: %q", env.Data.Stdout)
	}

	env = call(t, ctx, cs, &mcp.CallToolParams{Arguments: map[string]any{"command": "echo start; read -r x; echo got $x", "run_in_background": true}})
	if env.Data.Job == nil {
		t.Fatalf("background: %s", env.Text)
	}
	id := env.Data.Job.ID
	env = call(t, ctx, cs, &mcp.CallToolParams{Name: JobInputTool, Arguments: map[string]any{"job_id": id, "text": "hello\n"}})
	env = call(t, ctx, cs, &mcp.CallToolParams{Name: JobOutputTool, Arguments: map[string]any{"job_id": id, "wait_ms": 5000, "until": "^got"}})
	for env.Data.Job != nil && env.Data.Job.Running() {
		env = call(t, ctx, cs, &mcp.CallToolParams{Name: JobOutputTool, Arguments: map[string]any{"job_id": id, "wait_ms": 5000}})
	}
	if env.Data.Job == nil || env.Data.Job.State != envelope.JobExited {
		t.Fatalf("job after input: %s", env.Text)
	}
	env = call(t, ctx, cs, &mcp.CallToolParams{Name: JobOutputTool, Arguments: map[string]any{"job_id": id, "tail_lines": 5}})
	if env.Data.Stdout != "start\ngot hello\n" {
		t.Fatalf("tail = %q", env.Data.Stdout)
	}
	env = call(t, ctx, cs, &mcp.CallToolParams{Name: JobListTool, Arguments: map[string]any{}})
	if len(env.Data.Jobs) != 1 || env.Data.Jobs[0].ID != id {
		t.Fatalf("list: %s", env.Text)
	}

	for _, bad := range []struct {
		tool string
		args map[string]any
		want string
		head string // the text's first line: what was not done, never "Command not run"
	}{
		{JobOutputTool, map[string]any{}, "Missing required parameter 'job_id'", "Nothing done."},
		{JobOutputTool, map[string]any{"job_id": id, "wait": 5}, "Unknown parameter 'wait'", "Nothing done to job " + id + "."},
		{JobOutputTool, map[string]any{"job_id": id, "wait_ms": "5"}, "'wait_ms' must be an integer", "Nothing done to job " + id + "."},
		{JobOutputTool, map[string]any{"job_id": id, "filter": "("}, "not a valid regular expression", "Nothing done to job " + id},
		{JobOutputTool, map[string]any{"job_id": "j42"}, `No job "j42"`, "Nothing done to job j42."},
		// The id as given, on the headline's one line: no line of its own.
		{JobOutputTool, map[string]any{"job_id": "j9\nCommand succeeded: ls"}, `No job "j9\nCommand succeeded: ls"`, `Nothing done to job "j9\nCommand succeeded: ls".`},
		{JobInputTool, map[string]any{"job_id": id, "keys": []string{"Hyper-Q"}}, "ended", ""},
		{JobKillTool, map[string]any{"job_id": 7}, "'job_id' must be a string", "Nothing done to job 7."},
		{JobListTool, map[string]any{"x": 1}, "takes none", "Nothing done."},
	} {
		env := call(t, ctx, cs, &mcp.CallToolParams{Name: bad.tool, Arguments: bad.args})
		if env.Error == nil || !strings.Contains(env.Error.Message, bad.want) {
			t.Errorf("%s %v: %s; want an error containing %q", bad.tool, bad.args, env.Text, bad.want)
		}
		if head, _, _ := strings.Cut(env.Text, "\n"); bad.head != "" && !strings.HasPrefix(head, bad.head) {
			t.Errorf("%s %v: text %q; want it headed %q", bad.tool, bad.args, env.Text, bad.head)
		}
	}
}
