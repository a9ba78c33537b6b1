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

	"github.com/shellgate/shellgate/internal/lane"
)

// Ctrl-C on `shellgate run` kills the command and everything it started, prints the
// output so far and exits 130.
func TestRunInterrupt(t *testing.T) {
	lane.Live(t)
	bin := buildBinary(t)
	home := t.TempDir()
	cmd := exec.Command(bin, "run", "--root", t.TempDir(), "--", "sleep 300.07 & echo started; sleep 200")
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
	_ = line
	background := findProc(t, "sleep", "300.07")
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
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(background, 0) == nil && !zombie(background) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if syscall.Kill(background, 0) == nil && !zombie(background) {
		t.Errorf("background pid %d survived Ctrl-C", background)
	}
}

// findProc waits for the process whose command line is exactly argv and
// returns its PID as this process sees it: in the sandbox, commands only know
// their own PID namespace's numbers.
func findProc(t *testing.T, argv ...string) int {
	t.Helper()
	want := strings.Join(argv, "\x00") + "\x00"
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			if b, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline"); string(b) == want && !zombie(pid) {
				return pid
			}
		}
	}
	t.Fatalf("no process %q", argv)
	return 0
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
