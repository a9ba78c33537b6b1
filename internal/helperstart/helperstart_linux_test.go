package helperstart

import (
	"errors"
	"os"
	"syscall"
	"testing"
)

// TestMain stands in for the helper when this test binary is started as one:
// it waits, as a helper does for its setup, until the control socket closes,
// then fails as a helper without a setup message does.
func TestMain(m *testing.M) {
	if len(os.Args) == 1 && os.Args[0] == Arg0 {
		ctl := os.NewFile(CtlFD, "control")
		ctl.Read(make([]byte, 1))
		os.Stderr.WriteString("stand-in helper: no setup message\n")
		os.Exit(2)
	}
	os.Exit(m.Run())
}

// prestarted starts a helper ahead, as package early does, and returns its
// PID; the test's end forgets it.
func prestarted(t *testing.T) int {
	t.Helper()
	t.Cleanup(func() {
		early.mu.Lock()
		defer early.mu.Unlock()
		if early.proc != nil {
			early.proc.Control.Close()
			early.proc.Kill()
		}
		early.started, early.proc = nil, nil
	})
	Prestart(false)
	early.mu.Lock()
	defer early.mu.Unlock()
	if early.proc == nil {
		p, err := Start(false) // again, for the reason
		if err == nil {
			p.Control.Close()
			p.Kill()
		}
		t.Skipf("no helper on this system: %v", err)
	}
	return early.proc.Process.Pid
}

// gone reports whether pid is neither running nor waiting to be reaped.
func gone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

func TestTakeGivesThePrestartedHelperOnce(t *testing.T) {
	pid := prestarted(t)
	p := Take(false)
	if p == nil || p.Process.Pid != pid {
		t.Fatalf("Take(false) = %v, want the helper %d", p, pid)
	}
	defer func() { p.Control.Close(); p.Kill() }()
	if gone(pid) {
		t.Fatal("the helper taken is not running")
	}
	if again := Take(false); again != nil {
		t.Errorf("a second Take got helper %d too", again.Process.Pid)
	}
	Discard() // nothing left to discard: the taken one stays
	if gone(pid) {
		t.Error("Discard ended a helper that was taken")
	}
}

// A helper nobody takes — a refused command, a run without the sandbox — is
// gone, reaped, when Discard returns: nothing is left behind.
func TestDiscardEndsAHelperNobodyTook(t *testing.T) {
	pid := prestarted(t)
	if gone(pid) {
		t.Fatal("the prestarted helper is not running")
	}
	Discard()
	if !gone(pid) {
		t.Errorf("helper %d is still there after Discard", pid)
	}
	if p := Take(false); p != nil {
		t.Errorf("Take after Discard got helper %d", p.Process.Pid)
	}
}

// A helper in a network namespace of its own is no use to a session that has
// the host's network: Take refuses it, and it is gone.
func TestTakeDiscardsAHelperWithTheWrongNetwork(t *testing.T) {
	pid := prestarted(t)
	if p := Take(true); p != nil {
		t.Fatalf("Take(true) got the network-off helper %d", p.Process.Pid)
	}
	if !gone(pid) {
		t.Errorf("helper %d is still there after Take refused it", pid)
	}
}

// What a helper prints before it fails is kept for the error message.
func TestExitedKeepsWhatTheHelperPrinted(t *testing.T) {
	p, err := Start(false)
	if err != nil {
		t.Skipf("no helper on this system: %v", err)
	}
	p.Control.Close() // the stand-in helper exits when its control socket closes
	<-p.Dead
	waitErr, stderr := p.Exited()
	if waitErr == nil || waitErr.Error() != "exit status 2" {
		t.Errorf("the helper's exit: %v, want exit status 2", waitErr)
	}
	if string(stderr) != "stand-in helper: no setup message\n" {
		t.Errorf("kept stderr %q", stderr)
	}
}
