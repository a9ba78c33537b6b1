package mcpserver

import (
	"context"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/shellgate/shellgate"
)

// With Summarize, cut output is summarized by the client's model (over HTTP, where
// sampling during a call is allowed), first in the text; without it, or for output
// that was not cut, the client is never asked.
func TestSummarize(t *testing.T) {
	for _, on := range []bool{true, false} {
		srv, _ := newServer(t, shellgate.Config{OutputLimit: 2000}, Options{Summarize: on, SummaryTokens: 100})
		h, err := srv.Handler(HTTPOptions{Token: testToken})
		if err != nil {
			t.Fatal(err)
		}
		ts := httptest.NewServer(h)
		t.Cleanup(ts.Close)
		var asked atomic.Int32
		var prompt atomic.Value
		cs, err := httpClient(t, ts.URL, bearer{token: testToken}, &mcp.ClientOptions{
			CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
				asked.Add(1)
				prompt.Store(req.Params.Messages[0].Content.(*mcp.TextContent).Text)
				if req.Params.MaxTokens != 100 {
					t.Errorf("maxTokens %d", req.Params.MaxTokens)
				}
				return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "Counted to 100000; no errors."}}, nil
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		call(t, context.Background(), cs, &mcp.CallToolParams{Arguments: args("command", "echo short")})
		env := call(t, context.Background(), cs, &mcp.CallToolParams{Arguments: args("command", "seq 1 100000")})
		if !on {
			if asked.Load() != 0 || env.Data.Summary != "" {
				t.Errorf("off: asked %d times, summary %q", asked.Load(), env.Data.Summary)
			}
			continue
		}
		if asked.Load() != 1 {
			t.Fatalf("asked %d times, want once (cut output only)", asked.Load())
		}
		if p := prompt.Load().(string); !strings.Contains(p, "Command succeeded: seq 1 100000") || !strings.Contains(p, "100000\n") {
			t.Errorf("prompt: %.300s", p)
		}
		summary := strings.Index(env.Text, "--- SUMMARY")
		if env.Data.Summary != "Counted to 100000; no errors." || summary < 0 || summary > strings.Index(env.Text, "--- STDOUT") {
			t.Errorf("summary %q in\n%.500s", env.Data.Summary, env.Text)
		}
	}
}
