package mcpserver

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shellgate/shellgate/internal/lane"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/shellgate/shellgate"
)

// alive reports whether pid is a live process (a zombie counts as gone).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command name, which is in parentheses.
	for i := len(b) - 1; i > 0; i-- {
		if b[i] == ')' && i+2 < len(b) {
			return b[i+2] != 'Z'
		}
	}
	return true
}

// findProc waits for the process whose command line is exactly argv — give each
// test its own sleep duration — and returns its PID as this process sees it:
// commands in the sandbox only know their own PID namespace's numbers.
func findProc(t *testing.T, argv ...string) int {
	t.Helper()
	want := strings.Join(argv, "\x00") + "\x00"
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			if b, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline"); string(b) == want && alive(pid) {
				return pid
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no process %q", argv)
	return 0
}

func waitGone(t *testing.T, pids ...int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for _, pid := range pids {
		for alive(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("process %d still alive", pid)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// Cancelling a call (notifications/cancelled) kills the command and what it
// started in the background.
func TestCancelKillsCommand(t *testing.T) {
	lane.Live(t)
	srv, _ := newServer(t, shellgate.Config{}, Options{})
	cs := connect(t, srv, nil, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: DefaultToolName,
			Arguments: args("command", "sleep 301.01 & exec sleep 300.01")})
		errc <- err
	}()
	fg, bg := findProc(t, "sleep", "300.01"), findProc(t, "sleep", "301.01")
	if !alive(fg) || !alive(bg) {
		t.Fatal("the command is not running")
	}
	cancel()
	if err := <-errc; err == nil {
		t.Error("a cancelled call returned a result")
	}
	waitGone(t, fg, bg)
}

// When the client goes away (stdin EOF in stdio mode) commands in flight are killed
// and Serve returns.
func TestStdinEOFKillsCommand(t *testing.T) {
	lane.Live(t)
	srv, _ := newServer(t, shellgate.Config{}, Options{})
	// Two pipes, as a stdio server has: closing toServer is stdin's EOF.
	fromServer, serverOut := io.Pipe()
	serverIn, toServer := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- srv.Serve(context.Background(), &mcp.IOTransport{Reader: serverIn, Writer: serverOut})
	}()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(context.Background(), &mcp.IOTransport{Reader: fromServer, Writer: toServer}, nil)
	if err != nil {
		t.Fatal(err)
	}
	go cs.CallTool(context.Background(), &mcp.CallToolParams{Name: DefaultToolName, Arguments: args("command", "sleep 299.02 & exec sleep 300.02")})
	fg, bg := findProc(t, "sleep", "300.02"), findProc(t, "sleep", "299.02")
	toServer.Close()
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after stdin EOF")
	}
	waitGone(t, fg, bg)
	fromServer.Close()
}

// Closing the server (SIGTERM, SIGINT) kills commands in flight.
func TestServeContextKillsCommand(t *testing.T) {
	lane.Live(t)
	srv, _ := newServer(t, shellgate.Config{}, Options{})
	ct, st := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, st) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	go cs.CallTool(context.Background(), &mcp.CallToolParams{Name: DefaultToolName, Arguments: args("command", "exec sleep 300.03")})
	fg := findProc(t, "sleep", "300.03")
	cancel()
	select {
	case <-served:
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after its context ended")
	}
	waitGone(t, fg)
}

// Stopping the HTTP server kills commands in flight, then ServeListener returns.
func TestServeListenerStopKillsCommand(t *testing.T) {
	lane.Live(t)
	srv, _ := newServer(t, shellgate.Config{}, Options{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- srv.ServeListener(ctx, ln, HTTPOptions{Token: testToken}) }()
	cs, err := httpClient(t, "http://"+ln.Addr().String()+"/", bearer{token: testToken}, nil)
	if err != nil {
		t.Fatal(err)
	}
	go cs.CallTool(context.Background(), &mcp.CallToolParams{Name: DefaultToolName, Arguments: args("command", "exec sleep 300.04")})
	fg := findProc(t, "sleep", "300.04")
	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("ServeListener: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ServeListener did not return after its context ended")
	}
	waitGone(t, fg)
}

// A client ending its HTTP session (DELETE) kills that session's commands, and only
// those.
func TestHTTPSessionEndKillsCommand(t *testing.T) {
	lane.Live(t)
	srv, _ := newServer(t, shellgate.Config{}, Options{})
	h, err := srv.Handler(HTTPOptions{Token: testToken})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	ending, err := httpClient(t, ts.URL, bearer{token: testToken}, nil)
	if err != nil {
		t.Fatal(err)
	}
	staying, err := httpClient(t, ts.URL, bearer{token: testToken}, nil)
	if err != nil {
		t.Fatal(err)
	}
	results := make(chan error, 1)
	go func() {
		_, err := ending.CallTool(context.Background(), &mcp.CallToolParams{Name: DefaultToolName, Arguments: args("command", "exec sleep 300.05")})
		results <- err
	}()
	go staying.CallTool(context.Background(), &mcp.CallToolParams{Name: DefaultToolName, Arguments: args("command", "exec sleep 300.06")})
	a, b := findProc(t, "sleep", "300.05"), findProc(t, "sleep", "300.06")

	req, _ := http.NewRequest(http.MethodDelete, ts.URL, nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set("Mcp-Session-Id", ending.ID())
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		srv.Close()
		t.Fatalf("DELETE: %v (the session waits for its command)", err)
	}
	resp.Body.Close()
	waitGone(t, a)
	if !alive(b) {
		t.Error("ending one session killed another session's command")
	}
	select {
	case <-results:
	case <-time.After(10 * time.Second):
		t.Error("the call of the ended session did not return")
	}
	srv.Close() // ends the other call, which the clients' Close would wait for
	waitGone(t, b)
}
