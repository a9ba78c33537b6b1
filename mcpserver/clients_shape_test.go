package mcpserver

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/shellgate/shellgate/internal/lane"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/shellgate/shellgate"
)

// modelReads is what a client shows its model of a result, as measured with
// the real clients (issue 21) and read in their sources (docs/mcp.md): Claude
// Code, Codex and VS Code the JSON of structuredContent when there is one, else
// the text; Cline the JSON of the whole result, both channels; Gemini CLI both
// channels on an error, else the text; others the text.
func modelReads(client string, res *mcp.CallToolResult) string {
	text := res.Content[0].(*mcp.TextContent).Text
	var structured string
	if res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		structured = string(b)
	}
	if strings.HasPrefix(client, "Cline") || strings.HasPrefix(client, "@cline/") {
		// Its agent hands the model the result object as JSON (content
		// included, escaped), structuredContent and isError with it.
		b, _ := json.Marshal(res)
		return string(b)
	}
	switch {
	case structured == "":
		return text
	case strings.HasPrefix(client, "claude-code"), strings.HasPrefix(client, "codex-mcp-client"), strings.HasPrefix(client, "Visual Studio Code"):
		return structured
	case strings.HasPrefix(client, "gemini-cli-mcp-client") && res.IsError:
		return text + structured
	}
	return text
}

// Each client gets the shape of result whose reading costs its model the
// fewest characters, with nothing lost: text only for Claude Code, Codex,
// Gemini CLI, VS Code and Cline (and no outputSchema in their tools/list), the
// text and structuredContent for others. The Options (--structured-content) override it
// for every client. Run with -v for the figures docs/mcp.md quotes.
func TestShapePerClient(t *testing.T) {
	lane.Live(t)
	calls := []struct {
		name string
		args map[string]any
		want []string
	}{
		{"echo hi", args("command", "echo hi"), []string{"hi"}},
		{"refusal", args("command", "sudo apt-get install -y cowsay"), []string{"POLICY_DENIED", "privilege", "Work as the current user"}},
		// Cut to the client's budget; Cline's JSON escapes the newlines.
		{"seq", args("command", "seq 1 100000"), []string{"100000", "full output"}},
	}
	clients := []struct {
		name     string // clientInfo.name
		textOnly bool   // by default
	}{
		{"claude-code", true},
		{"codex-mcp-client", true},
		{"gemini-cli-mcp-client", true},
		{"gemini-cli-mcp-client-shellgate", true},
		{"Visual Studio Code", true},
		{"Visual Studio Code - Insiders", true},
		{"Cline", true},
		{"@cline/core", true},
		{"opencode", false},
		{"mcp-inspector", false},
	}
	for _, c := range clients {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			// A server a connection: one that Serve ended is shut down.
			auto, _ := newServer(t, shellgate.Config{}, Options{})
			other, _ := newServer(t, shellgate.Config{}, Options{})
			structured, _ := newServer(t, shellgate.Config{}, Options{Structured: true})
			textOnly, _ := newServer(t, shellgate.Config{}, Options{TextOnly: true})
			cs := connectAs(t, auto, c.name, nil, nil)
			both := connectAs(t, structured, c.name, nil, nil)
			text := connectAs(t, textOnly, c.name, nil, nil)
			tools, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, tool := range tools.Tools {
				if want := !c.textOnly && tool.Name == DefaultToolName; (tool.OutputSchema != nil) != want {
					t.Errorf("%s: outputSchema %v, want it only on the shell tool and only when structuredContent is sent", tool.Name, tool.OutputSchema != nil)
				}
			}
			// The server's own tools are untouched by one client's list.
			if tools, _ := connect(t, other, nil, nil).ListTools(ctx, nil); shellTool(tools.Tools).OutputSchema == nil {
				t.Errorf("another client's tools/list lost its outputSchema")
			}
			for _, k := range calls {
				p := &mcp.CallToolParams{Name: DefaultToolName, Arguments: k.args}
				res, err := cs.CallTool(ctx, p)
				if err != nil {
					t.Fatal(err)
				}
				if (res.StructuredContent == nil) != c.textOnly {
					t.Errorf("%s: structuredContent %v, want %v", k.name, res.StructuredContent != nil, !c.textOnly)
				}
				got := modelReads(c.name, res)
				for _, w := range k.want {
					if !strings.Contains(got, w) {
						t.Errorf("%s: the model does not read %q:\n%s", k.name, w, got)
					}
				}
				resBoth, err := both.CallTool(ctx, p)
				if err != nil {
					t.Fatal(err)
				}
				resText, err := text.CallTool(ctx, p)
				if err != nil {
					t.Fatal(err)
				}
				if resBoth.StructuredContent == nil || resText.StructuredContent != nil {
					t.Errorf("%s: the overrides do not hold: Structured gave %v, TextOnly gave %v", k.name, resBoth.StructuredContent != nil, resText.StructuredContent != nil)
				}
				readBoth, readText := modelReads(c.name, resBoth), modelReads(c.name, resText)
				n, nBoth, nText := shapeLen(got), shapeLen(readBoth), shapeLen(readText)
				t.Logf("%-8s model reads %5d characters (with structuredContent whole %5d, text only %5d)", k.name,
					utf8.RuneCountInString(got), utf8.RuneCountInString(readBoth), utf8.RuneCountInString(readText))
				// A cut output's shape still varies by a few characters from
				// server to server (its spill file's name, a timing).
				if n > min(nBoth, nText)+min(nBoth, nText)/200 {
					t.Errorf("%s: the model reads %d characters, but %d with another shape", k.name, n, min(nBoth, nText))
				}
			}
		})
	}
}

// shapeLen counts the characters of a result with each number as one digit:
// the calls compared differ in their timings ("took 9ms", "took 10ms"), not
// in their shape.
func shapeLen(s string) int {
	return utf8.RuneCountInString(regexp.MustCompile(`[0-9]+`).ReplaceAllString(s, "0"))
}
