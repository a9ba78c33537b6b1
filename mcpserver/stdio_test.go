package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/shellgate/shellgate/internal/lane"

	"github.com/shellgate/shellgate"
)

func TestCheckLine(t *testing.T) {
	tests := []struct {
		line string
		code int // 0: passed on to the SDK
		id   string
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, 0, ""},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, 0, ""},
		{`{"jsonrpc":"2.0","id":"a","result":{}}`, 0, ""},
		{`{not json`, -32700, "null"},
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, -32600, "null"},
		{`5`, -32600, "null"},
		{`"ping"`, -32600, "null"},
		{`{"foo":1}`, -32600, "null"},
		{`{"jsonrpc":"1.0","id":3,"method":"ping"}`, -32600, "3"},
		{`{"jsonrpc":"2.0","id":4,"method":5}`, -32600, "4"},
		{`{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}`, -32600, "null"},
		{`{"jsonrpc":"2.0","id":"q"}`, -32600, `"q"`},
	}
	for _, tt := range tests {
		reply, _ := check([]byte(tt.line))
		if tt.code == 0 {
			if reply != nil {
				t.Errorf("%s: refused: %s", tt.line, reply)
			}
			continue
		}
		var r struct {
			ID    json.RawMessage
			Error struct{ Code int }
		}
		if err := json.Unmarshal(reply, &r); err != nil || r.Error.Code != tt.code || string(r.ID) != tt.id {
			t.Errorf("%s: reply %s, want code %d id %s", tt.line, reply, tt.code, tt.id)
		}
	}
}

// Malformed lines are answered and skipped; the session goes on and answers the
// requests around them.
func TestStdioSurvivesMalformedLines(t *testing.T) {
	lane.Live(t)
	srv, _ := newServer(t, shellgate.Config{}, Options{})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(context.Background(), StdioTransport(inR, outW)) }()
	replies := bufio.NewScanner(outR)
	replies.Buffer(nil, 1<<20)
	next := func() map[string]any {
		t.Helper()
		if !replies.Scan() {
			t.Fatalf("no reply: %v", replies.Err())
		}
		var m map[string]any
		if err := json.Unmarshal(replies.Bytes(), &m); err != nil {
			t.Fatalf("reply is not JSON: %s", replies.Bytes())
		}
		return m
	}
	send := func(line string) { io.WriteString(inW, line+"\n") }

	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"hand","version":"1"}}}`)
	if m := next(); m["id"] != 1.0 || m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for _, bad := range []string{`{not json`, `[1,2]`, `{"jsonrpc":"2.0","method":5,"id":7}`, strings.Repeat("x", 200<<10)} {
		send(bad)
		if m := next(); m["error"] == nil {
			t.Fatalf("%.40s: %v", bad, m)
		}
	}
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_shell_command","arguments":{"command":"echo still here"}}}`)
	m := next()
	sc, _ := m["result"].(map[string]any)["structuredContent"].(map[string]any)
	if data, _ := sc["data"].(map[string]any); data["stdout"] != "still here\n" {
		t.Fatalf("tools/call after bad lines: %v", m)
	}
	inW.Close()
	select {
	case <-served:
	case <-time.After(10 * time.Second):
		t.Fatal("server did not end at EOF")
	}
	outW.Close()
}

// A client that writes its requests and closes stdin at once (a pipe, a
// person trying the server by hand) gets every answer before the session
// ends.
func TestStdioAnswersWhatWasReadBeforeEOF(t *testing.T) {
	lane.Live(t)
	srv, _ := newServer(t, shellgate.Config{}, Options{})
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"pipe","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":"three","method":"tools/call","params":{"name":"run_shell_command","arguments":{"command":"echo piped"}}}`,
	}, "\n") + "\n"
	outR, outW := io.Pipe()
	replies := make(chan string, 1)
	go func() { b, _ := io.ReadAll(outR); replies <- string(b) }()
	done := make(chan error, 1)
	go func() { done <- srv.Serve(context.Background(), StdioTransport(strings.NewReader(in), outW)) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the session did not end at EOF")
	}
	outW.Close()
	out := <-replies
	ids := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var m struct {
			ID     json.RawMessage
			Result json.RawMessage
		}
		if json.Unmarshal([]byte(line), &m) == nil && m.Result != nil {
			ids[string(m.ID)] = true
		}
	}
	for _, id := range []string{`1`, `2`, `"three"`} {
		if !ids[id] {
			t.Errorf("request %s not answered; stdout:\n%.2000s", id, out)
		}
	}
	if !strings.Contains(out, "piped") {
		t.Errorf("the call's output is not in the answers:\n%.2000s", out)
	}
}
