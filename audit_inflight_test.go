package shellgate_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/shellgate/shellgate/internal/lane"

	"github.com/shellgate/shellgate"
)

// resultLines are the lines that record what came of a request (one a request).
func resultLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range auditLines(t, path) {
		if l["event"] == "result" {
			out = append(out, l)
		}
	}
	return out
}

// A command that runs has its decision logged before it starts, so that one in
// flight when shellgate is killed (kill -9 leaves no time for the result line)
// still has a line; the result line follows, with the same call id. The
// description is logged with both.
func TestAuditDecisionBeforeRunning(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	g := gate(t, shellgate.Config{Root: l.root, Audit: shellgate.AuditConfig{Path: path}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		g.Run(ctx, shellgate.Request{Command: "sleep 60", Description: "wait a minute; token=sk-live-9f8e7d6c5b4a39281706"})
	}()
	var decision map[string]any
	for deadline := time.Now().Add(20 * time.Second); decision == nil; time.Sleep(10 * time.Millisecond) {
		for _, line := range auditLines(t, path) {
			if line["command"] == "sleep 60" {
				decision = line
			}
		}
		if decision == nil && time.Now().After(deadline) {
			t.Fatal("nothing in the audit log while the command runs")
		}
	}
	cancel()
	<-done
	if decision["event"] != "decision" || decision["decision"] != "allow" || decision["status"] != "" || decision["call"] == "" || decision["call"] == nil {
		t.Errorf("the line written while it ran: %v", decision)
	}
	if d, _ := decision["description"].(string); d != "wait a minute; token=[REDACTED]" {
		t.Errorf("description %q in the decision line", decision["description"])
	}
	results := resultLines(t, path)
	if len(results) != 1 {
		t.Fatalf("%d result lines, want 1: %v", len(results), auditLines(t, path))
	}
	if r := results[0]; r["call"] != decision["call"] || (r["cancelled"] != true && r["error"] != "CANCELLED") || r["description"] != decision["description"] {
		t.Errorf("result line %v\nafter decision %v", r, decision)
	}
	// A refused request runs nothing: its one line is the result.
	run(t, g, shellgate.Request{Command: "sudo id"})
	lines := auditLines(t, path)
	if last := lines[len(lines)-1]; len(lines) != 3 || last["event"] != "result" || last["decision"] != "deny" {
		t.Errorf("a refused request: %v", lines)
	}
}
