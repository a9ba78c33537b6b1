package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Settings files that already hold other hooks and settings, per agent.
var existingSettings = map[string]string{
	"claude-code": `{
  "permissions": {
    "allow": [
      "Bash(npm run lint)"
    ]
  },
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Write|Edit",
        "hooks": [
          {
            "type": "command",
            "command": "/home/user/bin/check-write.sh"
          }
        ]
      }
    ],
    "PostToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {
            "type": "command",
            "command": "audit-log",
            "timeout": 5
          }
        ]
      }
    ]
  },
  "model": "opus"
}
`,
	"gemini-cli": `{
  "general": {
    "vimMode": true
  },
  "hooks": {
    "BeforeTool": [
      {
        "matcher": "write_file|replace",
        "hooks": [
          {
            "name": "security-check",
            "type": "command",
            "command": "$GEMINI_PROJECT_DIR/.gemini/hooks/security.sh",
            "timeout": 5000
          }
        ]
      }
    ]
  }
}
`,
	"cursor": `{
  "version": 1,
  "hooks": {
    "afterFileEdit": [
      {
        "command": "./hooks/format.sh"
      }
    ],
    "beforeShellExecution": [
      {
        "command": "./hooks/audit.sh"
      }
    ]
  }
}
`,
}

func runInstall(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	code, stdout, stderr := cli(args...)
	return stdout, stderr, code
}

// install, install again, uninstall: the other hooks stay where they were, the
// second install changes nothing, and uninstall gives back the original file.
func TestInstallRoundTrip(t *testing.T) {
	for agent, original := range existingSettings {
		t.Run(agent, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "settings.json")
			if err := os.WriteFile(file, []byte(original), 0o600); err != nil {
				t.Fatal(err)
			}
			cmd := "/opt/bin/shellgate hook " + agent

			out, errs, code := runInstall(t, "install", agent, "--settings", file, "--command", cmd, "--dry-run")
			if code != 0 || !strings.Contains(out, "+") || !strings.Contains(out, "dry run") {
				t.Fatalf("dry run: exit %d, stdout %q, stderr %q", code, out, errs)
			}
			if b, _ := os.ReadFile(file); string(b) != original {
				t.Fatal("--dry-run wrote the file")
			}

			out, errs, code = runInstall(t, "install", agent, "--settings", file, "--command", cmd)
			if code != 0 {
				t.Fatalf("install: exit %d, stderr %q", code, errs)
			}
			for _, line := range strings.Split(out, "\n") {
				if strings.HasPrefix(line, "-") && !strings.HasPrefix(line, "---") && strings.TrimSpace(line[1:]) != "]" && strings.TrimSpace(line[1:]) != "}" {
					t.Errorf("install removed a line: %q\n%s", line, out)
				}
			}
			installed, _ := os.ReadFile(file)
			if fi, _ := os.Stat(file); fi.Mode().Perm() != 0o600 {
				t.Errorf("mode %v, want 0600 kept", fi.Mode().Perm())
			}
			var v map[string]any
			if err := json.Unmarshal(installed, &v); err != nil {
				t.Fatalf("not JSON after install: %v\n%s", err, installed)
			}
			if !strings.Contains(string(installed), `"command": "`+cmd+`"`) {
				t.Errorf("hook not added:\n%s", installed)
			}
			for _, keep := range []string{"check-write.sh", "audit-log", "security.sh", "format.sh", "audit.sh"} {
				if strings.Contains(original, keep) && !strings.Contains(string(installed), keep) {
					t.Errorf("lost %s:\n%s", keep, installed)
				}
			}

			out, _, code = runInstall(t, "install", agent, "--settings", file, "--command", "shellgate hook "+agent)
			if code != 0 || !strings.Contains(out, "nothing to change") {
				t.Errorf("second install: exit %d, %q", code, out)
			}

			_, errs, code = runInstall(t, "uninstall", agent, "--settings", file)
			if code != 0 {
				t.Fatalf("uninstall: exit %d, stderr %q", code, errs)
			}
			if b, _ := os.ReadFile(file); string(b) != original {
				t.Errorf("uninstall did not give back the original:\n%s\nwant\n%s", b, original)
			}
		})
	}
}

// After an install (a first or a repeated one) the user is told what the
// settings diff does not show: that what a hook allows runs without
// shellgate's sandbox and checkpoints, and each agent's catch (Codex skips an
// untrusted hook without a word). Not on --dry-run or uninstall.
func TestInstallSaysWhatTheHookDoesNot(t *testing.T) {
	for _, tc := range []struct{ agent, want string }{
		{"claude-code", "leaves what may write to Claude Code's own permission prompt. For a sandbox and\ncheckpoints, run commands through shellgate exec (CLAUDE_CODE_SHELL_PREFIX)"},
		{"codex", "Codex runs a hook only once you trust it, and skips it without a word until then:\nstart codex, type /hooks"},
		{"gemini-cli", "What it allows runs in the agent's own shell, without\nshellgate's sandbox and checkpoints"},
		{"cursor", `install with --command "/opt/bin/shellgate hook cursor --mode never"`},
	} {
		file := filepath.Join(t.TempDir(), "settings.json")
		cmd := "/opt/bin/shellgate hook " + tc.agent
		if out, _, _ := runInstall(t, "install", tc.agent, "--settings", file, "--command", cmd, "--dry-run"); strings.Contains(out, "Note:") {
			t.Errorf("%s --dry-run has a note:\n%s", tc.agent, out)
		}
		for _, pass := range []string{"install", "install again"} {
			if out, errs, code := runInstall(t, "install", tc.agent, "--settings", file, "--command", cmd); code != 0 || !strings.Contains(out, tc.want) {
				t.Errorf("%s, %s: exit %d, stdout\n%s\nwant %q; stderr %s", tc.agent, pass, code, out, tc.want, errs)
			}
		}
		if out, _, _ := runInstall(t, "uninstall", tc.agent, "--settings", file); strings.Contains(out, "Note:") {
			t.Errorf("%s uninstall has a note:\n%s", tc.agent, out)
		}
	}
}

func TestInstallNewFileAndErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, ".cursor", "hooks.json")
	if _, errs, code := runInstall(t, "install", "cursor", "--settings", file, "--command", "shellgate hook cursor"); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	want := "{\n  \"version\": 1,\n  \"hooks\": {\n    \"beforeShellExecution\": [\n      {\n        \"command\": \"shellgate hook cursor\"\n      }\n    ]\n  }\n}\n"
	if b, _ := os.ReadFile(file); string(b) != want {
		t.Errorf("new file:\n%s\nwant\n%s", b, want)
	}
	if _, _, code := runInstall(t, "uninstall", "cursor", "--settings", file); code != 0 {
		t.Fatal("uninstall failed")
	}
	if b, _ := os.ReadFile(file); string(b) != "{\n  \"version\": 1\n}\n" {
		t.Errorf("after uninstall: %q", b)
	}

	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"hooks": [}`), 0o644)
	notObj := filepath.Join(dir, "hooks-array.json")
	os.WriteFile(notObj, []byte(`{"hooks": []}`), 0o644)
	usage := func(msg string) string { return msg + "; see `shellgate install -h`\n" }
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"install", "claude-code", "--settings", bad}, exitShellgate, "not valid JSON"},
		{[]string{"install", "claude-code", "--settings", notObj}, exitShellgate, `"hooks" is not a JSON object`},
		// Bad usage: one line, exit 64, as every command.
		{[]string{"install", "vscode", "--settings", bad}, exitUsage, usage(`shellgate install: unknown agent "vscode"; want one of claude-code, codex, cursor, gemini-cli`)},
		{[]string{"install"}, exitUsage, usage("shellgate install: no agent given; want one of claude-code, codex, cursor, gemini-cli")},
		{[]string{"install", "cursor", "--settings", bad, "--project"}, exitUsage, usage("shellgate install: --settings and --project both name the file; give one")},
		{[]string{"install", "cursor", "--bogus"}, exitUsage, usage("shellgate install: unknown flag --bogus")},
		{[]string{"install", "cursor", "extra"}, exitUsage, usage(`shellgate install: unexpected arguments ["extra"]`)},
	} {
		_, errs, code := runInstall(t, tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.want) || tc.code == exitUsage && errs != tc.want {
			t.Errorf("%v: exit %d, stderr %q; want %d, %q", tc.args, code, errs, tc.code, tc.want)
		}
	}
	if b, _ := os.ReadFile(bad); string(b) != `{"hooks": [}` {
		t.Error("a bad file was rewritten")
	}
}

// A settings file that is a symbolic link (to a dotfiles repository, say) is
// changed where it lives; the link stays a link.
func TestInstallThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "dotfiles", "settings.json")
	os.MkdirAll(filepath.Dir(real), 0o755)
	os.WriteFile(real, []byte(existingSettings["claude-code"]), 0o644)
	link := filepath.Join(dir, "settings.json")
	if err := os.Symlink(real, link); err != nil {
		t.Skip("no symlinks here:", err)
	}
	if _, errs, code := runInstall(t, "install", "claude-code", "--settings", link, "--command", "shellgate hook claude-code"); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v %v", fi.Mode(), err)
	}
	if b, _ := os.ReadFile(real); !strings.Contains(string(b), "shellgate hook claude-code") {
		t.Errorf("the linked file was not changed:\n%s", b)
	}
}

func TestUnifiedDiff(t *testing.T) {
	a := "1\n2\n3\n4\n5\n6\n7\n8\n9\n"
	b := "1\n2\nthree\n4\n5\n6\n7\n8\n9\nten\n"
	want := "--- f\n+++ f\n@@\n 1\n 2\n-3\n+three\n 4\n 5\n@@\n 8\n 9\n+ten\n"
	if got := unifiedDiff("f", a, b); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if got := unifiedDiff("f", "", "x\n"); got != "--- /dev/null\n+++ f\n@@\n+x\n" {
		t.Errorf("new file: %q", got)
	}
}
