package mcpserver

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shellgate/shellgate/internal/lane"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/envelope"
)

type received struct {
	params mcp.ProgressNotificationParams
}

func progressRecorder() (*mcp.ClientOptions, func() []received) {
	var mu sync.Mutex
	var got []received
	opts := &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
		mu.Lock()
		got = append(got, received{*r.Params})
		mu.Unlock()
	}}
	return opts, func() []received {
		mu.Lock()
		defer mu.Unlock()
		return append([]received(nil), got...)
	}
}

// A command printing for 3 seconds sends progress with its newest lines, at most
// once a second, and nothing after the result.
func TestProgress(t *testing.T) {
	lane.Live(t)
	srv, _ := newServer(t, shellgate.Config{}, Options{})
	copts, got := progressRecorder()
	cs := connect(t, srv, copts, nil)
	params := &mcp.CallToolParams{Arguments: args("command", "for i in $(seq 1 15); do echo line $i; sleep 0.2; done")}
	params.SetProgressToken("tok-1")
	start := time.Now()
	env := call(t, context.Background(), cs, params)
	took := time.Since(start)
	if env.Status != envelope.Success {
		t.Fatalf("status %s\n%s", env.Status, env.Text)
	}
	done := len(got())
	time.Sleep(1200 * time.Millisecond)
	notes := got()
	if len(notes) != done {
		t.Errorf("%d progress notifications arrived after the result", len(notes)-done)
	}
	if len(notes) < 2 {
		t.Fatalf("%d progress notifications for 3s of output, want at least 2", len(notes))
	}
	// Sent at most once a second: counted over the call, not timed on
	// arrival, where a late delivery brings the next one closer.
	if most := int(took/time.Second) + 1; len(notes) > most {
		t.Errorf("%d progress notifications in a %v call, want at most %d", len(notes), took.Round(time.Millisecond), most)
	}
	for i, n := range notes {
		if n.params.ProgressToken != "tok-1" {
			t.Errorf("notification %d has token %v", i, n.params.ProgressToken)
		}
		if !strings.Contains(n.params.Message, "line ") {
			t.Errorf("notification %d message %q lacks output lines", i, n.params.Message)
		}
		if i == 0 {
			continue
		}
		prev := notes[i-1]
		if n.params.Progress <= prev.params.Progress {
			t.Errorf("progress went from %v to %v; it must increase", prev.params.Progress, n.params.Progress)
		}
	}
	last := notes[len(notes)-1].params.Message
	if strings.Contains(last, "line 1\n") && !strings.Contains(last, "line 2") {
		t.Errorf("last message %q is not the newest output", last)
	}
}

// Without a progress token, no notification is sent.
func TestNoProgressToken(t *testing.T) {
	lane.Live(t)
	srv, _ := newServer(t, shellgate.Config{}, Options{})
	copts, got := progressRecorder()
	cs := connect(t, srv, copts, nil)
	call(t, context.Background(), cs, &mcp.CallToolParams{Arguments: args("command", "for i in 1 2 3; do echo $i; sleep 0.5; done")})
	if n := len(got()); n != 0 {
		t.Errorf("%d notifications without a progress token", n)
	}
}

// Binary output is reported as byte counts, not as text.
func TestProgressBinary(t *testing.T) {
	lane.Live(t)
	srv, _ := newServer(t, shellgate.Config{}, Options{})
	copts, got := progressRecorder()
	cs := connect(t, srv, copts, nil)
	params := &mcp.CallToolParams{Arguments: args("command", "for i in 1 2 3; do head -c 3000 /dev/urandom; sleep 0.6; done")}
	params.SetProgressToken(7)
	env := call(t, context.Background(), cs, params)
	if !env.Data.Binary {
		t.Fatalf("output not detected as binary:\n%s", env.Text)
	}
	notes := got()
	if len(notes) == 0 {
		t.Fatal("no progress notifications")
	}
	last := notes[len(notes)-1].params.Message
	if !strings.HasPrefix(last, "[binary output: ") || !strings.Contains(last, "bytes stdout") {
		t.Errorf("binary progress message %q, want byte counts", last)
	}
}

func TestNewestLines(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"a\nb\n", 10, "a\nb\n"},
		{"first line\nsecond\nthird\n", 12, "third\n"},
		{"no newlines at all", 5, "t all"},
		{"x\xff\xfey", 10, "x\uFFFDy"},
	}
	for _, tc := range tests {
		if got := newestLines([]byte(tc.in), tc.n); got != tc.want {
			t.Errorf("newestLines(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

// A progress message carries no escape sequence for the client to obey.
func TestProgressMessageIsPlainText(t *testing.T) {
	got := newestLines([]byte("\x1b]0;owned\x07building\x1b[31m red\x1b[0m\r\x1b[2Kstep 2 of 3\n"), progressTail)
	if got != "step 2 of 3\n" {
		t.Errorf("progress message %q", got)
	}
}
