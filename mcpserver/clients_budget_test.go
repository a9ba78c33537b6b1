package mcpserver

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/shellgate/shellgate/internal/lane"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/envelope"
)

// Claude Code, Codex and Gemini CLI each cut a long result before their model
// reads it (clients.go). As each of them, 4.8 MB of output comes back within
// the characters that client shows whole, the notes included, with its head
// and its last line and the file holding the whole of it; an explicit
// max_output_bytes above that is capped, and said so; its tools/list gives
// these limits. Another client keeps the Gate's 50 KB. Run with -v for the
// figures docs/mcp.md quotes.
func TestOutputBudgetPerClient(t *testing.T) {
	lane.Live(t)
	ctx := context.Background()
	seq := args("command", "seq 1 700000")
	for _, tc := range []struct {
		client, name string // clientInfo.name, the name notes give
		maxText      int    // the most characters of text
		desc         string // in the tool description
		schemaMax    float64
		capped, more bool // max_output_bytes 200000: capped with a note; more than the default returned
	}{
		{"claude-code", "Claude Code", claudeCodeText, "at most 34000 bytes a call, head and tail (max_output_bytes up to 34000)", claudeCodeOutput, true, false},
		{"codex-mcp-client", "Codex", codexText, "at most 8000 bytes a call, head and tail (max_output_bytes up to 8000)", codexOutput, true, false},
		{"gemini-cli-mcp-client-shellgate", "Gemini CLI", geminiText, "at most 32000 bytes a call, head and tail (max_output_bytes up to 32000)", geminiOutput, true, false},
		{"opencode", "", 52 << 10, "at most 51200 bytes a call, head and tail (max_output_bytes up to 524288)", 524288, false, true},
	} {
		t.Run(tc.client, func(t *testing.T) {
			srv, _ := newServer(t, shellgate.Config{}, Options{})
			cs := connectAs(t, srv, tc.client, nil, nil)
			tools, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, tool := range tools.Tools {
				if tool.Name == JobOutputTool {
					// job_output's default is the same limit (its tools/list
					// said the Gate's 51200 to every client).
					var in struct {
						Properties map[string]struct{ Description string }
					}
					remarshal(t, tool.InputSchema, &in)
					want := fmt.Sprintf("Default %d.", int(min(tc.schemaMax, 51200)))
					if d := in.Properties["max_output_bytes"].Description; !strings.HasSuffix(d, want) {
						t.Errorf("job_output's max_output_bytes: %q, want it to end %q", d, want)
					}
				}
				if tool.Name != DefaultToolName {
					continue
				}
				if n := utf8.RuneCountInString(tool.Description); n > MaxDescription {
					t.Errorf("the client's description is %d characters", n)
				}
				if !strings.Contains(tool.Description, tc.desc) {
					t.Errorf("the description lacks %q:\n%s", tc.desc, tool.Description)
				}
				var in struct {
					Properties map[string]struct{ Maximum *float64 }
				}
				remarshal(t, tool.InputSchema, &in)
				if m := in.Properties["max_output_bytes"].Maximum; m == nil || *m != tc.schemaMax {
					t.Errorf("max_output_bytes maximum %v, want %v", m, tc.schemaMax)
				}
			}
			text := func(a map[string]any) string {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: DefaultToolName, Arguments: a})
				if err != nil {
					t.Fatal(err)
				}
				return modelReads(tc.client, res)
			}
			got := text(seq)
			n := utf8.RuneCountInString(got)
			t.Logf("seq 1 700000: the model reads %d characters", n)
			if n > tc.maxText {
				t.Errorf("%d characters, over %d", n, tc.maxText)
			}
			for _, w := range []string{"\n1\n2\n3\n", "699999\n700000", "full output: /"} {
				if !strings.Contains(got, w) {
					t.Errorf("the text lacks %q", w)
				}
			}
			big := text(args("command", "seq 1 700000", "max_output_bytes", 200000))
			nBig := utf8.RuneCountInString(big)
			t.Logf("seq 1 700000 with max_output_bytes 200000: %d characters", nBig)
			if tc.capped != strings.Contains(big, "max_output_bytes 200000 is more than "+tc.name+" shows its model") || tc.capped && nBig > tc.maxText {
				t.Errorf("max_output_bytes 200000: %d characters, capped %v:\n%.400s", nBig, tc.capped, big)
			}
			if tc.more != (nBig > n+10000) {
				t.Errorf("max_output_bytes 200000 gave %d characters against %d by default", nBig, n)
			}
			if small := text(args("command", "seq 1 700000", "max_output_bytes", 1000)); utf8.RuneCountInString(small) > 3000 {
				t.Errorf("max_output_bytes 1000 gave %d characters", utf8.RuneCountInString(small))
			}
		})
	}
}

// The last guard: a result whose text is over the client's characters (a long
// digest, notes) has its output cut further, more of the tail kept than of the
// head, and says so.
func TestFitText(t *testing.T) {
	var lines []string
	for i := range 6000 {
		lines = append(lines, strings.Repeat("x", 10)+" line "+string(rune('a'+i%26)))
	}
	out := "FIRST\n" + strings.Join(lines, "\n") + "\nerror: LAST\n"
	zero := 0
	path := "/var/tmp/spill/out.txt"
	env := envelope.Envelope{Status: envelope.Success, Data: envelope.Data{Command: "make", Stdout: out, ExitCode: &zero, FullOutputPath: &path}}
	env.Stats.StdoutBytes = int64(len(out))
	env.Settle()
	if n := utf8.RuneCountInString(env.Text); n < 2*20000 {
		t.Fatalf("the text is %d characters; the test wants more than 40000", n)
	}
	fitText(&env, 20000, "Claude Code")
	text := env.Text
	if n := utf8.RuneCountInString(text); n > 20000 || n < 15000 {
		t.Errorf("%d characters, want a little under 20000", n)
	}
	for _, w := range []string{"FIRST", "error: LAST", "bytes cut", "Output cut further to the 20000 characters Claude Code shows its model; the full output file has the rest."} {
		if !strings.Contains(text, w) {
			t.Errorf("the text lacks %q", w)
		}
	}
	cut := strings.Index(text, "bytes cut")
	if head, tail := cut-strings.Index(text, "FIRST"), strings.Index(text, "error: LAST")-cut; tail < 2*head {
		t.Errorf("head %d bytes, tail %d: want the tail kept more", head, tail)
	}
}

// A job's output read by Claude Code keeps to its limits too: less of it than
// another client gets, within Claude Code's characters, the last line kept.
func TestJobOutputBudgetPerClient(t *testing.T) {
	lane.Live(t)
	ctx := context.Background()
	read := map[string]int{}
	for _, client := range []string{"claude-code", "opencode"} {
		srv, _ := newServer(t, shellgate.Config{}, Options{})
		cs := connectAs(t, srv, client, nil, nil)
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: DefaultToolName, Arguments: args("command", "seq 1 700000; echo done", "run_in_background", true)})
		if err != nil {
			t.Fatal(err)
		}
		id := regexpJobID.FindStringSubmatch(res.Content[0].(*mcp.TextContent).Text)
		if id == nil {
			t.Fatalf("no job id in %s", res.Content[0].(*mcp.TextContent).Text)
		}
		res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: JobOutputTool, Arguments: args("job_id", id[1], "wait_ms", 30000, "until", "^done$")})
		if err != nil {
			t.Fatal(err)
		}
		got := modelReads(client, res)
		read[client] = utf8.RuneCountInString(got)
		t.Logf("%s: job_output of 4.8 MB: %d characters", client, read[client])
		if !strings.Contains(got, "done") {
			t.Errorf("%s: the last line is missing:\n%.300s", client, got)
		}
	}
	if read["claude-code"] > claudeCodeText || read["claude-code"] >= read["opencode"] {
		t.Errorf("Claude Code reads %d characters of a job's output, another client %d", read["claude-code"], read["opencode"])
	}
}

// regexpJobID finds a job's id (j1, j2 …) in a result's text.
var regexpJobID = regexp.MustCompile(`\b(j[0-9]+)\b`)
