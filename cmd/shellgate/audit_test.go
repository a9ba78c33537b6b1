package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shellgate/shellgate/internal/lane"

	"github.com/shellgate/shellgate"
)

// auditFile reads the result lines of the audit log at path.
func auditFile(t *testing.T, path string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%v: %q", err, line)
		}
		if m["event"] == "decision" { // the line before a command starts; its result follows
			continue
		}
		out = append(out, m)
	}
	return out
}

func TestRunAuditLog(t *testing.T) {
	lane.Live(t)
	log := filepath.Join(t.TempDir(), "a", "audit.jsonl")
	code, stdout, _ := runCLI(t, "--audit-log", log, "--", "echo hi")
	lines := auditFile(t, log)
	if code != 0 || stdout != "hi\n" || len(lines) != 1 || lines[0]["command"] != "echo hi" || lines[0]["decision"] != "allow" {
		t.Errorf("exit %d stdout %q, log %v", code, stdout, lines)
	}
	code, _, _ = runCLI(t, "--audit-log", log, "--", "sudo id")
	if lines = auditFile(t, log); code != exitShellgate || len(lines) != 2 || lines[1]["rule"] != "privilege" {
		t.Errorf("a refusal: exit %d, log %v", code, lines)
	}

	// off wins over the environment's default.
	envLog := filepath.Join(t.TempDir(), "env.jsonl")
	t.Setenv(shellgate.AuditLogEnv, envLog)
	runCLI(t, "--audit-log", "off", "--", "true")
	if auditFile(t, envLog) != nil {
		t.Errorf("--audit-log off wrote %s", envLog)
	}
	runCLI(t, "--", "true")
	if n := len(auditFile(t, envLog)); n != 1 {
		t.Errorf("$%s: %d lines, want 1", shellgate.AuditLogEnv, n)
	}

	// The default: the user state directory.
	t.Setenv(shellgate.AuditLogEnv, "")
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	runCLI(t, "--", "true")
	if n := len(auditFile(t, filepath.Join(state, "shellgate", "audit.jsonl"))); n != 1 {
		t.Errorf("default path: %d lines, want 1", n)
	}
}

// A log that cannot be written: the command runs as ever, and stderr says so once.
func TestRunAuditLogUnwritable(t *testing.T) {
	lane.Live(t)
	notDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, "--audit-log", filepath.Join(notDir, "audit.jsonl"), "--", "echo hi")
	if code != 0 || stdout != "hi\n" || strings.Count(stderr, "warning: audit log") != 1 || !strings.Contains(stderr, "Command succeeded") {
		t.Errorf("exit %d stdout %q stderr:\n%s", code, stdout, stderr)
	}
}

// The flag is on every command that runs something, and in its help.
func TestAuditLogFlagHelp(t *testing.T) {
	for _, cmd := range []string{"run", "mcp", "exec"} {
		var out, errb bytes.Buffer
		dispatch([]string{cmd, "-h"}, &out, &errb)
		if !strings.Contains(out.String()+errb.String(), "-audit-log FILE") {
			t.Errorf("shellgate %s -h does not show --audit-log:\n%s%s", cmd, out.String(), errb.String())
		}
	}
}

// The common flags name their values as the README does (--host-port N,
// --checkpoints on|off, --mode auto|untrusted|never, --root DIR), not with
// words taken from a back-quoted phrase nor the flag package's "string".
func TestCommonFlagPlaceholders(t *testing.T) {
	for _, cmd := range []string{"run", "check", "mcp", "doctor", "changes", "undo"} {
		var out, errb bytes.Buffer
		dispatch([]string{cmd, "-h"}, &out, &errb)
		help := out.String() + errb.String()
		wants := []string{"-checkpoints on|off\n", "-root DIR\n", "-config FILE\n"}
		if cmd != "changes" && cmd != "undo" { // they start no sandbox
			wants = append(wants, "-host-port N\n", "-sandbox auto|on|off\n", "-profile workspace-write|read-only|full-access\n")
		}
		if cmd != "changes" && cmd != "undo" && cmd != "doctor" {
			// "-mode string" said nothing of the three modes.
			wants = append(wants, "-mode auto|untrusted|never\n")
		}
		for _, want := range wants {
			if !strings.Contains(help, want) {
				t.Errorf("shellgate %s -h does not show %q:\n%s", cmd, strings.TrimSpace(want), help)
			}
		}
	}
}
