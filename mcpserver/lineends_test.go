package mcpserver

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/shellgate/shellgate/internal/lane"
)

// TestTextLineEnds: no line of the text a model reads ends in blanks, for the
// common calls of every tool: a blank command's ("Command not run:    " was),
// a command whose lines end in blanks, refusals, jobs, the undo tool's.
func TestTextLineEnds(t *testing.T) {
	lane.Live(t)
	srv, _ := newServer(t, checkpointLab(t), Options{UndoTool: true})
	cs := connect(t, srv, nil, nil)
	ctx := context.Background()
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"", args("command", "echo hi")},
		{"", args("command", "echo hi   ")},
		{"", args("command", "for x in a b; do  \n  echo $x \ndone\n")},
		{"", args("command", "echo out; echo err >&2; exit 3")},
		{"", args("command", "")},
		{"", args("command", "   ")},
		{"", args("command", " \t\n")},
		{"", args()},
		{"", args("command", "sudo true")},
		{"", args("command", "pwd", "directory", "nope  ")},
		{"", args("command", "sleep 5", "timeout_ms", 100)},
		{"", args("command", "printf 'a\\0b'")},
		{"", args("command", "echo x > made.txt  ")},
		{"", args("command", "sleep 30 &  ")},
		{"", args("command", "sleep 30  ", "run_in_background", true)},
		{JobListTool, args()},
		{JobOutputTool, args("job_id", "j1")},
		{JobOutputTool, args("job_id", "j9")},
		{JobKillTool, args("job_id", "j1")},
		{UndoTool, args()},
		{UndoTool, args("id", 1)},
		{UndoTool, args("id", 99)},
	}
	for _, c := range calls {
		env := call(t, ctx, cs, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
		for i, line := range strings.Split(env.Text, "\n") {
			if strings.TrimRight(line, " \t") != line {
				t.Errorf("%s %q: line %d ends in blanks: %q\n%s", c.tool, c.args, i+1, line, env.Text)
			}
		}
	}
}
