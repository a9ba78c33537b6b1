package mcpserver

import (
	"sync"
	"testing"
	"time"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/internal/sandbox"
)

// TestShutdownClosesSessionsTogether: closing the server closes its shell
// sessions side by side, not one after another (529 sessions took 11.8 s,
// each waiting for its sandbox to go). Each close waits, up to a while, for
// the others to start: one after another, none ever sees another.
func TestShutdownClosesSessionsTogether(t *testing.T) {
	srv, _ := newServer(t, shellgate.Config{Sandbox: shellgate.SandboxConfig{Mode: sandbox.Off}}, Options{})
	const n = 4
	for _, key := range []string{"a", "b", "c", "d"} {
		srv.session(key)
	}
	var mu sync.Mutex
	arrived, most := 0, 0
	all := sync.NewCond(&mu)
	beforeSessionClose = func() {
		mu.Lock()
		defer mu.Unlock()
		arrived++
		most = max(most, arrived)
		all.Broadcast()
		deadline := time.Now().Add(5 * time.Second)
		wake := time.AfterFunc(5*time.Second, func() { mu.Lock(); all.Broadcast(); mu.Unlock() })
		defer wake.Stop()
		for most < n && time.Now().Before(deadline) {
			all.Wait()
		}
		arrived--
	}
	defer func() { beforeSessionClose = nil }()
	srv.Close()
	if most < n {
		t.Errorf("at most %d of %d sessions were being closed at once", most, n)
	}
}
