package mcpserver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/shellgate/shellgate/internal/lane"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/envelope"
	"github.com/shellgate/shellgate/internal/checkpoint/checkpointtest"
	"github.com/shellgate/shellgate/internal/sandbox"
)

// TestUndoTool: the tool is listed only when asked for; it lists what
// commands changed, previews an undo, and restores.
func TestUndoTool(t *testing.T) {
	lane.Live(t)
	cfg := checkpointLab(t)
	root := cfg.Root
	ctx := context.Background()

	srv, _ := newServer(t, cfg, Options{})
	tools, err := connect(t, srv, nil, nil).ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(tools.Tools, func(tl *mcp.Tool) bool { return tl.Name == UndoTool }) {
		t.Errorf("the undo tool is listed by default")
	}
	// Without the tool the model cannot take a command back: the text says
	// that its user can, and how.
	made := call(t, ctx, connect(t, srv, nil, nil), &mcp.CallToolParams{Arguments: args("command", "echo x > made.txt")})
	if c := made.Data.Changed; c == nil || !strings.Contains(made.Text, fmt.Sprintf("; the user can take it back with `shellgate undo %d`.]", c.Checkpoint)) {
		t.Errorf("a write without the undo tool:\n%s", made.Text)
	}

	srv, _ = newServer(t, cfg, Options{UndoTool: true})
	cs := connect(t, srv, nil, nil)
	want := checkpointtest.State(t, root)
	env := call(t, ctx, cs, &mcp.CallToolParams{Arguments: args("command", "rm -rf src docs")})
	if env.Data.Changed == nil || env.Data.Changed.Deleted != 5 || !strings.Contains(env.Text, "[Changed: deleted ") {
		t.Fatalf("rm: %+v\n%s", env.Data.Changed, env.Text)
	}
	id := env.Data.Changed.Checkpoint
	if !strings.Contains(env.Text, fmt.Sprintf("; the undo tool with id %d puts the project back as it was before.]", id)) || strings.Contains(env.Text, "shellgate undo") {
		t.Errorf("rm with the undo tool: the text does not point to it:\n%s", env.Text)
	}
	list := call(t, ctx, cs, &mcp.CallToolParams{Name: UndoTool, Arguments: args()})
	if !strings.Contains(list.Text, fmt.Sprintf("%d  ", id)) || !strings.Contains(list.Text, "rm -rf src docs: deleted 5 files") {
		t.Errorf("list:\n%s", list.Text)
	}
	preview := call(t, ctx, cs, &mcp.CallToolParams{Name: UndoTool, Arguments: args("id", id)})
	if !strings.Contains(preview.Text, "deleted src/pkg/f1.go") || !strings.Contains(preview.Text, "Nothing was restored") {
		t.Errorf("preview:\n%s", preview.Text)
	}
	if checkpointtest.State(t, root) == want {
		t.Fatalf("the preview restored")
	}
	done := call(t, ctx, cs, &mcp.CallToolParams{Name: UndoTool, Arguments: args("id", id, "confirm", true)})
	if done.Error != nil || !strings.HasPrefix(done.Text, fmt.Sprintf("Restored the project to before command %d (rm -rf src docs): added 5 files.", id)) {
		t.Errorf("undo:\n%s", done.Text)
	}
	// Each answer reads as what it is, not as a command's run ('Command
	// succeeded: undo 1 (Exit code 0. Took 0ms)' and its STDOUT section).
	for _, env := range []envelope.Envelope{list, preview, done} {
		if strings.Contains(env.Text, "Exit code") || strings.Contains(env.Text, "Command succeeded") || strings.Contains(env.Text, "STDOUT") || env.Data.Stdout != "" || env.Data.ExitCode != nil {
			t.Errorf("an answer dressed as a command:\n%s\ndata %+v", env.Text, env.Data)
		}
	}
	if got := checkpointtest.State(t, root); got != want {
		t.Errorf("after undo:\n%s", checkpointtest.DiffLines(want, got))
	}
	bad := call(t, ctx, cs, &mcp.CallToolParams{Name: UndoTool, Arguments: args("confirm", true)})
	if bad.Error == nil || bad.Error.Code != "INVALID_PARAM" {
		t.Errorf("confirm without id: %s", bad.Text)
	}
	// A number the checkpoints do not hold: which they hold, and how to list them.
	for _, a := range []map[string]any{args("id", 99), args("id", 99, "confirm", true)} {
		bad = call(t, ctx, cs, &mcp.CallToolParams{Name: UndoTool, Arguments: a})
		if want := fmt.Sprintf("Nothing undone.\nError NOT_FOUND: No command 99: the checkpoints hold commands %d to %d. Call undo without an id to list them.", made.Data.Changed.Checkpoint, id+1); bad.Error == nil || bad.Text != want || bad.Data.Command != "" {
			t.Errorf("undo %v:\n%s\n(data.command %q) want:\n%s", a, bad.Text, bad.Data.Command, want)
		}
	}
	// The user writes a file by hand after a command the model then undoes
	// without a preview: the answer names it as taken back too.
	edit := call(t, ctx, cs, &mcp.CallToolParams{Arguments: args("command", "echo agent >> README.md")})
	checkpointtest.Sh(t, root, "echo mine > mine.txt")
	done = call(t, ctx, cs, &mcp.CallToolParams{Name: UndoTool, Arguments: args("id", edit.Data.Changed.Checkpoint, "confirm", true)})
	if want := fmt.Sprintf("That took back too what changed after command %d (later commands, the user's edits):\n  added mine.txt\n", edit.Data.Changed.Checkpoint); !strings.Contains(done.Text, want) {
		t.Errorf("undo after the user's edit:\n%s\nwant it to say:\n%s", done.Text, want)
	}
}

// TestUndoToolBadArguments: an undo call whose arguments are malformed is
// refused as the undo tool's, not as a command's ("Command not run."), with
// what was wrong in error.code and error.message, and nothing restored.
func TestUndoToolBadArguments(t *testing.T) {
	cfg := checkpointLab(t)
	srv, _ := newServer(t, cfg, Options{UndoTool: true})
	cs := connect(t, srv, nil, nil)
	ctx := context.Background()
	want := checkpointtest.State(t, cfg.Root)
	tests := []struct {
		name string
		args any
		msg  string
	}{
		{"id-string", args("id", "3"), "Parameter 'id' must be an integer, not string."},
		{"id-fraction", args("id", 1.5, "confirm", true), "Parameter 'id' must be an integer, not number 1.5."},
		{"id-negative", args("id", -1, "confirm", true), "Parameter 'id' must be a command's checkpoint number (1 or more), not -1; call undo without arguments to list them."},
		{"confirm-string", args("id", 1, "confirm", "yes"), "Parameter 'confirm' must be true or false, not string."},
		{"unknown", args("checkpoint", 1), "Unknown parameter 'checkpoint'; the parameters are id, confirm."},
		{"not-object", []any{1}, "Arguments must be a JSON object, not an array."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := call(t, ctx, cs, &mcp.CallToolParams{Name: UndoTool, Arguments: tt.args})
			if env.Error == nil || env.Error.Code != envelope.InvalidParam || env.Error.Message != tt.msg {
				t.Errorf("error %+v, want INVALID_PARAM: %s", env.Error, tt.msg)
			}
			if head := "Nothing undone.\n"; !strings.HasPrefix(env.Text, head) || strings.Contains(env.Text, "Command") || env.Data.Command != "" || env.Data.Directory != "" {
				t.Errorf("text %q, data %+v: want it headed %q, naming no command", env.Text, env.Data, head)
			}
		})
	}
	if got := checkpointtest.State(t, cfg.Root); got != want {
		t.Errorf("a refused undo changed the root:\n%s", checkpointtest.DiffLines(want, got))
	}
}

// checkpointLab is the configuration of a Gate on a fresh repository, with
// checkpoints in a store of its own and no sandbox (the checkpoints' work is
// the same either way).
func checkpointLab(t *testing.T) shellgate.Config {
	lab := checkpointtest.LabDir(t)
	root := filepath.Join(lab, "project")
	os.Mkdir(root, 0o755)
	checkpointtest.MakeRepo(t, root)
	return shellgate.Config{Root: root, SpillDir: filepath.Join(lab, "spill"), TempDir: lab,
		Sandbox: shellgate.SandboxConfig{Mode: sandbox.Off}, Checkpoints: shellgate.CheckpointConfig{Dir: filepath.Join(lab, "store")}}
}
