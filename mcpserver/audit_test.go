package mcpserver

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shellgate/shellgate/internal/lane"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/shellgate/shellgate"
)

// A stdio (or in-memory) session's id in the audit log is its own, not a Go
// pointer that the next session may reuse; the description is logged.
func TestAuditSessionIDs(t *testing.T) {
	lane.Live(t)
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	srv, _ := newServer(t, shellgate.Config{Audit: shellgate.AuditConfig{Path: log}}, Options{})
	seen := map[string]bool{}
	for range 3 {
		cs := connect(t, srv, nil, nil)
		call(t, context.Background(), cs, &mcp.CallToolParams{Arguments: args("command", "true", "description", "nothing much")})
		cs.Close()
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var e struct{ Event, Session, Description string }
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(e.Session, "local-") || strings.HasPrefix(e.Session, "0x") {
			t.Errorf("session id %q", e.Session)
		}
		if e.Description != "nothing much" {
			t.Errorf("description %q", e.Description)
		}
		if e.Event == "result" {
			seen[e.Session] = true
		}
	}
	if len(seen) != 3 {
		t.Errorf("%d session ids for 3 sessions: %v", len(seen), seen)
	}
}
