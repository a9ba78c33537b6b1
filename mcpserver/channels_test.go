package mcpserver

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/shellgate/shellgate/internal/lane"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/shellgate/shellgate"
)

// What a model reads of a result is one channel: the text content, or
// JSON.stringify(structuredContent) (Claude Code and others). Each must be complete
// on its own and the structured one no bigger than the text plus a little. Run with
// -v to see the figures docs/mcp.md quotes; its table's text column must be
// what is measured (a number's digits counted as one, as shapeLen does: a
// call's "Took 4ms" and "Took 12ms" are the same shape).
func TestChannelSizes(t *testing.T) {
	lane.Live(t)
	srv, _ := newServer(t, shellgate.Config{}, Options{})
	cs := connect(t, srv, nil, nil)
	doc, err := os.ReadFile("../docs/mcp.md")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args map[string]any
		want []string // in both channels
		row  string   // the call's cell in docs/mcp.md's table ("" for none pinned)
	}{
		{"echo hi", args("command", "echo hi"), []string{"hi"}, "`echo hi`"},
		{"deny", args("command", "sudo apt-get install -y cowsay"), []string{"POLICY_DENIED", "privilege"}, "`sudo apt-get install -y cowsay` (deny)"},
		{"timeout", args("command", "sleep 5", "timeout_ms", 1000), []string{"Timed out after 1s", "TIMEOUT"}, ""},
		// The spill file's path, in the text, is as long as the test's
		// temporary directory's name.
		{"5 MB output", args("command", "seq 1 700000"), []string{"699999", "full_output_path"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: DefaultToolName, Arguments: tc.args})
			if err != nil {
				t.Fatal(err)
			}
			text := res.Content[0].(*mcp.TextContent).Text
			structured, err := json.Marshal(res.StructuredContent)
			if err != nil {
				t.Fatal(err)
			}
			nText, nStruct := utf8.RuneCountInString(text), utf8.RuneCount(structured)
			t.Logf("%-12s text content %6d chars, structuredContent %6d chars", tc.name, nText, nStruct)
			if tc.row != "" {
				prefix := "| " + tc.row + " | "
				var quoted string
				for _, line := range strings.Split(string(doc), "\n") {
					if rest, ok := strings.CutPrefix(line, prefix); ok {
						quoted, _, _ = strings.Cut(rest, " |")
					}
				}
				if want := strconv.Itoa(shapeLen(text)); quoted != want {
					t.Errorf("docs/mcp.md's table gives %s %q characters of text content; measured %s", tc.row, quoted, want)
				}
			}
			// 240: the brief's own keys, with seed 001's required context.cwd and
			// context.directory_resolved ("cwd":".","directory_resolved":".", 36);
			// and data.command, which the brief always has and the text leaves
			// out where a refusal's reason quotes the command whole.
			command := utf8.RuneCountInString(tc.args["command"].(string))
			if bound := nText*13/10 + 240 + command; nStruct > bound {
				t.Errorf("structuredContent is %d chars, over 1.3 × %d + 240 + %d = %d:\n%.600s", nStruct, nText, command, bound, structured)
			}
			// The tool's description names the shell and the default timeout:
			// the brief says them only where a call's differ.
			if strings.Contains(string(structured), `"shell":`) || strings.Contains(string(structured), `"timeout_ms":120000`) {
				t.Errorf("structuredContent repeats the description's shell or default timeout:\n%.600s", structured)
			}
			// A refusal never ran: no stats, which were all zero.
			if ran := tc.name != "deny"; strings.Contains(string(structured), `"stats":`) != ran {
				t.Errorf("stats in structuredContent: %v, want %v:\n%.600s", !ran, ran, structured)
			}
			for _, w := range tc.want {
				if w == "full_output_path" {
					if !strings.Contains(text, "full output: /") || !strings.Contains(string(structured), `"full_output_path":"`) {
						t.Errorf("a channel lacks the full output's path")
					}
					// The path is in both channels and in the commands the model
					// writes to read it: named by a number in the Gate's own
					// directory, not a 32-digit id.
					var b struct {
						Data struct {
							FullOutputPath string `json:"full_output_path"`
						}
					}
					json.Unmarshal(structured, &b)
					t.Logf("full output path %s (%d characters)", b.Data.FullOutputPath, len(b.Data.FullOutputPath))
					if id, _, _ := strings.Cut(filepath.Base(b.Data.FullOutputPath), "."); strings.Trim(id, "0123456789") != "" {
						t.Errorf("full output path %s: named by more than a number", b.Data.FullOutputPath)
					}
					continue
				}
				if !strings.Contains(text, w) || !strings.Contains(string(structured), w) {
					t.Errorf("a channel lacks %q:\ntext: %.300s\nstructured: %.300s", w, text, structured)
				}
			}
			if tc.name == "5 MB output" {
				if nText > 52<<10 {
					t.Errorf("text content %d chars for a 50 KB budget", nText)
				}
				// The output is in data only: its last line once in the structured channel.
				if n := strings.Count(string(structured), `699999\n`); n != 1 {
					t.Errorf("the last line appears %d times in structuredContent", n)
				}
			}
		})
	}
}

// A 1 MB command refused for its size comes back in a few KB, not echoed whole, and
// nothing claims output was cut.
func TestHugeCommandNotEchoed(t *testing.T) {
	srv, _ := newServer(t, shellgate.Config{}, Options{})
	cs := connect(t, srv, nil, nil)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: DefaultToolName, Arguments: args("command", "echo "+strings.Repeat("x", 1<<20))})
	if err != nil {
		t.Fatal(err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	structured, _ := json.Marshal(res.StructuredContent)
	if len(text) > 1<<10 || len(structured) > 4<<10 || !res.IsError {
		t.Errorf("text %d bytes, structuredContent %d bytes", len(text), len(structured))
	}
	if strings.Contains(text+string(structured), "runcated") || strings.Contains(text, "cut further") {
		t.Errorf("claims output was cut:\n%s", text)
	}
}

// With TextOnly the result is the text alone, and the tool declares no outputSchema
// (which would oblige every result to carry structuredContent).
func TestTextOnly(t *testing.T) {
	srv, _ := newServer(t, shellgate.Config{}, Options{TextOnly: true})
	cs := connect(t, srv, nil, nil)
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if tools.Tools[0].OutputSchema != nil {
		t.Errorf("outputSchema declared in text-only mode")
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: DefaultToolName, Arguments: args("command", "echo hi")})
	if err != nil {
		t.Fatal(err)
	}
	if res.StructuredContent != nil || len(res.Content) != 1 || res.IsError {
		t.Fatalf("%+v", res)
	}
	if text := res.Content[0].(*mcp.TextContent).Text; !strings.HasPrefix(text, "Command succeeded: echo hi\n") || !strings.HasSuffix(text, "--- STDOUT (3 bytes) ---\nhi") {
		t.Errorf("%q", text)
	}
}

// A client shellgate does not know may show its model the text, structuredContent
// or both (docs/mcp.md). Each channel is complete on its own: the text has the
// output returned, structuredContent the fields and the output's end, whole
// where it is short, and says where the rest is; so one that shows both pays
// little more than the text (4 KB of output again, not 50 KB). Structured (the
// flag for programs) keeps the whole output in both. Run with -v for the figures
// docs/mcp.md quotes.
func TestUnknownClientChannels(t *testing.T) {
	lane.Live(t)
	ctx := context.Background()
	const note = "the result's text content has them all"
	for _, tc := range []struct {
		name    string
		command string
		text    []string // in the text content
		brief   []string // in structuredContent, as JSON
		cut     bool     // structuredContent's output shorter than the text's
	}{
		{"echo hi", "echo hi", []string{"hi"}, []string{`"stdout":"hi\n"`}, false},
		{"refusal", "sudo apt-get install -y cowsay", []string{"POLICY_DENIED", "privilege"}, []string{"POLICY_DENIED", "privilege"}, false},
		{"seq 1 2000 (8.9 KB, whole)", "seq 1 2000", []string{"\n1\n2\n3\n", "\n1000\n1001\n", "1999\n2000"}, []string{`"stdout":"1\n2\n3\n`, `1999\n2000\n"`}, true},
		{"seq 1 100000 (cut)", "seq 1 100000", []string{"\n1\n2\n3\n", "99999\n100000", "full output: /"}, []string{`"stdout":"1\n2\n3\n`, `99999\n100000\n"`, `"full_output_path":"`}, true},
		{"stderr after stdout", "seq 1 100000; echo boom >&2", []string{"99999\n100000", "boom"}, []string{`99999\n100000\n"`, `"stderr":"boom\n"`}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var text [2]string
			var brief [2][]byte
			for i, opts := range []Options{{}, {Structured: true}} {
				srv, _ := newServer(t, shellgate.Config{}, opts)
				res, err := connectAs(t, srv, "some-client", nil, nil).CallTool(ctx, &mcp.CallToolParams{Name: DefaultToolName, Arguments: args("command", tc.command)})
				if err != nil {
					t.Fatal(err)
				}
				text[i] = res.Content[0].(*mcp.TextContent).Text
				if brief[i], err = json.Marshal(res.StructuredContent); err != nil || res.StructuredContent == nil {
					t.Fatalf("no structuredContent: %v", err)
				}
			}
			nText, nBrief, nWhole := utf8.RuneCountInString(text[0]), utf8.RuneCount(brief[0]), utf8.RuneCount(brief[1])
			t.Logf("text content %6d chars, structuredContent %6d (both %6d); with Structured %6d (both %6d)", nText, nBrief, nText+nBrief, nWhole, nText+nWhole)
			for _, w := range tc.text {
				if !strings.Contains(text[0], w) {
					t.Errorf("the text lacks %q", w)
				}
			}
			for i, b := range brief {
				for _, w := range tc.brief {
					if !strings.Contains(string(b), w) {
						t.Errorf("structuredContent (Structured %v) lacks %q:\n%.2000s", i == 1, w, b)
					}
				}
			}
			if cut := strings.Contains(string(brief[0]), note); cut != tc.cut || strings.Contains(string(brief[1]), note) {
				t.Errorf("structuredContent says its output was cut: %v, want %v; with Structured: %v", cut, tc.cut, strings.Contains(string(brief[1]), note))
			}
			// The copy costs at most unknownBriefOutput and its note more than
			// the fields; the text is the same either way.
			if bound := unknownBriefOutput + 1024; nBrief > bound && nBrief > nText*13/10+240 {
				t.Errorf("structuredContent is %d characters beside %d of text, over %d", nBrief, nText, bound)
			}
			// (Each server has its own spill directory.)
			paths := regexp.MustCompile(`/[^ \n]+`)
			if shapeLen(paths.ReplaceAllString(text[0], "/")) != shapeLen(paths.ReplaceAllString(text[1], "/")) {
				t.Errorf("the text differs with Structured:\n%.300s\n%.300s", text[0], text[1])
			}
			if tc.cut && !strings.Contains(string(brief[1]), `"stdout":"1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n`) {
				t.Errorf("with Structured, the output's head is not whole:\n%.300s", brief[1])
			}
		})
	}
}
