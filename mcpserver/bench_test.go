package mcpserver

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/envelope"
)

// BenchmarkCallEchoHi is one in-process tools/call of `echo hi`: the SDK's JSON-RPC
// over an in-memory pipe, this package, and the Gate running bash.
func BenchmarkCallEchoHi(b *testing.B) {
	gate, err := shellgate.New(shellgate.Config{Root: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer gate.Close()
	srv, err := New(gate, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	ct, st := mcp.NewInMemoryTransports()
	go srv.Serve(context.Background(), st)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	params := &mcp.CallToolParams{Name: DefaultToolName, Arguments: map[string]any{"command": "echo hi"}}
	for b.Loop() {
		if res, err := cs.CallTool(context.Background(), params); err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}

// BenchmarkOwnOverhead is what this package adds to a call: parsing the arguments
// and building the result (with its size check).
func BenchmarkOwnOverhead(b *testing.B) {
	raw := []byte(`{"command":"echo hi","directory":".","timeout_ms":5000,"description":"greet"}`)
	zero := 0
	env := envelope.Envelope{Data: envelope.Data{Command: "echo hi", Stdout: "hi\n", ExitCode: &zero},
		Stats: envelope.Stats{StdoutBytes: 3}, Context: envelope.Context{ParamsInput: map[string]any{"command": "echo hi"}}}
	env.Settle()
	b.ReportAllocs()
	for b.Loop() {
		if _, bad := parseArguments(raw, 600000, 1<<20); bad != nil {
			b.Fatal(bad.Text)
		}
		if _, err := toolResult(env, MaxMessage, true); err != nil {
			b.Fatal(err)
		}
	}
}
