//lint:file-ignore SA1019 Sampling is deprecated (SEP-2577) but works on protocol versions before 2026-07-28, and summaries are asked for only there.

package mcpserver

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/shellgate/shellgate/internal/lane"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/shellgate/shellgate"
)

// bigOutput prints 200 000 lines, one of them an error in the middle that
// the cut leaves out but the digest keeps.
const bigOutput = `seq 1 100000; echo 'main.go:7: error: undefined: frob' >&1; seq 1 100000`

// sampler connects a client over HTTP — which negotiates a protocol version
// that still has sampling — answering sampling requests with answer.
func sampler(t *testing.T, opts Options, answer func(*mcp.CreateMessageParams) (*mcp.CreateMessageResult, error)) *mcp.ClientSession {
	t.Helper()
	_, ts := httpServerWith(t, opts, HTTPOptions{})
	var copts *mcp.ClientOptions
	if answer != nil {
		copts = &mcp.ClientOptions{CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return answer(req.Params)
		}}
	}
	cs, err := httpClient(t, ts.URL, bearer{token: testToken}, copts)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// With --summarize, output that was cut is summarized by the client's model
// through sampling: the request carries the visible output and the digest and
// the budget, and the answer goes first in the text and in data.summary.
func TestSummaryBySampling(t *testing.T) {
	lane.Live(t)
	var mu sync.Mutex
	var asked []*mcp.CreateMessageParams
	cs := sampler(t, Options{Summarize: 300}, func(p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
		mu.Lock()
		asked = append(asked, p)
		mu.Unlock()
		return &mcp.CreateMessageResult{Model: "test", Role: "assistant", Content: &mcp.TextContent{Text: "Printed numbers; one error: main.go:7 undefined: frob."}}, nil
	})
	ctx := context.Background()

	env := call(t, ctx, cs, &mcp.CallToolParams{Name: DefaultToolName, Arguments: args("command", bigOutput)})
	if !env.Data.Truncated || env.Data.Summary != "Printed numbers; one error: main.go:7 undefined: frob." {
		t.Fatalf("truncated %v, summary %q", env.Data.Truncated, env.Data.Summary)
	}
	if i, j := strings.Index(env.Text, "--- SUMMARY"), strings.Index(env.Text, "--- STDOUT"); i < 0 || j < i {
		t.Errorf("the summary is not before the output:\n%.600s", env.Text)
	}
	if len(asked) != 1 {
		t.Fatalf("%d sampling requests, want 1", len(asked))
	}
	p := asked[0]
	prompt := p.Messages[0].Content.(*mcp.TextContent).Text
	if p.MaxTokens != 300 || !strings.Contains(prompt, "main.go:7: error: undefined: frob") || !strings.Contains(prompt, "Exit code: 0") || p.SystemPrompt == "" {
		t.Errorf("the request: max %d, system %q, prompt %.300q", p.MaxTokens, p.SystemPrompt, prompt)
	}

	// Output that fits is not summarized.
	if env := call(t, ctx, cs, &mcp.CallToolParams{Name: DefaultToolName, Arguments: args("command", "echo hi")}); env.Data.Summary != "" || len(asked) != 1 {
		t.Errorf("echo hi was summarized: %q (%d requests)", env.Data.Summary, len(asked))
	}
}

// A client that fails the request gets its output all the same, and a note; a
// client without sampling, one on a protocol version without it and a server
// without --summarize are never asked.
func TestSummaryWithout(t *testing.T) {
	lane.Live(t)
	ctx := context.Background()
	cs := sampler(t, Options{Summarize: 300}, func(*mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
		return nil, errors.New("the user declined")
	})
	env := call(t, ctx, cs, &mcp.CallToolParams{Name: DefaultToolName, Arguments: args("command", bigOutput)})
	if env.Data.Summary != "" || !strings.Contains(env.Text, "No summary: asking the client's model failed") || !strings.Contains(env.Text, "main.go:7") {
		t.Errorf("a failed summary:\n%.800s", env.Text)
	}

	cs = sampler(t, Options{Summarize: 300}, nil) // no sampling capability
	if env := call(t, ctx, cs, &mcp.CallToolParams{Name: DefaultToolName, Arguments: args("command", bigOutput)}); env.Data.Summary != "" || strings.Contains(env.Text, "summary") {
		t.Errorf("a client without sampling:\n%.400s", env.Text)
	}

	var asked atomic.Bool
	never := func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
		asked.Store(true)
		return &mcp.CreateMessageResult{Content: &mcp.TextContent{Text: "x"}}, nil
	}
	srv, _ := newServer(t, shellgate.Config{}, Options{Summarize: 300})
	cs = connect(t, srv, &mcp.ClientOptions{CreateMessageHandler: never}, nil) // in memory: 2026-07-28, no sampling in a call
	if env := call(t, ctx, cs, &mcp.CallToolParams{Name: DefaultToolName, Arguments: args("command", bigOutput)}); asked.Load() || env.Data.Summary != "" {
		t.Errorf("asked on a protocol version without sampling")
	}
	cs = sampler(t, Options{}, func(*mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) { return never(ctx, nil) })
	if env := call(t, ctx, cs, &mcp.CallToolParams{Name: DefaultToolName, Arguments: args("command", bigOutput)}); asked.Load() || env.Data.Summary != "" {
		t.Errorf("summarized by default")
	}
}
