//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
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
	pidFile := filepath.Join(root, "pid")
	cmd := exec.Command(bin, "exec", "--root", root, "sleep 30 & echo $! > pid; wait")
	cmd.Dir = root
	cmd.Env = hookEnv(t)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pid int
	for deadline := time.Now().Add(5 * time.Second); pid == 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(pidFile); err == nil && len(bytes.TrimSpace(b)) > 0 {
			json.Unmarshal(bytes.TrimSpace(b), &pid)
		}
	}
	if pid == 0 {
		cmd.Process.Kill()
		t.Fatal("the command did not start")
	}
	cmd.Process.Signal(syscall.SIGTERM)
	err := cmd.Wait()
	if ee, _ := err.(*exec.ExitError); ee == nil || ee.ExitCode() != exitCancelled {
		t.Errorf("exit %v; want %d", err, exitCancelled)
	}
	if syscall.Kill(pid, 0) == nil && !zombie(pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("sleep %d outlived exec", pid)
	}
}
