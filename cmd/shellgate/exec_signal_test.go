//go:build linux

package main

import (
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// SIGTERM to exec (as an agent ends a command) ends the command's whole group.
func TestExecForwardsTermination(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary; POSIX signals")
	}
	bin := buildBinary(t)
	root := t.TempDir()
	cmd := exec.Command(bin, "exec", "--root", root, "sleep 30.08 & wait")
	cmd.Dir = root
	cmd.Env = hookEnv(t)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	pid := findProc(t, "sleep", "30.08")
	cmd.Process.Signal(syscall.SIGTERM)
	err := cmd.Wait()
	if ee, _ := err.(*exec.ExitError); ee == nil || ee.ExitCode() != exitCancelled {
		t.Errorf("exit %v; want %d", err, exitCancelled)
	}
	for deadline := time.Now().Add(5 * time.Second); syscall.Kill(pid, 0) == nil && !zombie(pid) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if syscall.Kill(pid, 0) == nil && !zombie(pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("sleep %d outlived exec", pid)
	}
}
