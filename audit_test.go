package shellgate_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/shellgate/shellgate/internal/lane"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/envelope"
)

// auditLines reads the audit log at path, one JSON object a line.
func auditLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	must(t, err)
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("audit line is not JSON: %v: %q", err, sc.Text())
		}
		out = append(out, m)
	}
	return out
}

// asJSON is v as it reads back from JSON, to compare with a decoded line.
func asJSON(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	must(t, err)
	var out any
	must(t, json.Unmarshal(b, &out))
	return out
}

// Every request is one line saying what was asked and what came of it: an allowed
// command, a refused one, an approved one, an invalid request, one with a bad
// directory.
func TestAuditEveryRequest(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	cfg := shellgate.Config{Root: l.root, Audit: shellgate.AuditConfig{Path: path}}
	cfg.Policy.Ask = []string{"touch *"}
	g := gate(t, cfg)
	approve := shellgate.WithApprover(func(context.Context, shellgate.Question) shellgate.Answer { return shellgate.AllowOnce })

	tests := []struct {
		req  shellgate.Request
		opts []shellgate.Option
		want map[string]any
	}{
		{shellgate.Request{Command: "echo hi; echo oops >&2; exit 3", Directory: "sub"}, nil, map[string]any{
			"decision": "allow", "rule": "", "status": "partial", "error": "", "exit_code": 3.0, "directory": "sub",
			"stdout_bytes": 3.0, "stderr_bytes": 5.0, "approved": ""}},
		{shellgate.Request{Command: "sudo id"}, nil, map[string]any{
			"decision": "deny", "rule": "privilege", "status": "error", "error": "POLICY_DENIED", "exit_code": nil,
			"sandboxed": nil, "stdout_bytes": 0.0}},
		{shellgate.Request{Command: "touch approved"}, []shellgate.Option{approve}, map[string]any{
			"decision": "ask", "approved": "once", "status": "success", "exit_code": 0.0}},
		{shellgate.Request{Command: "touch refused"}, nil, map[string]any{
			"decision": "ask", "approved": "", "status": "error", "error": "APPROVAL_REQUIRED"}},
		{shellgate.Request{Command: "   "}, nil, map[string]any{
			"decision": "", "status": "error", "error": "INVALID_PARAM", "command": "   "}},
		{shellgate.Request{Command: "pwd", Directory: "../outside"}, nil, map[string]any{
			"decision": "", "status": "error", "error": "ACCESS_DENIED", "directory": "../outside"}},
		{shellgate.Request{Command: "sleep 5", Timeout: 200_000_000}, nil, map[string]any{
			"decision": "allow", "timed_out": true, "signal": "SIGTERM"}},
	}
	for i, tt := range tests {
		env := run(t, g, tt.req, tt.opts...)
		lines := resultLines(t, path)
		if len(lines) != i+1 {
			t.Fatalf("%q: %d lines after %d requests", tt.req.Command, len(lines), i+1)
		}
		got := lines[i]
		want := map[string]any{
			"command": tt.req.Command, "command_bytes": float64(len(tt.req.Command)), "root": l.root, "session": "",
			"pid": float64(os.Getpid()), "sandboxed": asJSON(t, env.Context.Sandbox), "status": string(env.Status),
			"truncated": false, "cancelled": false, "timed_out": false,
		}
		for k, v := range tt.want {
			want[k] = v
		}
		for k, v := range want {
			if g := asJSON(t, got[k]); !jsonEqual(t, g, v) {
				t.Errorf("%q: %s = %v, want %v", tt.req.Command, k, got[k], v)
			}
		}
		if d, ok := got["duration_ms"].(float64); !ok || d < float64(env.Stats.TimeMS) {
			t.Errorf("%q: duration_ms %v, the command alone took %d", tt.req.Command, got["duration_ms"], env.Stats.TimeMS)
		}
	}
	// Checking is not a request: nothing is written.
	g.Check(shellgate.Request{Command: "echo checked"})
	if n := len(resultLines(t, path)); n != len(tests) {
		t.Errorf("Check wrote to the audit log: %d lines", n)
	}
}

func jsonEqual(t *testing.T, a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

// A secret in a command is not in the log; the command's output is never there.
func TestAuditRedactsAndKeepsNoOutput(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	g := gate(t, shellgate.Config{Root: l.root, Audit: shellgate.AuditConfig{Path: path}})
	const key = "sk-live-9f8e7d6c5b4a39281706"
	env := run(t, g, shellgate.Request{Command: "OPENAI_API_KEY=" + key + " printenv OPENAI_API_KEY; echo output-marker-42"})
	if env.Status != envelope.Success || !strings.Contains(env.Data.Stdout, key) {
		t.Fatalf("the command did not run as given: %s", env.Text)
	}
	data, err := os.ReadFile(path)
	must(t, err)
	if strings.Contains(string(data), key) || strings.Contains(string(data), "9f8e7d6c5b4a") {
		t.Errorf("the secret is in the audit log:\n%s", data)
	}
	if strings.Contains(string(data), "output-marker-42\n") || strings.Count(string(data), "output-marker-42") != 2 { // the decision and the result
		t.Errorf("the output is in the audit log, or the command is not:\n%s", data)
	}
	if !strings.Contains(string(data), `"command":"OPENAI_API_KEY=[REDACTED] printenv`) {
		t.Errorf("the command is not recorded redacted:\n%s", data)
	}
}

// The log is opened by the first request, not by New or Check (shellgate check
// must not pay for it), and closed by Close.
func TestAuditOpensLazily(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	dir := filepath.Join(t.TempDir(), "state")
	path := filepath.Join(dir, "audit.jsonl")
	g, err := shellgate.New(shellgate.Config{Root: l.root, SpillDir: t.TempDir(), Audit: shellgate.AuditConfig{Path: path}})
	must(t, err)
	g.Check(shellgate.Request{Command: "echo hi"})
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("New or Check made the audit log's directory: %v", err)
	}
	run(t, g, shellgate.Request{Command: "true"})
	must(t, g.Close())
	if n := len(resultLines(t, path)); n != 1 {
		t.Errorf("%d lines, want 1", n)
	}
}

// A log that cannot be written never fails a command and leaves its envelope as
// it would be; the first failure is reported once.
func TestAuditFailureDoesNotFailCommands(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	notDir := filepath.Join(t.TempDir(), "file")
	must(t, os.WriteFile(notDir, nil, 0o600))
	var reported []error
	g := gate(t, shellgate.Config{Root: l.root, Audit: shellgate.AuditConfig{
		Path: filepath.Join(notDir, "audit.jsonl"), OnError: func(err error) { reported = append(reported, err) }}})
	for range 3 {
		env := run(t, g, shellgate.Request{Command: "echo hi"})
		if env.Status != envelope.Success || env.Error != nil || strings.Contains(strings.ToLower(env.Text), "audit") {
			t.Errorf("the audit failure shows in the envelope: %s %+v\n%s", env.Status, env.Error, env.Text)
		}
	}
	if len(reported) != 1 || !strings.Contains(reported[0].Error(), "not a directory") {
		t.Errorf("reported %v, want the one failure, once", reported)
	}
}

// Off, the environment's default, and the user's state directory.
func TestAuditWhere(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	envPath := filepath.Join(t.TempDir(), "from-env.jsonl")
	t.Setenv(shellgate.AuditLogEnv, envPath)

	g := gate(t, shellgate.Config{Root: l.root, Audit: shellgate.AuditConfig{Off: true}})
	run(t, g, shellgate.Request{Command: "true"})
	if _, err := os.Stat(envPath); !os.IsNotExist(err) {
		t.Errorf("Off still wrote a log: %v", err)
	}
	g = gate(t, shellgate.Config{Root: l.root})
	run(t, g, shellgate.Request{Command: "true"})
	if n := len(resultLines(t, envPath)); n != 1 {
		t.Errorf("$%s: %d lines, want 1", shellgate.AuditLogEnv, n)
	}

	if runtime.GOOS != "linux" {
		return
	}
	state := t.TempDir()
	t.Setenv(shellgate.AuditLogEnv, "")
	t.Setenv("XDG_STATE_HOME", state)
	g = gate(t, shellgate.Config{Root: l.root})
	run(t, g, shellgate.Request{Command: "true"})
	if n := len(resultLines(t, filepath.Join(state, "shellgate", "audit.jsonl"))); n != 1 {
		t.Errorf("default path: %d lines, want 1", n)
	}
	if fi, err := os.Stat(filepath.Join(state, "shellgate")); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("state dir: %v %v", fi.Mode(), err)
	}

	if _, err := shellgate.New(shellgate.Config{Root: l.root, Audit: shellgate.AuditConfig{Keep: -1}}); err == nil || !strings.Contains(err.Error(), "keep") {
		t.Errorf("a bad Keep: %v", err)
	}
}

// TestAuditRefusalFlood: a flood of refused requests does not rotate the
// earlier lines out of the log (9 800 refused calls erased every file): past
// a burst, refusals are counted into summary lines, and the command that ran
// before the flood is still there after it.
func TestAuditRefusalFlood(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	g := gate(t, shellgate.Config{Root: l.root, Audit: shellgate.AuditConfig{Path: path, MaxBytes: 64 << 10, Keep: 2}})
	run(t, g, shellgate.Request{Command: "echo evidence-before-the-flood"})
	const flood = 2000
	for i := range flood {
		env := run(t, g, shellgate.Request{Command: fmt.Sprintf("sudo rm -rf /srv/%d", i)})
		if env.Error == nil || env.Error.Code != envelope.PolicyDenied {
			t.Fatalf("not refused: %s", env.Text)
		}
	}
	must(t, g.Close())
	var all []map[string]any
	for _, p := range []string{path + ".2", path + ".1", path} {
		all = append(all, auditLines(t, p)...)
	}
	evidence, full, summarized := false, 0, 0
	for _, e := range all {
		switch {
		case e["command"] == "echo evidence-before-the-flood":
			evidence = true
		case e["event"] == "refused" && e["count"] != nil:
			summarized += int(e["count"].(float64))
		case e["error"] == "POLICY_DENIED":
			full++
		}
	}
	if !evidence {
		t.Errorf("the flood of %d refusals rotated the earlier command out of the log", flood)
	}
	if full+summarized != flood {
		t.Errorf("%d refusals written in full and %d summarized, want %d in all", full, summarized, flood)
	}
}
