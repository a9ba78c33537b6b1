//go:build linux

package main

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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

// A `shellgate run` killed with SIGKILL cannot remove its own spill directory;
// the next run's sweep does, once it is past the grace of a new one, and
// leaves the one of a run still going.
func TestRunKilledSpillDirSwept(t *testing.T) {
	lane.Live(t)
	bin := buildBinary(t)
	home, tmp := t.TempDir(), t.TempDir()
	env := append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "TMPDIR="+tmp)
	spill := filepath.Join(tmp, "shellgate-spill-"+strconv.Itoa(os.Getuid()))
	start := func() (*exec.Cmd, string) {
		t.Helper()
		before, _ := filepath.Glob(filepath.Join(spill, "s-*"))
		cmd := exec.Command(bin, "run", "--root", t.TempDir(), "--", "echo started; sleep 200")
		cmd.Env = env
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() })
		if _, err := bufio.NewReader(stdout).ReadString('\n'); err != nil {
			t.Fatal(err)
		}
		after, _ := filepath.Glob(filepath.Join(spill, "s-*"))
		for _, d := range after {
			if !slices.Contains(before, d) {
				return cmd, d
			}
		}
		t.Fatalf("no spill directory of the run in %s: %v", spill, after)
		return nil, ""
	}
	killed, killedDir := start()
	syscall.Kill(-killed.Process.Pid, syscall.SIGKILL)
	killed.Wait()
	running, runningDir := start()
	defer syscall.Kill(-running.Process.Pid, syscall.SIGKILL)
	old := time.Now().Add(-2 * time.Minute)
	for _, d := range []string{killedDir, runningDir} {
		if err := os.Chtimes(d, old, old); err != nil {
			t.Fatal(err)
		}
	}
	next := exec.Command(bin, "run", "--root", t.TempDir(), "--", "true")
	next.Env = env
	if out, err := next.CombinedOutput(); err != nil {
		t.Fatalf("the next run: %v\n%s", err, out)
	}
	if _, err := os.Stat(killedDir); !os.IsNotExist(err) {
		t.Errorf("the killed run's spill directory is still there after the next run: %v", err)
	}
	if _, err := os.Stat(runningDir); err != nil {
		t.Errorf("the running run's spill directory was swept: %v", err)
	}
}
