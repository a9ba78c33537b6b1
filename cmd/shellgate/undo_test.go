package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shellgate/shellgate/internal/lane"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/envelope"
	"github.com/shellgate/shellgate/internal/checkpoint/checkpointtest"
	"github.com/shellgate/shellgate/internal/sandbox"
)

// TestChangesAndUndo: commands run by one-shot `shellgate run`s are listed
// by `shellgate changes` and taken back by `shellgate undo`, which asks
// before it overwrites what changed after the command.
func TestChangesAndUndo(t *testing.T) {
	lane.Live(t)
	lab, root := undoLab(t)
	// doctor only looks: a project no command ran in has no store, and
	// doctor makes none.
	if code, stdout, stderr := cli("doctor", "--root", root, "--sandbox", "off"); !strings.Contains(stdout,
		"undo:     checkpoints in "+filepath.Join(lab, "store")) || !strings.Contains(stdout, ": none yet") {
		t.Errorf("doctor before any command: %d\n%s%s", code, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(lab, "store")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("doctor made the checkpoint store: %v", err)
	}
	want := checkpointtest.State(t, root)
	if code, _, stderr := cli("run", "--root", root, "--sandbox", "off", "--", "rm -rf src && git reset --hard"); code != 0 || !strings.Contains(stderr, "shellgate undo 1") {
		t.Fatalf("run: %d %s", code, stderr)
	}
	if code, _, stderr := cli("run", "--root", root, "--sandbox", "off", "--", "echo later > later.txt"); code != 0 {
		t.Fatalf("run: %d %s", code, stderr)
	}
	checkChanges(t, root)
	// doctor says where the store is, how much it holds, and its bounds.
	if code, stdout, stderr := cli("doctor", "--root", root, "--sandbox", "off"); !strings.Contains(stdout,
		"undo:     checkpoints in "+filepath.Join(lab, "store")) || !strings.Contains(stdout, ": 2 commands, ") ||
		!strings.Contains(stdout, "pruned past 1000 commands, 7 days or 2.0 GiB; files over 256 MiB are not kept (max_file_size)") {
		t.Errorf("doctor: %d\n%s%s", code, stdout, stderr)
	}
	// Undoing command 1 would take back later.txt too: no one to ask, so no.
	undoTTY = func() (io.ReadCloser, io.Writer) { return nil, nil }
	defer func() { undoTTY = openTTY }()
	if code, _, stderr := cli("undo", "--root", root, "1"); code != 1 || !strings.Contains(stderr, "--yes") {
		t.Errorf("undo 1 without --yes: %d %s", code, stderr)
	}
	// Asked, the user says no, then yes.
	var asked bytes.Buffer
	undoTTY = func() (io.ReadCloser, io.Writer) { return io.NopCloser(strings.NewReader("n\n")), &asked }
	if code, _, _ := cli("undo", "--root", root, "1"); code != 1 || !strings.Contains(asked.String(), "added    later.txt") {
		t.Errorf("undo 1 declined: %d, asked %q", code, asked.String())
	}
	undoTTY = func() (io.ReadCloser, io.Writer) { return io.NopCloser(strings.NewReader("y\n")), io.Discard }
	beforeUndo := checkpointtest.State(t, root)
	code, stdout, stderr := cli("undo", "--root", root, "--json", "1")
	var res struct{ Undone, Undo int }
	if code != 0 || json.Unmarshal([]byte(stdout), &res) != nil || res.Undone != 1 || res.Undo != 3 {
		t.Fatalf("undo 1: %d %s %s", code, stdout, stderr)
	}
	if got := checkpointtest.State(t, root); got != want {
		t.Errorf("after undo 1:\n%s", checkpointtest.DiffLines(want, got))
	}
	// The last command is the undo: undoing it puts back what it took back.
	if code, stdout, stderr := cli("undo", "--root", root, "--yes"); code != 0 || !strings.Contains(stdout, "Undid command 3") {
		t.Fatalf("undo: %d %s %s", code, stdout, stderr)
	}
	if got := checkpointtest.State(t, root); got != beforeUndo {
		t.Errorf("the undo was not undone:\n%s", checkpointtest.DiffLines(beforeUndo, got))
	}
	// A number the checkpoints do not hold: which they hold, and where they are listed.
	for _, cmd := range []string{"undo", "changes"} {
		want := "shellgate " + cmd + ": no command 99: the checkpoints hold commands 1 to 4 (`shellgate changes` lists them)\n"
		if code, _, stderr := cli(cmd, "--root", root, "99"); code != exitNo || stderr != want {
			t.Errorf("%s 99: %d %q\nwant %q", cmd, code, stderr, want)
		}
	}
	if code, _, stderr := cli("undo", "--root", root, "x"); code != exitUsage || !strings.Contains(stderr, "not a command number") {
		t.Errorf("undo x: %d %s", code, stderr)
	}
	// The last command changed nothing: undoing it by default changes nothing,
	// and the output names the last one that changed something.
	if code, _, stderr := cli("run", "--root", root, "--sandbox", "off", "--", "echo x > gone.txt && rm gone.txt"); code != 0 {
		t.Fatalf("run: %d %s", code, stderr)
	}
	if code, stdout, stderr := cli("undo", "--root", root, "--yes"); code != 0 || !strings.Contains(stdout, "Undid command 5") ||
		!strings.Contains(stdout, "The last command that changed the project is 4 (") || !strings.Contains(stdout, "`shellgate undo 4`") {
		t.Errorf("undo of a command that changed nothing: %d\n%s%s", code, stdout, stderr)
	}
}

// undoLab is a lab (under /var/tmp) holding checkpointtest's repository in
// lab/project, with the checkpoint store, the user's config and home, and
// the temporary directory in it.
func undoLab(t *testing.T) (lab, root string) {
	t.Helper()
	lab = checkpointtest.LabDir(t)
	root = filepath.Join(lab, "project")
	os.Mkdir(root, 0o755)
	checkpointtest.MakeRepo(t, root)
	t.Setenv(shellgate.CheckpointsEnv, filepath.Join(lab, "store"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(lab, "config"))
	t.Setenv("HOME", filepath.Join(lab, "home"))
	os.Mkdir(filepath.Join(lab, "tmp"), 0o700)
	t.Setenv("TMPDIR", filepath.Join(lab, "tmp")) // spill files and the commands' temp dir: nothing in /tmp
	return lab, root
}

// changes and undo refuse at once what can only make them fail, in one line
// with one pointer to help (changes 0 said "see `shellgate changes`); see
// `shellgate changes -h`"); --checkpoints on reads checkpoints the
// configuration turns off.
func TestChangesUndoArguments(t *testing.T) {
	lab, root := undoLab(t)
	cfg := filepath.Join(lab, "off.toml")
	if err := os.WriteFile(cfg, []byte("[checkpoints]\nenabled = false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"changes", "0"}, exitUsage, "shellgate changes: \"0\" is not a command number: one that `shellgate changes` lists, from 1; see `shellgate changes -h`\n"},
		{[]string{"undo", "#0"}, exitUsage, "shellgate undo: \"#0\" is not a command number: one that `shellgate changes` lists, from 1; see `shellgate undo -h`\n"},
		{[]string{"undo", "--checkpoints", "off"}, exitUsage, "shellgate undo: --checkpoints off leaves undo nothing to read: leave it out, or give on to read the checkpoints where the configuration turns them off; see `shellgate undo -h`\n"},
		{[]string{"changes", "--checkpoints=off", "--config", "/nonexistent.toml"}, exitUsage, "shellgate changes: --checkpoints off leaves changes nothing to read: leave it out, or give on to read the checkpoints where the configuration turns them off; see `shellgate changes -h`\n"},
		{[]string{"changes", "--config", cfg, "--checkpoints", "on"}, 0, ""},
	} {
		code, _, stderr := cli(append([]string{tc.args[0], "--root", root}, tc.args[1:]...)...)
		if code != tc.code || stderr != tc.stderr {
			t.Errorf("shellgate %s: exit %d, stderr\n%q\nwant exit %d,\n%q", strings.Join(tc.args, " "), code, stderr, tc.code, tc.stderr)
		}
	}
}

// checkChanges: `shellgate changes` lists TestChangesAndUndo's two commands,
// as JSON and one by number.
func checkChanges(t *testing.T, root string) {
	t.Helper()
	code, stdout, stderr := cli("changes", "--root", root, "--json")
	var recs []changeRecord
	if code != 0 || json.Unmarshal([]byte(stdout), &recs) != nil || len(recs) != 2 {
		t.Fatalf("changes --json: %d %s %s", code, stdout, stderr)
	}
	// The command as written, for whoever reads the JSON: not "\u0026\u0026".
	if !strings.Contains(stdout, `"command":"rm -rf src && git reset --hard"`) {
		t.Errorf("changes --json escapes the command:\n%.600s", stdout)
	}
	if c := recs[0].Changes; recs[0].Command != "rm -rf src && git reset --hard" || c == nil || c.Modified != 2 || c.Git == 0 {
		t.Errorf("command 1: %+v %+v", recs[0].CheckpointRecord, recs[0].Changes)
	}
	if c := recs[1].Changes; c == nil || c.Added != 1 || c.Changes[0].Path != "later.txt" {
		t.Errorf("command 2: %+v", recs[1].Changes)
	}
	if code, stdout, _ := cli("changes", "--root", root, "2"); code != 0 || !strings.Contains(stdout, "added    later.txt") {
		t.Errorf("changes 2: %d\n%s", code, stdout)
	}
}

// cli runs `shellgate ARGS` in this process, as main would.
func cli(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = dispatch(args, &out, &errb)
	return code, out.String(), errb.String()
}

// TestChangesAcrossSessionsAndRuns: a session's commands (as the MCP
// server runs them) and one-shot runs share one numbering and one list;
// `shellgate undo` takes back either.
func TestChangesAcrossSessionsAndRuns(t *testing.T) {
	lane.Live(t)
	lab := checkpointtest.LabDir(t)
	root := filepath.Join(lab, "project")
	os.Mkdir(root, 0o755)
	checkpointtest.MakeRepo(t, root)
	store := filepath.Join(lab, "store")
	t.Setenv(shellgate.CheckpointsEnv, store)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(lab, "config"))
	t.Setenv("HOME", filepath.Join(lab, "home"))
	os.Mkdir(filepath.Join(lab, "tmp"), 0o700)
	t.Setenv("TMPDIR", filepath.Join(lab, "tmp"))
	want := checkpointtest.State(t, root)

	g, err := shellgate.New(shellgate.Config{Root: root, SpillDir: filepath.Join(lab, "spill"), TempDir: filepath.Join(lab, "tmp"),
		Sandbox: shellgate.SandboxConfig{Mode: sandbox.Off}, Checkpoints: shellgate.CheckpointConfig{Dir: store}})
	if err != nil {
		t.Fatal(err)
	}
	s := g.NewSession(shellgate.SessionConfig{ID: "mcp-1"})
	env := s.Run(context.Background(), shellgate.Request{Command: "echo session > session.txt"})
	g.Close()
	if env.Data.Changed == nil || env.Data.Changed.Checkpoint != 1 {
		t.Fatalf("the session's command: %+v\n%s", env.Data.Changed, env.Text)
	}
	if code, _, stderr := cli("run", "--root", root, "--sandbox", "off", "--", "echo run > run.txt"); code != 0 || !strings.Contains(stderr, "shellgate undo 2") {
		t.Fatalf("run after the session: %d %s", code, stderr)
	}
	code, stdout, stderr := cli("changes", "--root", root, "--json")
	var recs []changeRecord
	if code != 0 || json.Unmarshal([]byte(stdout), &recs) != nil || len(recs) != 2 {
		t.Fatalf("changes --json: %d %s %s", code, stdout, stderr)
	}
	if recs[0].Session != "mcp-1" || recs[0].Changes == nil || recs[0].Changes.Changes[0].Path != "session.txt" ||
		recs[1].ID != 2 || recs[1].Changes == nil || recs[1].Changes.Changes[0].Path != "run.txt" {
		t.Errorf("changes: %+v %+v / %+v %+v", recs[0].CheckpointRecord, recs[0].Changes, recs[1].CheckpointRecord, recs[1].Changes)
	}
	if code, stdout, stderr := cli("undo", "--root", root, "--yes", "1"); code != 0 || !strings.Contains(stdout, "Undid command 1") {
		t.Fatalf("undo 1: %d %s %s", code, stdout, stderr)
	}
	if got := checkpointtest.State(t, root); got != want {
		t.Errorf("after undo 1:\n%s", checkpointtest.DiffLines(want, got))
	}
}

// TestChangesAndUndoNotKept: a sparse terabyte a command made is listed by
// `shellgate changes` as added and not kept, and `shellgate undo` leaves it,
// saying which path it did not restore and why.
func TestChangesAndUndoNotKept(t *testing.T) {
	lane.Live(t)
	_, root := undoLab(t)
	if code, _, stderr := cli("run", "--root", root, "--sandbox", "off", "--", "truncate -s 1T big.img && rm README.md"); code != 0 ||
		!strings.Contains(stderr, "added big.img (not kept, 1.0 TiB)") {
		t.Fatalf("run: %d %s", code, stderr)
	}
	if code, stdout, _ := cli("changes", "--root", root, "1"); code != 0 || !strings.Contains(stdout, "added    big.img (not kept, 1.0 TiB)") ||
		!strings.Contains(stdout, "(1 not kept: over max_file_size)") {
		t.Errorf("changes 1: %d\n%s", code, stdout)
	}
	code, stdout, stderr := cli("undo", "--root", root, "--yes")
	if code != 0 || !strings.Contains(stdout, "Not restored (1, left as they are):\n  big.img: made since, 1.0 TiB, over max_file_size") ||
		!strings.Contains(stdout, "Undid command 1 (truncate -s 1T big.img && rm README.md): added 1 file.") {
		t.Errorf("undo: %d\n%s%s", code, stdout, stderr)
	}
	if fi, err := os.Stat(filepath.Join(root, "big.img")); err != nil || fi.Size() != 1<<40 {
		t.Errorf("big.img after undo: %v %v", fi, err)
	}
	if _, err := os.Stat(filepath.Join(root, "README.md")); err != nil {
		t.Errorf("README.md not restored: %v", err)
	}
	code, stdout, _ = cli("undo", "--root", root, "--yes", "--json", "1")
	var res struct {
		Changes shellgate.ChangeSummary
	}
	if code != 0 || json.Unmarshal([]byte(stdout), &res) != nil || len(res.Changes.NotRestored) != 1 || res.Changes.NotRestored[0].Path != "big.img" {
		t.Errorf("undo --json: %d %s", code, stdout)
	}
}

// changes and undo with --json print their errors on stdout as JSON, with a
// code, besides the line on stderr: a script reading stdout got nothing.
func TestChangesAndUndoJSONErrors(t *testing.T) {
	_, root := undoLab(t)
	for _, tc := range []struct {
		args []string
		exit int
		code envelope.Code
		msg  string
	}{
		{[]string{"changes", "--json", "abc"}, exitUsage, envelope.InvalidParam, `"abc" is not a command number`},
		{[]string{"undo", "--json", "--bogus"}, exitUsage, envelope.InvalidParam, "unknown flag --bogus"},
		{[]string{"undo", "--json", "1", "2"}, exitUsage, envelope.InvalidParam, "at most one command number"},
		{[]string{"undo", "--json"}, exitNo, envelope.NotFound, "no checkpoints yet for "},
		{[]string{"changes", "--json", "99"}, exitNo, envelope.NotFound, "99"},
		{[]string{"undo", "--json", "99"}, exitNo, envelope.NotFound, "99"},
	} {
		code, stdout, stderr := cli(append([]string{tc.args[0], "--root", root}, tc.args[1:]...)...)
		var got struct{ Error envelope.Err }
		if code != tc.exit || json.Unmarshal([]byte(stdout), &got) != nil || got.Error.Code != tc.code ||
			!strings.Contains(got.Error.Message, tc.msg) || !strings.Contains(stderr, tc.msg) {
			t.Errorf("shellgate %s: exit %d (want %d), stdout:\n%s\nstderr:\n%s", strings.Join(tc.args, " "), code, tc.exit, stdout, stderr)
		}
	}
}

// TestUndoSaysWhatItTakesBack: undo of a command after which the user edited
// files by hand names those files — when it refuses for want of --yes, and
// when it takes them back with it (text and JSON) — so that the user's own
// later work is never overwritten unsaid.
func TestUndoSaysWhatItTakesBack(t *testing.T) {
	lane.Live(t)
	_, root := undoLab(t)
	if code, _, stderr := cli("run", "--root", root, "--sandbox", "off", "--", "echo agent >> README.md"); code != 0 {
		t.Fatalf("run: %d %s", code, stderr)
	}
	checkpointtest.Sh(t, root, "echo 'by hand' >> README.md && echo mine > mine.txt")
	undoTTY = func() (io.ReadCloser, io.Writer) { return nil, nil }
	defer func() { undoTTY = openTTY }()
	if code, _, stderr := cli("undo", "--root", root, "1"); code != 1 || !strings.Contains(stderr, "modified README.md, added mine.txt") {
		t.Errorf("undo 1 without --yes: %d %s", code, stderr)
	}
	code, stdout, stderr := cli("undo", "--root", root, "--yes", "1")
	if want := "That took back too what changed after command 1 (later commands, edits by hand): modified README.md, added mine.txt.\n"; code != 0 || !strings.Contains(stdout, want) {
		t.Errorf("undo --yes 1: %d\n%s%s\nwant %q", code, stdout, stderr, want)
	}
	// Undoing the undo puts the user's edits back; it names none taken
	// back, none having changed since.
	code, stdout, stderr = cli("undo", "--root", root, "--yes", "--json", "2")
	var res struct {
		Changes struct{ Later []struct{ Kind, Path string } }
	}
	if code != 0 || json.Unmarshal([]byte(stdout), &res) != nil || len(res.Changes.Later) != 0 {
		t.Errorf("undo of the undo: %d %s %s", code, stdout, stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "mine.txt")); string(b) != "mine\n" {
		t.Errorf("mine.txt after undoing the undo: %q", b)
	}
	checkpointtest.Sh(t, root, "echo again >> mine.txt")
	code, stdout, stderr = cli("undo", "--root", root, "--yes", "--json", "3")
	if code != 0 || json.Unmarshal([]byte(stdout), &res) != nil || len(res.Changes.Later) != 1 || res.Changes.Later[0].Path != "mine.txt" {
		t.Errorf("undo 3 after an edit: %d %s %s", code, stdout, stderr)
	}
	// The same undo again (a second terminal's, a retry) changes nothing,
	// so it names nothing as taken back.
	code, stdout, stderr = cli("undo", "--root", root, "--yes", "3")
	if code != 0 || !strings.Contains(stdout, "): changed nothing.\n") || strings.Contains(stdout, "took back") {
		t.Errorf("undo 3 again: %d %s %s", code, stdout, stderr)
	}
}

// `shellgate changes` names each command by how it ran: an agent's shell
// prefix's `shellgate exec` is "exec" (it was listed as "run"), a one-shot
// `shellgate run` "run".
func TestChangesNamesExec(t *testing.T) {
	lane.Live(t)
	bin := execBinary(t)
	lab, root := undoLab(t)
	for _, c := range []string{"exec", "run"} {
		args := []string{c, "--root", root, "--sandbox", "off", "--", "echo " + c + " >> made.txt"}
		if c == "exec" {
			args = []string{c, "--root", root, "--sandbox", "off", "echo exec >> made.txt"}
		}
		cmd := exec.Command(bin, args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), shellgate.CheckpointsEnv+"="+filepath.Join(lab, "store"))
		if stdout, stderr, code := runCmd(t, cmd); code != 0 {
			t.Fatalf("%s: %d %s%s", c, code, stdout, stderr)
		}
	}
	code, stdout, stderr := cli("changes", "--root", root, "--json")
	var recs []changeRecord
	if code != 0 || json.Unmarshal([]byte(stdout), &recs) != nil || len(recs) != 2 {
		t.Fatalf("changes --json: %d %s %s", code, stdout, stderr)
	}
	if recs[0].Label != "exec" || recs[1].Label != "run" {
		t.Errorf("labels %q, %q; want exec, run", recs[0].Label, recs[1].Label)
	}
}
