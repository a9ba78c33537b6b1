//go:build linux && !shellgate_nomcp

package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shellgate/shellgate/internal/lane"

	"github.com/creack/pty"
)

// Started by hand on a terminal, `shellgate mcp` says what it waits for and
// how to end it (it waited in silence), and Ctrl-D ends it; on a pipe, as an
// agent starts it, it says nothing.
func TestMCPOnTerminalSaysWhatItWaitsFor(t *testing.T) {
	lane.Live(t)
	bin := buildBinary(t)
	root, home := t.TempDir(), t.TempDir()
	cmd := exec.Command(bin, "mcp", "--no-user-config", "--sandbox", "off", "--root", root)
	cmd.Env = append(os.Environ(), "HOME="+home)
	term, err := pty.Start(cmd)
	if err != nil {
		t.Skip("no pseudo-terminal: ", err)
	}
	defer term.Close()
	stop := time.AfterFunc(20*time.Second, func() { cmd.Process.Kill() })
	defer stop.Stop()
	var out bytes.Buffer
	buf := make([]byte, 4096)
	sent := false
	for {
		n, err := term.Read(buf)
		out.Write(buf[:n])
		if !sent && strings.Contains(out.String(), "Ctrl-D ends it.") {
			term.Write([]byte{4}) // Ctrl-D: end of input
			sent = true
		}
		if err != nil { // EIO: the server has exited and closed the terminal
			break
		}
	}
	err = cmd.Wait()
	if errors.Is(err, syscall.ECHILD) {
		// This test binary becomes a subreaper once a test runs cmdRun, cmdExec
		// or cmdMCP in process (shellgate.Subreap), and a subreaper reaps a
		// child in a session of its own when it exits, as Subreap's doc says:
		// the exit status is lost, not the exit (seen once under load).
		err = nil
	}
	if err != nil || !sent ||
		!strings.Contains(out.String(), "shellgate mcp: waiting for an MCP client's JSON-RPC on stdin (tool run_shell_command, root "+root+")") {
		t.Errorf("shellgate mcp on a terminal: exit %v, Ctrl-D sent %v, terminal:\n%s", err, sent, out.String())
	}

	quiet := exec.Command(bin, "mcp", "--no-user-config", "--sandbox", "off", "--root", root)
	quiet.Env = cmd.Env
	quiet.Stdin = strings.NewReader("")
	var stderr bytes.Buffer
	quiet.Stderr = &stderr
	if err := quiet.Run(); err != nil || stderr.Len() != 0 {
		t.Errorf("shellgate mcp on a pipe: exit %v, stderr %q", err, stderr.String())
	}
}
