//go:build linux

package main

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Ctrl-C on `shellgate run` kills the command and everything it started, prints the
// output so far and exits 130.
func TestRunInterrupt(t *testing.T) {
	bin := buildBinary(t)
	home := t.TempDir()
	cmd := exec.Command(bin, "run", "--root", t.TempDir(), "--", "sleep 300 & echo $!; sleep 200")
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	background, _ := strconv.Atoi(strings.TrimSpace(line))
	cmd.Process.Signal(os.Interrupt)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatal("shellgate run did not exit after SIGINT")
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitCancelled {
		t.Errorf("exit %v, want %d; stderr:\n%s", err, exitCancelled, stderr.String())
	}
	if !strings.Contains(stderr.String(), "Cancelled") {
		t.Errorf("stderr does not say it was cancelled:\n%s", stderr.String())
	}
	if background == 0 || syscall.Kill(background, 0) == nil && !zombie(background) {
		t.Errorf("background pid %d survived Ctrl-C", background)
	}
}

func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && strings.HasPrefix(s[i+1:], " Z")
}
