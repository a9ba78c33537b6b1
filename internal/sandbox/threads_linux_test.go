package sandbox

import (
	"os"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/shellgate/shellgate/internal/lane"
)

// TestHelpersHoldNoThread: a session's helper is waited on through the
// runtime's poller, not by a wait(2) that blocks an OS thread for as long as
// the helper lives (500 abandoned HTTP sessions held 500 threads).
func TestHelpersHoldNoThread(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	start(t, l.spec()) // the runtime's own threads made
	before := threads(t)
	const n = 12
	var last *Session
	for range n {
		last = start(t, l.spec())
	}
	if grown := threads(t) - before; grown >= n/2 {
		t.Errorf("%d more threads with %d more sessions: each helper holds one", grown, n)
	}
	// A helper that dies is still seen to.
	last.helper.Process.Kill()
	select {
	case <-last.dead:
	case <-time.After(30 * time.Second):
		t.Fatal("the helper was killed, and the session never saw it end")
	}
	if last.Alive() {
		t.Errorf("the session is alive without its helper")
	}
}

// threads is how many threads this process has.
func threads(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^Threads:\s+(\d+)`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("no Threads line in /proc/self/status")
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}
