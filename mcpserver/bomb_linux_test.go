package mcpserver

import (
	"context"
	"strings"
	"testing"

	"github.com/shellgate/shellgate/internal/lane"
	"github.com/shellgate/shellgate/internal/sandbox"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/envelope"
)

// Over MCP, a call that reaches the sandbox session's process limit (a fork
// bomb) returns a result saying it was stopped there, and the server's
// session goes on: the job started before it still runs, and the next call
// runs in the same session.
func TestForkBombStoppedJobLivesOn(t *testing.T) {
	lane.Live(t)
	probe, err := sandbox.Start(sandbox.Spec{})
	if err != nil {
		t.Skipf("no sandbox here: %v", err)
	}
	procs := probe.Report().Layers[sandbox.LayerProcs]
	probe.Close()
	if procs != "cgroup" {
		t.Skipf("no cgroup process limit here: procs %q", procs)
	}
	srv, _ := newServer(t, shellgate.Config{Sandbox: shellgate.SandboxConfig{Limits: shellgate.SandboxLimits{Procs: 128}}}, Options{})
	cs := connect(t, srv, nil, nil)
	ctx := context.Background()
	env := call(t, ctx, cs, &mcp.CallToolParams{Arguments: map[string]any{"command": "exec sleep 6041.5", "run_in_background": true}})
	if env.Data.Job == nil {
		t.Fatalf("background: %s", env.Text)
	}
	id := env.Data.Job.ID
	env = call(t, ctx, cs, &mcp.CallToolParams{Arguments: map[string]any{"command": "while :; do sleep 6042.5 & done", "timeout_ms": 30000}})
	if env.Data.TimedOut || !strings.Contains(env.Text, "reached the sandbox session's limit of 128 processes") {
		t.Errorf("the bomb's result does not say it was stopped at the limit (timed out %v):\n%s", env.Data.TimedOut, env.Text)
	}
	env = call(t, ctx, cs, &mcp.CallToolParams{Name: JobOutputTool, Arguments: map[string]any{"job_id": id}})
	if env.Data.Job == nil || env.Data.Job.State != envelope.JobRunning {
		t.Errorf("the job started before the bomb did not outlive it:\n%s", env.Text)
	}
	env = call(t, ctx, cs, &mcp.CallToolParams{Arguments: map[string]any{"command": "echo after"}})
	if env.Status != envelope.Success || env.Data.Stdout != "after\n" || strings.Contains(env.Text, "session had ended") {
		t.Errorf("the call after the bomb: %s\n%s", env.Status, env.Text)
	}
}
