package hook

import (
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
