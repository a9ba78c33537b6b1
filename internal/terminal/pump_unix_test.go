//go:build unix

package terminal_test

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shellgate/shellgate/internal/runner"
	"github.com/shellgate/shellgate/internal/terminal"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// A prompt the program wrote is not drained while it is still in the
// terminal (nothing copies yet), and is once the pump has copied it: a job
// is said to wait for input only with its prompt in the read.
func TestPumpDrained(t *testing.T) {
	master, slave, err := runner.OpenTerminal(80, 24)
	if err != nil {
		t.Skip("no pseudo-terminal:", err)
	}
	var out lockedBuffer
	p := terminal.NewPump(master, &out)
	if !p.Drained() {
		t.Error("a terminal nothing was written to is not drained")
	}
	if _, err := slave.Write([]byte(">>> ")); err != nil {
		t.Fatal(err)
	}
	if p.Drained() {
		t.Error("drained with the prompt still in the terminal")
	}
	done := make(chan error, 1)
	go func() { done <- p.Run() }()
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(out.String(), ">>> "); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the pump copied %q", out.String())
		}
	}
	if !p.Drained() {
		t.Error("not drained once the prompt was copied")
	}
	slave.Close() // the program's side closed: Run ends
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
	master.Close()
}
