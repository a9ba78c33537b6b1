//go:build unix

package mcpserver

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/shellgate/shellgate/internal/lane"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/internal/sandbox"
)

// hang is how long a test waits for something that must happen before calling
// it a hang: not a speed limit.
const hang = 30 * time.Second

// realServer serves srv with ServeListener on 127.0.0.1, through a listener
// whose connections have a small send buffer (so that a client that does not
// read blocks the server's writes at once) and report their closing on closed.
func realServer(t *testing.T, srv *Server, o HTTPOptions) (url string, closed <-chan net.Addr) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan net.Addr, 100)
	if o.Token == "" {
		o.Token = testToken
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.ServeListener(ctx, &watchedListener{Listener: ln, closed: ch}, o) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("ServeListener: %v", err)
		}
	})
	return "http://" + ln.Addr().String(), ch
}

type watchedListener struct {
	net.Listener
	closed chan net.Addr
}

func (l *watchedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	c.(*net.TCPConn).SetWriteBuffer(4096)
	return &watchedConn{Conn: c, closed: l.closed}, nil
}

type watchedConn struct {
	net.Conn
	closed chan net.Addr
	once   sync.Once
}

func (c *watchedConn) Close() error {
	c.once.Do(func() { c.closed <- c.RemoteAddr() })
	return c.Conn.Close()
}

// waitClosed waits for the server to close the connection from local.
func waitClosed(t *testing.T, closed <-chan net.Addr, local net.Addr, what string) {
	t.Helper()
	deadline := time.After(hang)
	for {
		select {
		case a := <-closed:
			if a.String() == local.String() {
				return
			}
		case <-deadline:
			t.Fatalf("%s: the server kept the connection", what)
		}
	}
}

// rawClient speaks HTTP over one connection with a small receive buffer.
type rawClient struct {
	conn net.Conn
	r    *bufio.Reader
	url  string
	sid  string
}

func dialRaw(t *testing.T, url string) *rawClient {
	t.Helper()
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}
	conn, err := d.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &rawClient{conn: conn, r: bufio.NewReader(conn), url: url}
}

// send writes one request; token "" sends none.
func (c *rawClient) send(t *testing.T, method, token, body string) {
	t.Helper()
	req, _ := http.NewRequest(method, c.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if c.sid != "" {
		req.Header.Set("Mcp-Session-Id", c.sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	if err := req.Write(c.conn); err != nil {
		t.Fatal(err)
	}
}

// receive reads one whole response.
func (c *rawClient) receive(t *testing.T) (*http.Response, string) {
	t.Helper()
	resp, err := http.ReadResponse(c.r, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		c.sid = id
	}
	return resp, string(b)
}

const rawInitialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

func (c *rawClient) initialize(t *testing.T) {
	t.Helper()
	c.send(t, "POST", testToken, rawInitialize)
	if resp, body := c.receive(t); resp.StatusCode != 200 || c.sid == "" {
		t.Fatalf("initialize: %s %s", resp.Status, body)
	}
	c.send(t, "POST", testToken, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if resp, body := c.receive(t); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("initialized: %s %s", resp.Status, body)
	}
}

func noSandbox() shellgate.Config {
	return shellgate.Config{Sandbox: shellgate.SandboxConfig{Mode: sandbox.Off}}
}

// A client that sends a call and never reads the answer does not hold the
// connection (and the goroutine writing to it) forever: each write has a deadline.
func TestHTTPWriteDeadline(t *testing.T) {
	lane.Live(t)
	srv, _ := newServer(t, noSandbox(), Options{})
	url, closed := realServer(t, srv, HTTPOptions{WriteTimeout: 200 * time.Millisecond})
	c := dialRaw(t, url)
	c.initialize(t)
	// About 1 MiB of result, far more than the two 4 KiB buffers between us.
	c.send(t, "POST", testToken, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_shell_command","arguments":{"command":"head -c 500000 /dev/zero | tr '\\0' a","max_output_bytes":500000}}}`)
	waitClosed(t, closed, c.conn.LocalAddr(), "a client that does not read")
}

// A connection idle between requests is closed after IdleTimeout, and one whose
// request was refused (401) is not kept at all.
func TestHTTPIdleConnections(t *testing.T) {
	srv, _ := newServer(t, noSandbox(), Options{})
	url, closed := realServer(t, srv, HTTPOptions{IdleTimeout: 200 * time.Millisecond})

	refused := dialRaw(t, url)
	refused.send(t, "POST", "", rawInitialize)
	if resp, _ := refused.receive(t); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("no token: %s", resp.Status)
	}
	waitClosed(t, closed, refused.conn.LocalAddr(), "after a 401")

	idle := dialRaw(t, url)
	idle.initialize(t)
	waitClosed(t, closed, idle.conn.LocalAddr(), "an idle keep-alive connection")
}

// Past MaxSessions a new session is refused with 503 and Retry-After; once one
// ends, a new one opens.
func TestHTTPSessionCap(t *testing.T) {
	srv, _ := newServer(t, noSandbox(), Options{})
	url, _ := realServer(t, srv, HTTPOptions{MaxSessions: 2})
	var clients []*mcp.ClientSession
	for i := range 2 {
		cs, err := httpClient(t, url, bearer{token: testToken}, nil)
		if err != nil {
			t.Fatalf("client %d: %v", i, err)
		}
		clients = append(clients, cs)
	}
	c := dialRaw(t, url)
	c.send(t, "POST", testToken, rawInitialize)
	resp, body := c.receive(t)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !strings.Contains(body, "2 sessions") {
		t.Fatalf("third session: %s (Retry-After %q) %s", resp.Status, resp.Header.Get("Retry-After"), body)
	}
	// The open ones still work.
	if env := call(t, context.Background(), clients[0], &mcp.CallToolParams{Arguments: args("command", "echo hi")}); env.Data.Stdout != "hi\n" {
		t.Fatalf("a session within the cap: %s", env.Text)
	}
	clients[1].Close() // DELETE ends it
	if _, err := httpClient(t, url, bearer{token: testToken}, nil); err != nil {
		t.Fatalf("a session after one ended: %v", err)
	}
}

// A session that never runs a command is closed after UnusedSessionTimeout; one
// that ran a command is kept.
func TestHTTPUnusedSessionClosed(t *testing.T) {
	lane.Live(t)
	srv, _ := newServer(t, noSandbox(), Options{})
	// Long enough for the used session's first call to start on a loaded
	// machine; the unused one is waited for.
	url, _ := realServer(t, srv, HTTPOptions{UnusedSessionTimeout: 3 * time.Second})
	unused, err := httpClient(t, url, bearer{token: testToken}, nil)
	if err != nil {
		t.Fatal(err)
	}
	used, err := httpClient(t, url, bearer{token: testToken}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if env := call(t, context.Background(), used, &mcp.CallToolParams{Arguments: args("command", "echo hi")}); env.Data.Stdout != "hi\n" {
		t.Fatalf("echo hi: %s", env.Text)
	}
	ids := func() []string {
		var l []string
		for ss := range srv.mcp.Sessions() {
			l = append(l, ss.ID())
		}
		return l
	}
	deadline := time.Now().Add(hang)
	for slices.Contains(ids(), unused.ID()) {
		if time.Now().After(deadline) {
			t.Fatalf("a session that ran nothing is still open: %v", ids())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !slices.Contains(ids(), used.ID()) {
		t.Fatalf("the session that ran a command was closed too")
	}
	if env := call(t, context.Background(), used, &mcp.CallToolParams{Arguments: args("command", "echo again")}); env.Data.Stdout != "again\n" {
		t.Fatalf("the used session: %s", env.Text)
	}
	_, err = unused.CallTool(context.Background(), &mcp.CallToolParams{Name: DefaultToolName, Arguments: args("command", "echo late")})
	if err == nil {
		t.Errorf("the closed session still answers")
	}
}
