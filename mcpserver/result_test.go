package mcpserver

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/shellgate/shellgate/internal/lane"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/shellgate/shellgate/envelope"
)

func TestFit(t *testing.T) {
	lane.Live(t)
	zero := 0
	tests := []struct {
		name    string
		stdout  string
		stderr  string
		command string
		wantCut bool
	}{
		{"small", "hi\n", "", "echo hi", false},
		{"big stdout", strings.Repeat("line of text\n", 200000), "", "make", true},
		{"escapes inflate", strings.Repeat("\x1b[0m", 100000), strings.Repeat("\x00", 50000), "tput", true},
		{"multibyte", strings.Repeat("héllo wörld ✓\n", 100000), "", "cat", true},
		{"huge command", "", "", "echo " + strings.Repeat("x", 2<<20), false},
	}
	for _, tc := range tests {
		for _, structured := range []bool{true, false} {
			t.Run(tc.name, func(t *testing.T) {
				env := envelope.Envelope{Data: envelope.Data{Command: tc.command, Stdout: tc.stdout, Stderr: tc.stderr, ExitCode: &zero},
					Stats:   envelope.Stats{StdoutBytes: int64(len(tc.stdout)), StderrBytes: int64(len(tc.stderr))},
					Context: envelope.Context{ParamsInput: map[string]any{"command": tc.command}}}
				env.Note("Full stderr: /tmp/x")
				env.Settle()
				res, err := toolResult(env, MaxMessage, structured, 0, envelope.Known{})
				if err != nil {
					t.Fatal(err)
				}
				b, err := json.Marshal(res)
				if err != nil {
					t.Fatal(err)
				}
				if len(b) > MaxMessage-1024 {
					t.Errorf("result is %d bytes, want at most %d", len(b), MaxMessage-1024)
				}
				text := res.Content[0].(*mcp.TextContent).Text
				if !strings.Contains(text, "[Full stderr: /tmp/x]") {
					t.Error("the Gate's notes were lost from the text")
				}
				if cut := strings.Contains(text, "Output cut further"); cut != tc.wantCut {
					t.Errorf("text says cut: %v", cut)
				}
				if !utf8.ValidString(text) {
					t.Errorf("cut produced invalid UTF-8")
				}
				if !structured {
					if res.StructuredContent != nil {
						t.Error("structuredContent in text-only mode")
					}
					return
				}
				var got envelope.Envelope
				if err := json.Unmarshal(res.StructuredContent.(json.RawMessage), &got); err != nil {
					t.Fatal(err)
				}
				if got.Data.Truncated != tc.wantCut {
					t.Errorf("truncated = %v, want %v", got.Data.Truncated, tc.wantCut)
				}
				if tc.wantCut && got.Status == envelope.Success {
					t.Error("a cut result reported success")
				}
				for _, s := range []string{got.Data.Stdout, got.Data.Stderr, got.Text, got.Data.Command} {
					if !utf8.ValidString(s) {
						t.Errorf("cut produced invalid UTF-8")
					}
				}
			})
		}
	}
}

func TestCutMiddle(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"abcdef", 10, "abcdef"},
		{"abcdefghij", 4, "ab\n[… 6 bytes cut …]\nij"},
		{"ééééé", 4, "é\n[… 6 bytes cut …]\né"},
		{"abc", 0, "\n[… 3 bytes cut …]\n"},
	}
	for _, tc := range tests {
		if got := envelope.CutMiddle(tc.in, tc.n); got != tc.want {
			t.Errorf("CutMiddle(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}
