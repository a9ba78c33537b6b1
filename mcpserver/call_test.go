package mcpserver

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shellgate/shellgate/internal/lane"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/envelope"
)

func TestEchoHi(t *testing.T) {
	lane.Live(t)
	srv, _ := newServer(t, shellgate.Config{}, Options{})
	cs := connect(t, srv, nil, nil)
	env := call(t, context.Background(), cs, &mcp.CallToolParams{Arguments: args("command", "echo hi", "description", "greet")})
	if env.Status != envelope.Success || env.Data.Stdout != "hi\n" || env.Data.ExitCode == nil || *env.Data.ExitCode != 0 {
		t.Fatalf("got status %q stdout %q exit %v; want success, \"hi\\n\", 0\n%s", env.Status, env.Data.Stdout, env.Data.ExitCode, env.Text)
	}
	if !strings.HasPrefix(env.Text, "Command succeeded: echo hi") {
		t.Errorf("text %q", env.Text)
	}
	if env.Context.ParamsInput["description"] != "greet" {
		t.Errorf("params_input %v lacks the description", env.Context.ParamsInput)
	}
}

func TestResults(t *testing.T) {
	lane.Live(t)
	tests := []struct {
		name       string
		args       map[string]any
		wantStatus envelope.Status
		wantCode   envelope.Code
		wantText   string
	}{
		{"exit 3", args("command", "echo out; echo err >&2; exit 3"), envelope.Partial, "", "Exit code 3"},
		{"timeout", args("command", "sleep 5", "timeout_ms", 200), envelope.Error, envelope.Timeout, "Timed out after 200ms"},
		{"timeout after output", args("command", "echo started; sleep 5", "timeout_ms", 300), envelope.Partial, "", "started"},
		{"missing directory", args("command", "pwd", "directory", "nope"), envelope.Error, envelope.NotFound, "nope"},
		{"directory outside the root", args("command", "pwd", "directory", "../.."), envelope.Error, envelope.AccessDenied, ""},
		{"policy deny", args("command", "sudo true"), envelope.Error, envelope.PolicyDenied, "privilege"},
		{"no command", args(), envelope.Error, envelope.InvalidParam, "Missing required parameter 'command'"},
		{"empty command", args("command", ""), envelope.Error, envelope.InvalidParam, "Parameter 'command' is empty or only whitespace"},
		{"null command", args("command", nil), envelope.Error, envelope.InvalidParam, "Missing required parameter 'command'"},
		{"blank command", args("command", "  "), envelope.Error, envelope.InvalidParam, "Parameter 'command' is empty or only whitespace"},
		{"command not a string", args("command", 5), envelope.Error, envelope.InvalidParam, "must be a string, not a number"},
		{"timeout 0", args("command", "true", "timeout_ms", 0), envelope.Error, envelope.InvalidParam, "timeout_ms must be an integer between 1 and 600000"},
		{"timeout too long", args("command", "true", "timeout_ms", 9999999), envelope.Error, envelope.InvalidParam, "timeout_ms must be an integer between 1 and 600000"},
		{"timeout fraction", args("command", "true", "timeout_ms", 1.5), envelope.Error, envelope.InvalidParam, "timeout_ms must be an integer"},
		{"timeout string", args("command", "true", "timeout_ms", "100"), envelope.Error, envelope.InvalidParam, "timeout_ms must be an integer"},
		{"unknown parameter", args("command", "true", "timeout", 100), envelope.Error, envelope.InvalidParam, "Unknown parameter 'timeout'"},
		{"integral float timeout", args("command", "echo ok", "timeout_ms", 5000.0), envelope.Success, "", "ok"},
	}
	srv, _ := newServer(t, shellgate.Config{}, Options{})
	cs := connect(t, srv, nil, nil)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := call(t, context.Background(), cs, &mcp.CallToolParams{Arguments: tc.args})
			if env.Status != tc.wantStatus {
				t.Errorf("status %q, want %q\n%s", env.Status, tc.wantStatus, env.Text)
			}
			if tc.wantCode != "" && (env.Error == nil || env.Error.Code != tc.wantCode) {
				t.Errorf("error %+v, want code %s", env.Error, tc.wantCode)
			}
			if !strings.Contains(env.Text, tc.wantText) {
				t.Errorf("text lacks %q:\n%s", tc.wantText, env.Text)
			}
			if c, ok := tc.args["command"].(string); ok && env.Data.Command != c {
				t.Errorf("data.command %q, want %q", env.Data.Command, c)
			}
		})
	}
}

// Arguments that are not an object say what they are, in the model's words,
// not the decoder's Go types.
func TestArgumentsNotAnObject(t *testing.T) {
	srv, _ := newServer(t, shellgate.Config{}, Options{})
	cs := connect(t, srv, nil, nil)
	for _, tc := range []struct {
		tool string
		args any
		want string
	}{
		{"", "ls", "Arguments must be a JSON object with a 'command' string, not a string."},
		{"", []any{"ls"}, "Arguments must be a JSON object with a 'command' string, not an array."},
		{JobKillTool, "j1", "Arguments must be a JSON object, not a string."},
	} {
		env := call(t, context.Background(), cs, &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args})
		if env.Error == nil || env.Error.Code != envelope.InvalidParam || env.Error.Message != tc.want {
			t.Errorf("%s %v: %+v, want %q", tc.tool, tc.args, env.Error, tc.want)
		}
	}
}

// A slow call must not hold up a fast one: calls run concurrently.
func TestConcurrentCalls(t *testing.T) {
	lane.Live(t)
	srv, _ := newServer(t, shellgate.Config{}, Options{ProgressInterval: time.Millisecond})
	started := make(chan struct{})
	var once sync.Once
	cs := connect(t, srv, &mcp.ClientOptions{ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {
		once.Do(func() { close(started) })
	}}, nil)
	var slowDone atomic.Bool
	slow := make(chan envelope.Envelope, 1)
	go func() {
		params := &mcp.CallToolParams{Arguments: args("command", "echo started; sleep 3; echo slow")}
		params.SetProgressToken("slow")
		slow <- call(t, context.Background(), cs, params)
		slowDone.Store(true)
	}()
	<-started // the slow command is running: its first output arrived
	for i := range 3 {
		env := call(t, context.Background(), cs, &mcp.CallToolParams{Arguments: args("command", "echo fast")})
		if env.Data.Stdout != "fast\n" {
			t.Fatalf("fast call %d: %s", i, env.Text)
		}
		if slowDone.Load() {
			t.Fatalf("fast call %d returned after the slow one: calls are serialized", i)
		}
	}
	if env := <-slow; env.Data.Stdout != "started\nslow\n" {
		t.Errorf("slow call: %s", env.Text)
	}
}

// 50 MB of output must never produce an MCP message over 1 MiB, neither with the
// default output limit nor with a limit far too large for one message.
func TestHugeOutput(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 50 MB")
	}
	tests := []struct {
		name  string
		limit int
	}{
		{"default limit", 0},
		{"20 MB limit", 20 << 20},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := newServer(t, shellgate.Config{OutputLimit: tc.limit}, Options{})
			var maxWrite atomic.Int64
			var progress atomic.Int64
			cs := connect(t, srv, &mcp.ClientOptions{
				ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) { progress.Add(1) },
			}, &maxWrite)
			params := &mcp.CallToolParams{Arguments: args("command", `yes "0123456789 abcdefghijklmnopqrstuvwxyz" | head -c 50000000; printf '\033[31m%.0s' $(seq 1 20000) >&2`)}
			params.SetProgressToken("huge")
			env := call(t, context.Background(), cs, params)
			if env.Stats.StdoutBytes != 50000000 {
				t.Fatalf("stdout_bytes %d, want 50000000\n%s", env.Stats.StdoutBytes, env.Text)
			}
			if !env.Data.Truncated {
				t.Error("50 MB of output not marked truncated")
			}
			if n := maxWrite.Load(); n > MaxMessage {
				t.Errorf("largest message %d bytes, over %d", n, MaxMessage)
			} else if n == 0 {
				t.Error("no message measured")
			}
			t.Logf("largest message: %d bytes; %d progress notifications", maxWrite.Load(), progress.Load())
		})
	}
}
