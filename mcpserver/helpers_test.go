package mcpserver

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/envelope"
)

// newServer returns a Server over a Gate rooted in a fresh directory, with
// "touch *" needing approval so that elicitation can be tested. The Gate and the
// Server are closed when the test ends.
func newServer(t *testing.T, cfg shellgate.Config, opts Options) (*Server, string) {
	t.Helper()
	if cfg.Root == "" {
		cfg.Root = t.TempDir()
	}
	if cfg.SpillDir == "" {
		cfg.SpillDir = t.TempDir()
	}
	cfg.Policy.Ask = append(cfg.Policy.Ask, "touch *")
	gate, err := shellgate.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(gate, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		srv.Close()
		gate.Close()
	})
	return srv, gate.Info().Root
}

// connect serves srv over in-memory transports and returns a connected client.
// maxWrite, when not nil, records the largest message the server wrote.
func connect(t *testing.T, srv *Server, copts *mcp.ClientOptions, maxWrite *atomic.Int64) *mcp.ClientSession {
	t.Helper()
	return connectAs(t, srv, "test-client", copts, maxWrite)
}

// connectAs is connect for a client that gives name as its clientInfo.name.
func connectAs(t *testing.T, srv *Server, name string, copts *mcp.ClientOptions, maxWrite *atomic.Int64) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	var server mcp.Transport = st
	if maxWrite != nil {
		server = &measuring{Transport: st, max: maxWrite}
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, server) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, copts).Connect(context.Background(), ct, nil)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		cancel()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return cs
}

// call runs one tool call and decodes the envelope from structuredContent,
// checking that the result is shaped as promised.
func call(t *testing.T, ctx context.Context, cs *mcp.ClientSession, params *mcp.CallToolParams) envelope.Envelope {
	t.Helper()
	if params.Name == "" {
		params.Name = DefaultToolName
	}
	res, err := cs.CallTool(ctx, params)
	if err != nil {
		t.Fatalf("CallTool(%v): protocol error %v; want a tool result", params.Arguments, err)
	}
	return decode(t, res)
}

// decode reads the envelope's Brief from structuredContent into an Envelope whose
// Text is the text content, checking that the two channels are shaped as promised.
func decode(t *testing.T, res *mcp.CallToolResult) envelope.Envelope {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var env envelope.Envelope
	if err := json.Unmarshal(b, &env); err != nil {
		t.Fatalf("structuredContent is not an envelope: %v\n%s", err, b)
	}
	if len(res.Content) != 1 {
		t.Fatalf("content has %d parts, want 1 text part", len(res.Content))
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content[0] = %#v, want text", res.Content[0])
	}
	if strings.Contains(env.Text, "--- STDOUT") || strings.Contains(env.Text, "--- STDERR") ||
		!strings.HasPrefix(text.Text, strings.SplitN(env.Text, ".", 2)[0]) {
		t.Errorf("structured text %q beside the text content %q", env.Text, text.Text)
	}
	env.Text = text.Text
	if res.IsError != (env.Status == envelope.Error) {
		t.Errorf("isError = %v with status %q", res.IsError, env.Status)
	}
	return env
}

func args(kv ...any) map[string]any {
	m := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

// measuring records the size of the largest message written by the server.
type measuring struct {
	mcp.Transport
	max *atomic.Int64
}

func (m *measuring) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := m.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &measuringConn{Connection: c, max: m.max}, nil
}

type measuringConn struct {
	mcp.Connection
	max *atomic.Int64
}

func (c *measuringConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	b, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	for n := int64(len(b)); ; {
		old := c.max.Load()
		if n <= old || c.max.CompareAndSwap(old, n) {
			break
		}
	}
	return c.Connection.Write(ctx, msg)
}
