//go:build linux

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shellgate/shellgate/internal/lane"

	"github.com/creack/pty"
)

// On a terminal an "ask" verdict prompts: yes runs the command, no refuses it,
// in as many words (not the model's "the user declined …; do not retry").
// The real binary runs on a pseudo-terminal that is its controlling terminal,
// as in a shell; the test answers when the prompt appears.
func TestRunPromptsOnTerminal(t *testing.T) {
	lane.Live(t)
	bin := buildBinary(t)
	for _, tt := range []struct {
		sub     string
		answer  string
		created bool
		prompt  string
	}{
		{"run", "y", true, "Allow? [y]es / [n]o / [a]lways for commands covered by \"touch *\""},
		{"run", "n", false, "shellgate: Not run: you declined it.\r\n"},
		{"exec", "n", false, "shellgate: Not run: you declined it.\r\n"},
	} {
		t.Run(tt.sub+"/"+tt.answer, func(t *testing.T) {
			root, home := t.TempDir(), t.TempDir()
			cfg := filepath.Join(t.TempDir(), "ask.toml")
			if err := os.WriteFile(cfg, []byte("[policy]\nask = [\"touch *\"]\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(bin, tt.sub, "--no-user-config", "--root", root, "--config", cfg, "--", "touch made")
			cmd.Env = append(os.Environ(), "HOME="+home)
			cmd.Dir = root              // exec runs in its working directory
			term, err := pty.Start(cmd) // a new session whose controlling terminal is term
			if err != nil {
				t.Fatal(err)
			}
			defer term.Close()
			stop := time.AfterFunc(20*time.Second, func() { cmd.Process.Kill() })
			defer stop.Stop()
			var out bytes.Buffer
			answered := false
			buf := make([]byte, 4096)
			for {
				n, err := term.Read(buf)
				out.Write(buf[:n])
				if !answered && strings.Contains(out.String(), "Allow?") {
					term.Write([]byte(tt.answer + "\n"))
					answered = true
				}
				if err != nil { // EIO: the binary has exited and closed the terminal
					break
				}
			}
			waitErr := cmd.Wait()
			_, statErr := os.Stat(filepath.Join(root, "made"))
			if created := statErr == nil; !answered || created != tt.created || !strings.Contains(out.String(), tt.prompt) ||
				strings.Contains(out.String(), "retry") {
				t.Errorf("answer %q: asked %v, created %v (exit %v), terminal:\n%s", tt.answer, answered, created, waitErr, out.String())
			}
		})
	}
}

// On a terminal, --json is indented for the person reading it.
func TestJSONIndentedOnTerminal(t *testing.T) {
	master, tty, err := pty.Open()
	if err != nil {
		t.Skip("no pseudo-terminal: ", err)
	}
	defer master.Close()
	defer tty.Close()
	writeJSON(tty, map[string]any{"status": "success", "data": map[string]any{"stdout": "hi\n"}})
	buf := make([]byte, 4096)
	n, _ := master.Read(buf)
	if got := string(buf[:n]); !strings.Contains(got, "{\r\n  \"data\": {\r\n    \"stdout\": ") {
		t.Errorf("on a terminal: %q", got)
	}
}
