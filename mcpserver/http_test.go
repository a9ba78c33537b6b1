package mcpserver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shellgate/shellgate/internal/lane"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/envelope"
)

const testToken = "s3cret-token"

// bearer adds the token (and any other headers) to every request.
type bearer struct {
	token  string
	header http.Header
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.token != "" {
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	for k, v := range b.header {
		r.Header[k] = v
	}
	return http.DefaultTransport.RoundTrip(r)
}

func httpServer(t *testing.T, o HTTPOptions) (*Server, *httptest.Server) {
	t.Helper()
	return httpServerWith(t, Options{}, o)
}

func httpServerWith(t *testing.T, opts Options, o HTTPOptions) (*Server, *httptest.Server) {
	t.Helper()
	srv, _ := newServer(t, shellgate.Config{}, opts)
	if o.Token == "" {
		o.Token = testToken
	}
	h, err := srv.Handler(o)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return srv, ts
}

func httpClient(t *testing.T, url string, rt http.RoundTripper, copts *mcp.ClientOptions) (*mcp.ClientSession, error) {
	t.Helper()
	tr := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: rt}, MaxRetries: -1}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "http-test"}, copts).Connect(context.Background(), tr, nil)
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

func TestHTTP(t *testing.T) {
	lane.Live(t)
	_, ts := httpServer(t, HTTPOptions{})
	var asked atomic.Int32
	cs, err := httpClient(t, ts.URL, bearer{token: testToken},
		answering(&mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow_once"}}, &asked, nil))
	if err != nil {
		t.Fatal(err)
	}
	env := call(t, context.Background(), cs, &mcp.CallToolParams{Arguments: args("command", "echo hi")})
	if env.Status != envelope.Success || env.Data.Stdout != "hi\n" {
		t.Fatalf("echo hi over HTTP: %s", env.Text)
	}
	// A stateful HTTP server negotiates a version before 2026-07-28, so the approval
	// below is asked with elicitation/create during the call.
	if v := cs.InitializeResult().ProtocolVersion; v >= multiRoundTripVersion {
		t.Errorf("HTTP session negotiated %s; the in-call elicitation path is not covered", v)
	}
	env = call(t, context.Background(), cs, &mcp.CallToolParams{Arguments: args("command", "touch via-http")})
	if env.Status != envelope.Success || asked.Load() != 1 {
		t.Errorf("ask over HTTP: asked %d times, %s", asked.Load(), env.Text)
	}
}

// Requests without the right token, or from a foreign Host or Origin, are refused
// before they reach MCP.
func TestHTTPRefusals(t *testing.T) {
	_, ts := httpServer(t, HTTPOptions{AllowOrigins: []string{"https://app.example.com"}})
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}`
	tests := []struct {
		name   string
		header map[string]string
		host   string
		want   int
	}{
		{"no token", nil, "", http.StatusUnauthorized},
		{"wrong token", map[string]string{"Authorization": "Bearer nope"}, "", http.StatusUnauthorized},
		{"basic auth", map[string]string{"Authorization": "Basic " + testToken}, "", http.StatusUnauthorized},
		{"token prefix", map[string]string{"Authorization": "Bearer " + testToken[:4]}, "", http.StatusUnauthorized},
		{"foreign origin", map[string]string{"Authorization": "Bearer " + testToken, "Origin": "http://evil.example"}, "", http.StatusForbidden},
		{"null origin", map[string]string{"Authorization": "Bearer " + testToken, "Origin": "null"}, "", http.StatusForbidden},
		{"rebound host", map[string]string{"Authorization": "Bearer " + testToken}, "evil.example:80", http.StatusForbidden},
		{"allowed origin", map[string]string{"Authorization": "Bearer " + testToken, "Origin": "https://app.example.com"}, "", http.StatusOK},
		{"loopback origin", map[string]string{"Authorization": "Bearer " + testToken, "Origin": "http://localhost:3000"}, "", http.StatusOK},
		{"localhost host", map[string]string{"Authorization": "Bearer " + testToken}, "localhost", http.StatusOK},
		{"good", map[string]string{"Authorization": "Bearer " + testToken}, "", http.StatusOK},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest("POST", ts.URL, strings.NewReader(initialize))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			if tc.host != "" {
				req.Host = tc.host
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("status %d, want %d", resp.StatusCode, tc.want)
			}
			if tc.want == http.StatusUnauthorized && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("401 without a Bearer challenge")
			}
		})
	}
	// The SDK client without a token cannot even initialize.
	if _, err := httpClient(t, ts.URL, bearer{}, nil); err == nil {
		t.Error("a client without the token connected")
	}
}

func TestHandlerNeedsToken(t *testing.T) {
	srv, _ := newServer(t, shellgate.Config{}, Options{})
	if _, err := srv.Handler(HTTPOptions{}); err == nil {
		t.Error("Handler without a token: no error")
	}
	if _, err := srv.Handler(HTTPOptions{Token: "x", AllowOrigins: []string{"example.com"}}); err == nil {
		t.Error("an origin without a scheme was accepted")
	}
}

func TestIsLoopback(t *testing.T) {
	tests := map[string]bool{
		"127.0.0.1:8080": true,
		"localhost:0":    true,
		"[::1]:9000":     true,
		"127.1.2.3:1":    true,
		":8080":          false,
		"0.0.0.0:8080":   false,
		"[::]:8080":      false,
		"10.0.0.5:80":    false,
		"example.com:80": false,
	}
	for addr, want := range tests {
		if got := IsLoopback(addr); got != want {
			t.Errorf("IsLoopback(%q) = %v, want %v", addr, got, want)
		}
	}
}

// An HTTP server's quiet spell (HTTPOptions.Quiet): it comes once no request
// has been in flight for QuietAfter, though the client holds its session's
// event stream open, and not while a call runs, however long.
func TestHTTPQuietSpell(t *testing.T) {
	lane.Live(t)
	quiet := make(chan time.Time, 16)
	_, ts := httpServer(t, HTTPOptions{Quiet: func() { quiet <- time.Now() }, QuietAfter: 100 * time.Millisecond})
	select {
	case <-quiet:
		t.Fatal("quiet before any request: a server no client spoke to has nothing to give back")
	case <-time.After(300 * time.Millisecond):
	}
	cs, err := httpClient(t, ts.URL, bearer{token: testToken}, nil)
	if err != nil {
		t.Fatal(err)
	}
	wait := func(after string) time.Time {
		t.Helper()
		select {
		case at := <-quiet:
			return at
		case <-time.After(10 * time.Second):
			t.Fatalf("no quiet spell after %s", after)
			return time.Time{}
		}
	}
	wait("the handshake")
	env := call(t, context.Background(), cs, &mcp.CallToolParams{Arguments: args("command", "sleep 0.5; echo done")})
	returned := time.Now()
	if env.Status != envelope.Success || env.Data.Stdout != "done\n" {
		t.Fatalf("the call: %s", env.Text)
	}
	if at := wait("the call"); at.Before(returned) {
		t.Errorf("quiet %v before the call of 0.5 s returned: a call in flight is not quiet", returned.Sub(at))
	}
}
