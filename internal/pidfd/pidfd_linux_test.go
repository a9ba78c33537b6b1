package pidfd

import (
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// start starts sh -c script with a pidfd of it.
func start(t *testing.T, script string) (*exec.Cmd, int) {
	t.Helper()
	pfd := -1
	cmd := exec.Command("sh", "-c", script)
	cmd.SysProcAttr = &syscall.SysProcAttr{PidFD: &pfd}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, pfd
}

// AwaitExit returns once its process has exited, not before: whether the
// exit comes while it waits or came before it was called.
func TestAwaitExit(t *testing.T) {
	cmd, pfd := start(t, "sleep 0.3")
	begun := time.Now()
	AwaitExit(pfd)
	if d := time.Since(begun); d < 250*time.Millisecond {
		t.Errorf("returned after %v, before the process exited", d)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}

	cmd, pfd = start(t, "exit 3")
	time.Sleep(100 * time.Millisecond) // a zombie by now
	done := make(chan struct{})
	go func() { AwaitExit(pfd); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("AwaitExit of an exited process did not return")
	}
	if err := cmd.Wait(); cmd.ProcessState.ExitCode() != 3 {
		t.Fatalf("exit %d (%v)", cmd.ProcessState.ExitCode(), err)
	}
}

// exited is what AwaitExit looks at again when its poller was not told: a
// pidfd of a running process is not readable, one of a zombie is.
func TestExited(t *testing.T) {
	cmd, pfd := start(t, "sleep 5")
	defer syscall.Close(pfd)
	if exited(pfd) {
		t.Error("a running process reads as exited")
	}
	cmd.Process.Kill()
	deadline := time.Now().Add(5 * time.Second)
	for !exited(pfd) {
		if time.Now().After(deadline) {
			t.Fatal("a killed process never reads as exited")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cmd.Wait()
}
