package mcpserver

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/internal/lane"
)

// What a model reads of common calls says each thing once: a job's start that
// it runs as a job, an ask that no one could approve it (not that the user
// must, then that no one could), a cut output where its whole is. Run with -v
// for the characters of each (the text content; a generic client).
func TestModelReadsOnce(t *testing.T) {
	lane.Live(t)
	ctx := context.Background()
	// As `shellgate mcp` is configured (config.Load names the user file).
	srv, _ := newServer(t, shellgate.Config{PolicyFile: "/home/u/.config/shellgate/config.toml"}, Options{})
	cs := connect(t, srv, nil, nil)
	calls := []struct {
		name  string
		args  map[string]any
		max   int      // characters
		want  []string // once each
		lacks []string
	}{
		{"echo hi", args("command", "echo hi"), 100, []string{"hi\n"}, nil},
		{"ls /nope", args("command", "ls /nope"), 150, []string{"No such file or directory"}, nil},
		{"rm -rf /", args("command", "rm -rf /"), 200, []string{"catastrophic"}, nil},
		{"ask", args("command", "docker run alpine true"), 400, []string{"sandbox-escape", "No one could be asked to approve it", `allow = ["docker run alpine true"] to /home/u/.config/shellgate/config.toml`},
			[]string{"must approve it", "APPROVAL_REQUIRED: Approval required"}},
		{"job start", args("command", "sleep 30", "run_in_background", true), 200, []string{"Running as job j1", "job_output"},
			[]string{"Started in the background"}},
		{"5 MB", args("command", "seq 1000001 1655360"), 52000, []string{"full output: /", "\n1655360"}, []string{"[Full output"}},
	}
	for _, c := range calls {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: DefaultToolName, Arguments: c.args})
		if err != nil {
			t.Fatal(err)
		}
		text := res.Content[0].(*mcp.TextContent).Text
		n := utf8.RuneCountInString(text)
		t.Logf("%-9s %6d characters", c.name, n)
		if n > c.max {
			t.Errorf("%s: %d characters, over %d:\n%.2000s", c.name, n, c.max, text)
		}
		for _, w := range c.want {
			if k := strings.Count(text, w); k != 1 {
				t.Errorf("%s: %q %d times, want once:\n%.2000s", c.name, w, k, text)
			}
		}
		for _, w := range c.lacks {
			if strings.Contains(text, w) {
				t.Errorf("%s: %q:\n%.2000s", c.name, w, text)
			}
		}
		// structuredContent, for the clients that read it, says the reason
		// once too (in error.message, not again in context.policy).
		if c.name == "ask" {
			b, _ := json.Marshal(res.StructuredContent)
			if k := strings.Count(string(b), "hands work to docker"); k != 1 {
				t.Errorf("ask: the reason %d times in structuredContent, want once:\n%s", k, b)
			}
		}
	}
}
