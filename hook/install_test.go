package hook

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// What is not the hook survives an install and uninstall byte for byte when the
// file is written as the agents write it: key order, numbers, escapes, unicode.
func TestInstallKeepsEverythingElse(t *testing.T) {
	original := `{
  "z": 1.50,
  "a": "\u003cb\u003e & é \"q\"",
  "n": null,
  "big": 12345678901234567890,
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {
            "type": "command",
            "command": "mine"
          }
        ]
      }
    ]
  },
  "empty": {},
  "list": []
}
`
	a, _ := Lookup("claude-code")
	in, err := a.Install([]byte(original), "shellgate hook claude-code")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(in), `"big": 12345678901234567890`) || !strings.Contains(string(in), `"z": 1.50`) {
		t.Errorf("numbers changed:\n%s", in)
	}
	if strings.Index(string(in), `"z"`) > strings.Index(string(in), `"a"`) {
		t.Errorf("keys reordered:\n%s", in)
	}
	out, err := a.Uninstall(in)
	if err != nil {
		t.Fatal(err)
	}
	// The escapes come back as characters: the same JSON, written out.
	want := strings.Replace(original, `\u003cb\u003e`, `<b>`, 1)
	if string(out) != want {
		t.Errorf("round trip:\n%s\nwant\n%s", out, want)
	}
}

func TestOurs(t *testing.T) {
	a, _ := Lookup("gemini-cli")
	for cmd, want := range map[string]bool{
		"shellgate hook gemini-cli":                                  true,
		"/usr/local/bin/shellgate hook gemini-cli":                   true,
		"'/opt/my tools/shellgate' hook gemini-cli --mode never":     true,
		`"C:\Program Files\shellgate\shellgate.exe" hook gemini-cli`: true,
		"shellgate hook claude-code":                                 false,
		"shellgate hook gemini-cli-extra":                            false,
		"notshellgatex hook gemini-cli":                              false,
		"shellgate check -- hook gemini-cli":                         false,
		"my-guard.sh":                                                false,
		"":                                                           false,
	} {
		h := newObject()
		h.set("command", cmd)
		if got := a.ours(h); got != want {
			t.Errorf("ours(%q) = %v, want %v", cmd, got, want)
		}
	}
}

func TestInstallRefusesOtherShapes(t *testing.T) {
	a, _ := Lookup("cursor")
	for _, data := range []string{`[]`, `{"hooks": 1}`, `{"hooks": {"beforeShellExecution": {}}}`, `{"a": 1} {"b": 2}`, `{"a": }`} {
		if _, err := a.Install([]byte(data), "shellgate hook cursor"); err == nil {
			t.Errorf("%s: no error", data)
		}
	}
}

// `shellgate install AGENT` on an empty file writes what docs/clients.md shows,
// under the heading of the agent's section.
func TestInstallWritesWhatDocsShow(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "clients.md"))
	if err != nil {
		t.Fatal(err)
	}
	for name, heading := range map[string]string{"codex": "## Codex\n", "gemini-cli": "## Gemini CLI\n", "cursor": "## Cursor\n"} {
		a, _ := Lookup(name)
		got, err := a.Install(nil, "/usr/local/bin/shellgate hook "+name)
		if err != nil {
			t.Fatal(err)
		}
		_, section, ok := strings.Cut(string(doc), heading)
		_, block, ok2 := strings.Cut(section, "```json\n")
		block, _, ok3 := strings.Cut(block, "```")
		if !ok || !ok2 || !ok3 {
			t.Fatalf("%s: docs/clients.md has no JSON block under %q", name, heading)
		}
		var want, have any
		if json.Unmarshal([]byte(block), &want) != nil || json.Unmarshal(got, &have) != nil || !reflect.DeepEqual(want, have) {
			t.Errorf("%s: install writes\n%s\ndocs/clients.md shows\n%s", name, got, block)
		}
	}
}

// The user settings are where the agent reads them: Codex's in $CODEX_HOME
// when it is set.
func TestUserSettings(t *testing.T) {
	env := func(k string) string { return map[string]string{"CODEX_HOME": "/srv/codex"}[k] }
	none := func(string) string { return "" }
	for _, tc := range []struct {
		agent  string
		getenv func(string) string
		want   string
	}{
		{"codex", none, "/home/u/.codex/hooks.json"},
		{"codex", env, "/srv/codex/hooks.json"},
		{"claude-code", env, "/home/u/.claude/settings.json"},
	} {
		a, _ := Lookup(tc.agent)
		if got := a.UserSettings("/home/u", tc.getenv); got != filepath.FromSlash(tc.want) {
			t.Errorf("%s: %s, want %s", tc.agent, got, tc.want)
		}
	}
}
