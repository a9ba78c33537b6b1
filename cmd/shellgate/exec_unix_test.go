//go:build unix

package main

import (
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shellgate/shellgate/internal/runner/ordertest"
)

// streamPair makes the two ends of one stream as kind says: a pipe, or a
// socket pair as Node gives a child's stdio (Claude Code's hook commands and
// stdio MCP servers). Our end is non-blocking, for ordertest.Check.
func streamPair(t *testing.T, kind string) (ours, theirs *os.File) {
	t.Helper()
	if kind == "pipe" {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close(); w.Close() })
		return r, w
	}
	syscall.ForkLock.RLock()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err == nil {
		syscall.CloseOnExec(fds[0])
		syscall.CloseOnExec(fds[1])
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		t.Fatal(err)
	}
	syscall.SetNonblock(fds[0], true)
	ours, theirs = os.NewFile(uintptr(fds[0]), "ours"), os.NewFile(uintptr(fds[1]), "theirs")
	t.Cleanup(func() { ours.Close(); theirs.Close() })
	return ours, theirs
}

// startExec starts `shellgate exec` in a fresh root with stdout and stderr of
// kind; it returns our ends of them. The caller waits for cmd.
func startExec(t *testing.T, bin, kind string, args ...string) (cmd *exec.Cmd, stdout, stderr *os.File) {
	t.Helper()
	root := t.TempDir()
	stdout, outW := streamPair(t, kind)
	stderr, errW := streamPair(t, kind)
	cmd = exec.Command(bin, append([]string{"exec", "--root", root}, args...)...)
	cmd.Dir = root
	cmd.Env = hookEnv(t)
	cmd.Stdout, cmd.Stderr = outW, errW // files: the child's own, as an agent gives them
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	outW.Close()
	errW.Close()
	return cmd, stdout, stderr
}

// Given two pipes or two sockets, as agents give their commands, the command
// run by shellgate exec writes into them itself: what it printed to stderr
// before a line on stdout can be read before that line, as without
// shellgate (relayed by two pumps, stdout overtook stderr).
func TestExecKeepsTheOrderOfTwoStreams(t *testing.T) {
	bin := execBinary(t)
	for _, kind := range []string{"pipe", "socket"} {
		t.Run(kind, func(t *testing.T) {
			for round := range 3 {
				cmd, stdout, stderr := startExec(t, bin, kind, ordertest.Script)
				checked := ordertest.Check(stdout, stderr)
				if err := cmd.Wait(); err != nil {
					t.Fatalf("exec: %v", err)
				}
				if checked != nil {
					t.Fatalf("round %d: %v", round, checked)
				}
			}
		})
	}
}

// A job the command leaves holding stdout does not keep shellgate exec
// running, nor the agent reading stdout to its end: exec returns when the
// command exits, and its Gate's Close ends the job (the sandbox's session
// with it; without the sandbox its process group, or its marker after
// setsid), so the reader sees EOF then.
func TestExecReturnsWhileAJobHoldsStdout(t *testing.T) {
	bin := execBinary(t)
	for _, tc := range []struct{ name, sandbox, job string }{
		{"sandbox", "auto", "sleep 100 &"},
		{"sandbox, setsid", "auto", "setsid sleep 100 &"},
		{"no sandbox", "off", "sleep 100 &"},
		{"no sandbox, setsid", "off", "setsid sleep 100 &"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			cmd, stdout, stderr := startExec(t, bin, "pipe", "--sandbox", tc.sandbox, tc.job+" echo hi")
			read := make(chan string, 2)
			for _, f := range []*os.File{stdout, stderr} {
				go func() {
					b, _ := io.ReadAll(f)
					read <- string(b)
				}()
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			for _, what := range []string{"exit", "EOF", "EOF"} {
				select {
				case err := <-exited:
					if err != nil {
						t.Errorf("exec: %v", err)
					}
				case got := <-read:
					if got != "hi\n" && got != "" || strings.Contains(got, "shellgate") {
						t.Errorf("read %q", got)
					}
				case <-time.After(20 * time.Second):
					t.Fatalf("no %s after %s: the job holds it", what, time.Since(start))
				}
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %s", d)
			}
		})
	}
}
