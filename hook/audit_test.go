package hook

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shellgate/shellgate"
)

// A hook's decision is in the audit log (event "hook", with the agent): the
// agent's own shell runs the command, so nothing else records it.
func TestDecideLogsTheDecision(t *testing.T) {
	root := t.TempDir()
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	cfg := shellgate.Config{Root: root, Audit: shellgate.AuditConfig{Path: log}}
	for _, command := range []string{"sudo id", "ls"} {
		if _, err := geminiCLI.Decide(cfg, Call{Shell: true, Command: command, Dir: root}); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatalf("no audit log: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2:\n%s", len(lines), b)
	}
	for i, want := range []map[string]any{
		{"event": "hook", "agent": "gemini-cli", "command": "sudo id", "decision": "deny", "rule": "privilege"},
		{"event": "hook", "agent": "gemini-cli", "command": "ls", "decision": "allow"},
	} {
		var got map[string]any
		if err := json.Unmarshal([]byte(lines[i]), &got); err != nil {
			t.Fatal(err)
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("line %d: %s = %v, want %v\n%s", i, k, got[k], v, lines[i])
			}
		}
	}
}
