//go:build linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// On a terminal an "ask" verdict prompts: yes runs the command, no refuses it.
// util-linux's script gives the real binary a pseudo-terminal and types the answer.
func TestRunPromptsOnTerminal(t *testing.T) {
	if _, err := exec.LookPath("script"); err != nil {
		t.Skip("needs script (util-linux)")
	}
	bin := buildBinary(t)
	for _, tt := range []struct {
		answer  string
		created bool
		prompt  string
	}{
		{"y", true, "Allow? [y]es / [n]o / [a]lways for commands covered by \"touch *\""},
		{"n", false, "Not approved"},
	} {
		t.Run(tt.answer, func(t *testing.T) {
			root, home := t.TempDir(), t.TempDir()
			cfg := filepath.Join(t.TempDir(), "ask.toml")
			if err := os.WriteFile(cfg, []byte("[policy]\nask = [\"touch *\"]\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			line := bin + " run --no-user-config --root " + root + " --config " + cfg + " -- touch made"
			cmd := exec.Command("script", "-qec", line, "/dev/null")
			cmd.Env = append(os.Environ(), "HOME="+home)
			cmd.Stdin = strings.NewReader(tt.answer + "\n")
			done := make(chan struct{})
			var out []byte
			var err error
			go func() { out, err = cmd.CombinedOutput(); close(done) }()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				cmd.Process.Kill()
				t.Fatal("no answer to the prompt")
			}
			_, statErr := os.Stat(filepath.Join(root, "made"))
			if created := statErr == nil; created != tt.created || !strings.Contains(string(out), tt.prompt) {
				t.Errorf("answer %q: created %v (err %v), output:\n%s", tt.answer, created, err, out)
			}
		})
	}
}
