package hook_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/config"
	"github.com/shellgate/shellgate/hook"
	"github.com/shellgate/shellgate/policy"
)

// BenchmarkHandleClaudeCode is the decision a hook process makes, in process: read
// the payload, load the configuration, build the policy and check the command, as
// `shellgate hook claude-code` does once per run. The rest of a hook's time is the
// process start (BenchmarkHookClaudeCode in cmd/shellgate).
//
//	go test -run '^$' -bench HandleClaudeCode ./hook
func BenchmarkHandleClaudeCode(b *testing.B) {
	root := b.TempDir()
	b.Setenv("HOME", b.TempDir())
	b.Setenv("XDG_CONFIG_HOME", b.TempDir())
	b.Setenv(shellgate.AuditLogEnv, "off")
	data, err := os.ReadFile(filepath.Join("testdata", "claude-code-bash.json"))
	if err != nil {
		b.Fatal(err)
	}
	var m map[string]any
	json.Unmarshal(data, &m)
	m["cwd"] = root
	m["tool_input"].(map[string]any)["command"] = "git status && go test ./... | tee out.txt"
	payload, _ := json.Marshal(m)
	a, _ := hook.Lookup("claude-code")
	decide := func(c *hook.Call) (policy.Verdict, error) {
		cfg, _, err := config.Load(config.LoadOptions{Root: c.Dir})
		if err != nil {
			return policy.Verdict{}, err
		}
		return a.Decide(cfg, *c)
	}
	for b.Loop() {
		res := a.Handle(bytes.NewReader(payload), os.Getenv, decide)
		// It writes out.txt and runs the tests, with no sandbox behind the
		// hook: left to Claude Code's own permission flow, no output.
		if res.Exit != 0 || len(res.Stdout) != 0 {
			b.Fatalf("%s %s", res.Stdout, res.Stderr)
		}
	}
}

// BenchmarkDecideAuditLog is what logging a hook's decision costs (opening the
// log, one line, the fsync at close), beside the same decision unlogged.
//
//	go test -run '^$' -bench DecideAuditLog ./hook
func BenchmarkDecideAuditLog(b *testing.B) {
	root := b.TempDir()
	a, _ := hook.Lookup("gemini-cli")
	c := hook.Call{Shell: true, Command: "git status && go test ./...", Dir: root}
	for _, tc := range []struct {
		name  string
		audit shellgate.AuditConfig
	}{{"off", shellgate.AuditConfig{Off: true}}, {"logged", shellgate.AuditConfig{Path: filepath.Join(b.TempDir(), "audit.jsonl")}}} {
		b.Run(tc.name, func(b *testing.B) {
			cfg := shellgate.Config{Root: root, Audit: tc.audit}
			for b.Loop() {
				if _, err := a.Decide(cfg, c); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
