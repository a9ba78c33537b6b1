package envelope

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func intp(n int) *int             { return &n }
func strp(s string) *string       { return &s }
func withOut(e Envelope) Envelope { e.Stats.StdoutBytes = 3; e.Data.Stdout = "hi\n"; return e }

func TestSettleStatus(t *testing.T) {
	tests := []struct {
		name string
		env  Envelope
		want Status
		code Code
	}{
		{"exit 0", Envelope{Data: Data{ExitCode: intp(0)}}, Success, ""},
		{"exit 0 with output", withOut(Envelope{Data: Data{ExitCode: intp(0)}}), Success, ""},
		{"exit 1", Envelope{Data: Data{ExitCode: intp(1)}}, Partial, ""},
		{"signal", Envelope{Data: Data{Signal: strp("SIGKILL")}}, Partial, ""},
		{"exit 0 but truncated", withOut(Envelope{Data: Data{ExitCode: intp(0), Truncated: true}}), Partial, ""},
		{"timeout with output", withOut(Envelope{Data: Data{TimedOut: true, Signal: strp("SIGTERM")}}), Partial, ""},
		{"timeout, stderr only", Envelope{Data: Data{TimedOut: true}, Stats: Stats{StderrBytes: 1}}, Partial, ""},
		{"timeout without output", Envelope{Data: Data{TimedOut: true, Signal: strp("SIGTERM")}}, Error, Timeout},
		{"cancelled with output", withOut(Envelope{Data: Data{Cancelled: true}}), Partial, ""},
		{"cancelled without output", Envelope{Data: Data{Cancelled: true}}, Error, Cancelled},
		{"explicit error", Envelope{Error: &Err{Code: AccessDenied, Message: "no"}}, Error, AccessDenied},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := tt.env
			e.Settle()
			if e.Status != tt.want {
				t.Fatalf("status %q, want %q", e.Status, tt.want)
			}
			if (e.Error == nil) != (tt.code == "") || e.Error != nil && e.Error.Code != tt.code {
				t.Fatalf("error %+v, want code %q", e.Error, tt.code)
			}
			if e.Data.BackgroundPIDs == nil || e.Context.Cwd != "." {
				t.Errorf("defaults not filled: %+v %+v", e.Data, e.Context)
			}
		})
	}
}

// Seed 001 §7's examples, line for line.
func TestTextFormat(t *testing.T) {
	ok := Envelope{Data: Data{Command: "pytest tests/unit", ExitCode: intp(0), Stdout: "===== 42 passed in 1.2s =====\n"},
		Stats: Stats{TimeMS: 1240, StdoutBytes: 1200}}
	ok.Settle()
	want := "Command succeeded: pytest tests/unit\n(Exit code 0. Took 1240ms)\n\n--- STDOUT (1200 bytes) ---\n===== 42 passed in 1.2s ====="
	if ok.Text != want {
		t.Errorf("success text:\n%s\nwant:\n%s", ok.Text, want)
	}
	failed := Envelope{Data: Data{Command: "npm test", ExitCode: intp(1), Stderr: "Error: Cannot find module 'jest'\n"},
		Stats: Stats{TimeMS: 3450, StderrBytes: 850}}
	failed.Settle()
	want = "Command failed: npm test\n(Exit code 1. Took 3450ms)\n\n--- STDERR (850 bytes) ---\nError: Cannot find module 'jest'"
	if failed.Text != want {
		t.Errorf("failure text:\n%s\nwant:\n%s", failed.Text, want)
	}
	// A call with no command (a job tool's unknown id) names none.
	none := Envelope{Error: &Err{Code: NotFound, Message: "No job j9."}}
	none.Settle()
	if want = "Command not run.\nError NOT_FOUND: No job j9."; none.Text != want {
		t.Errorf("text without a command:\n%q\nwant:\n%q", none.Text, want)
	}
}

func TestTextWarnings(t *testing.T) {
	path := "/tmp/x.stdout.log"
	e := Envelope{Data: Data{Command: "big", ExitCode: intp(0), Truncated: true, FullOutputPath: &path,
		BackgroundPIDs: []int{42, 43}}, Stats: Stats{StdoutBytes: 9}}
	e.Settle()
	for _, s := range []string{"Command succeeded: big", "[Truncated to its head and tail: read the rest from the full output file", "[Full output: /tmp/x.stdout.log]",
		"[Background processes still running: 42, 43]"} {
		if !strings.Contains(e.Text, s) {
			t.Errorf("text lacks %q:\n%s", s, e.Text)
		}
	}
	// A one-shot run stops them as it ends, and says so.
	e.BackgroundStopped()
	if !strings.Contains(e.Text, "\n[Background processes stopped at exit: 42, 43]") || strings.Contains(e.Text, "still running") {
		t.Errorf("stopped background processes:\n%s", e.Text)
	}
	notRun := Envelope{Data: Data{Command: "rm -rf /"}}
	notRun.Fail(InvalidParam, "Command blocked by safety rules.")
	if notRun.Text != "Command not run: rm -rf /\nError INVALID_PARAM: Command blocked by safety rules." {
		t.Errorf("blocked text:\n%s", notRun.Text)
	}
}

// A timeout says so first, with the timeout as given, and claims kept output only
// when there was some.
func TestTimeoutText(t *testing.T) {
	silent := Envelope{Data: Data{Command: "sleep 10", TimedOut: true, Signal: strp("SIGTERM")},
		Stats: Stats{TimeMS: 1003}, Context: Context{TimeoutMS: 1000}}
	silent.Settle()
	want := "Timed out after 1s: sleep 10\n(Killed by SIGTERM. Took 1003ms)\nError TIMEOUT: No output before the timeout (1s)"
	if !strings.HasPrefix(silent.Text, want) {
		t.Errorf("silent timeout text:\n%s\nwant prefix:\n%s", silent.Text, want)
	}
	if strings.Contains(silent.Text, "kept") || strings.Contains(silent.Text, "STDOUT") {
		t.Errorf("silent timeout claims output:\n%s", silent.Text)
	}
	// Its error says there was no output: "(no output)" after it would say it again.
	if strings.Count(strings.ToLower(silent.Text), "no output") != 1 {
		t.Errorf("silent timeout says \"no output\" more than once:\n%s", silent.Text)
	}
	cancelled := Envelope{Data: Data{Command: "sleep 10", Cancelled: true, Signal: strp("SIGTERM")}}
	cancelled.Settle()
	if strings.Contains(cancelled.Text, "(no output)") || !strings.Contains(cancelled.Text, "before the command printed anything") {
		t.Errorf("silent cancel:\n%s", cancelled.Text)
	}
	loud := withOut(Envelope{Data: Data{Command: "make", TimedOut: true, Signal: strp("SIGTERM")},
		Context: Context{TimeoutMS: 90000}})
	loud.Settle()
	if loud.Status != Partial || !strings.HasPrefix(loud.Text, "Timed out after 1m30s: make\n") ||
		!strings.Contains(loud.Text, "[Everything it started was killed too. Give it a longer timeout") || !strings.Contains(loud.Text, "--- STDOUT (3 bytes) ---\nhi") ||
		strings.Count(loud.Text, "timeout") != 1 { // the headline says it timed out; the advice names a longer one
		t.Errorf("timeout with output, %s:\n%s", loud.Status, loud.Text)
	}
}

// No line of the text ends in blanks: not a blank command's headline, not the
// lines of a command that end in blanks.
func TestTextLineEnds(t *testing.T) {
	for cmd, want := range map[string]string{
		"   ":                                    "Command not run.\nError INVALID_PARAM: empty.",
		" \t\n":                                  "Command not run.\nError INVALID_PARAM: empty.",
		"ls  ":                                   "Command not run: ls\nError INVALID_PARAM: empty.",
		"for x in a; do  \r\n  echo $x \ndone\n": "Command not run: for x in a; do\n  echo $x\ndone\nError INVALID_PARAM: empty.",
	} {
		e := NotRun(cmd, nil, Err{Code: InvalidParam, Message: "empty."})
		if e.Text != want || e.Data.Command != cmd {
			t.Errorf("%q:\n%q\nwant\n%q", cmd, e.Text, want)
		}
	}
	if got := shortCommand(strings.Repeat("x", maxHeadline) + "   \n"); got != strings.Repeat("x", maxHeadline) {
		t.Errorf("command of %d bytes and blanks: %q", maxHeadline, got)
	}
	if got := shortCommand(strings.Repeat("x", maxHeadline+6) + "   \n"); got != strings.Repeat("x", maxHeadline)+"… (310 bytes in all)" {
		t.Errorf("long command: %q", got)
	}
}

// TestDuration: durations read as a person writes them, in the envelope's
// text, the tool description and the network proxy's refusals.
func TestDuration(t *testing.T) {
	for n, want := range map[int64]string{1000: "1s", 1500: "1.5s", 250: "250ms", 120000: "2m", 90000: "1m30s", 3600000: "1h",
		5400000: "1h30m", 600000: "10m", 7205000: "2h0m5s"} {
		if got := duration(n); got != want {
			t.Errorf("duration(%d) = %q, want %q", n, got, want)
		}
		if got := Duration(time.Duration(n) * time.Millisecond); got != want {
			t.Errorf("Duration(%dms) = %q, want %q", n, got, want)
		}
	}
}

// Binary output is not also announced as "head and tail shown", and is
// announced once: by the output's section in the full text, by a note in
// the brief one, which has no sections.
func TestBinaryNotesAgree(t *testing.T) {
	path := "/tmp/x.stdout.log"
	e := Envelope{Data: Data{Command: "cat /bin/ls", ExitCode: intp(0), Truncated: true, Binary: true, FullOutputPath: &path},
		Stats: Stats{StdoutBytes: 140000}}
	e.Settle()
	if strings.Contains(e.Text, "head and tail are shown") || strings.Count(e.Text, "BINARY OUTPUT")+strings.Count(e.Text, "Binary output") != 1 {
		t.Errorf("%s", e.Text)
	}
	if brief := e.Brief(); !strings.Contains(brief.Text, "Binary output: not shown") {
		t.Errorf("brief:\n%s", brief.Text)
	}
}

// A refused command is not echoed back whole.
func TestRefuseCutsAHugeCommand(t *testing.T) {
	cmd := "echo " + strings.Repeat("x", 1<<20)
	e := NotRun(cmd, map[string]any{"command": cmd, "directory": "."}, Err{Code: InvalidParam, Message: "too long"})
	if len(e.Data.Command) > 2*maxEcho || !strings.Contains(e.Data.Command, "bytes cut") {
		t.Errorf("data.command is %d bytes", len(e.Data.Command))
	}
	if p := e.Context.ParamsInput["command"].(string); p != e.Data.Command || e.Context.ParamsInput["directory"] != "." {
		t.Errorf("params_input: %.100v", e.Context.ParamsInput)
	}
	if e.Data.Truncated || strings.Contains(e.Text, "runcated") || len(e.Text) > 1000 {
		t.Errorf("text of %d bytes: %.400s", len(e.Text), e.Text)
	}
	// The first line gives the size of the command as given, not of its echo.
	if first, _, _ := strings.Cut(e.Text, "\n"); !strings.HasSuffix(first, fmt.Sprintf("… (%d bytes in all)", len(cmd))) {
		t.Errorf("headline: …%s", first[max(0, len(first)-40):])
	}
}

func TestRefuseKeepsTheRule(t *testing.T) {
	e := NotRun("sudo true", nil, Err{Code: PolicyDenied, Rule: "privilege", Message: "`sudo` runs as root (rule privilege)."})
	if e.Status != Error || e.Error.Rule != "privilege" || e.Text != "Command not run: sudo true\nError POLICY_DENIED: `sudo` runs as root (rule privilege)." {
		t.Errorf("%+v\n%s", e.Error, e.Text)
	}
}

// A truncated run that exited 0 is partial, but it did succeed; a failing one failed.
func TestHeaderFollowsTheExit(t *testing.T) {
	e := Envelope{Data: Data{Command: "seq 1 200000", ExitCode: intp(0), Truncated: true}, Stats: Stats{StdoutBytes: 10}}
	e.Settle()
	if e.Status != Partial || !strings.HasPrefix(e.Text, "Command succeeded: seq 1 200000\n") {
		t.Errorf("%s:\n%s", e.Status, e.Text)
	}
	e = Envelope{Data: Data{Command: "make", ExitCode: intp(2), Truncated: true}, Stats: Stats{StdoutBytes: 10}}
	e.Settle()
	if !strings.HasPrefix(e.Text, "Command failed: make\n") {
		t.Errorf("%s", e.Text)
	}
}

func TestLongCommandHeadline(t *testing.T) {
	cmd := "echo " + strings.Repeat("é", 100000)
	e := Envelope{Data: Data{Command: cmd, ExitCode: intp(0)}}
	e.Settle()
	first, _, _ := strings.Cut(e.Text, "\n")
	if len(first) > 400 || !strings.HasSuffix(first, "(200005 bytes in all)") || !utf8.ValidString(first) {
		t.Errorf("headline %d bytes: %.80q…%q", len(first), first, first[max(0, len(first)-40):])
	}
	if e.Data.Command != cmd {
		t.Error("data.command lost the command")
	}
}

// Summary is the text up to the output sections; notes are warnings like the rest.
func TestSummaryAndNotes(t *testing.T) {
	e := Envelope{Data: Data{Command: "build", ExitCode: intp(0), Stdout: "[INFO] done\n"}, Stats: Stats{StdoutBytes: 12}}
	e.Note("Full stderr: /tmp/x.stderr.log")
	e.Settle()
	want := "Command succeeded: build\n(Exit code 0. Took 0ms)\n[Full stderr: /tmp/x.stderr.log]"
	if got := e.Summary(); got != want {
		t.Errorf("summary:\n%s\nwant:\n%s", got, want)
	}
	if !strings.HasPrefix(e.Text, want+"\n\n--- STDOUT (12 bytes) ---\n[INFO] done") {
		t.Errorf("text:\n%s", e.Text)
	}
}

// Removed terminal controls are said once in the text, and left to the field in Brief.
func TestControlsRemovedNote(t *testing.T) {
	path := "/tmp/x.stdout.log"
	e := Envelope{Data: Data{Command: "ls --color=always", Stdout: "a\n", ExitCode: intp(0), ControlsRemoved: true, FullOutputPath: &path},
		Stats: Stats{StdoutBytes: 12}}
	e.Settle()
	if strings.Count(e.Text, "Terminal control sequences removed") != 1 || !strings.Contains(e.Text, "bytes as printed") {
		t.Errorf("%s", e.Text)
	}
	b := e.Brief()
	if !b.Data.ControlsRemoved || strings.Contains(b.Text, "Terminal control") {
		t.Errorf("Brief: controls_removed %v, text %q", b.Data.ControlsRemoved, b.Text)
	}
	quiet := Envelope{Data: Data{Command: "ls", Stdout: "a\n", ExitCode: intp(0)}, Stats: Stats{StdoutBytes: 2}}
	quiet.Settle()
	if strings.Contains(quiet.Text, "control") {
		t.Errorf("%s", quiet.Text)
	}
}

// A cut stream's marker names the file of its whole output: the text names each
// file once, there, and a line above it says it only when nothing shown does
// (binary output, or a marker cut away with the rest of the middle).
func TestSpillFileNamedOnce(t *testing.T) {
	out, errs := "/tmp/x.stdout.log", "/tmp/x.stderr.log"
	marker := func(p string) string { return "\n... [900 bytes omitted; full output: " + p + "] ...\n" }
	e := Envelope{Data: Data{Command: "big", ExitCode: intp(0), Truncated: true, FullOutputPath: &out,
		Stdout: "1" + marker(out) + "9\n", Stderr: "a" + marker(errs) + "z\n"}, Stats: Stats{StdoutBytes: 909, StderrBytes: 909}}
	e.NoteFile("Full stderr: "+errs, errs)
	e.Settle()
	for _, p := range []string{out, errs} {
		if n := strings.Count(e.Text, p); n != 1 {
			t.Errorf("%s named %d times in the text, want once:\n%s", p, n, e.Text)
		}
	}
	if strings.Contains(e.Text, "[Full ") {
		t.Errorf("a line above the output repeats a marker's file:\n%s", e.Text)
	}
	// Nothing shown names them: the lines do.
	e = Envelope{Data: Data{Command: "big", ExitCode: intp(0), Truncated: true, FullOutputPath: &out,
		Stdout: "1\n[… 900 bytes cut …]\n9\n"}, Stats: Stats{StdoutBytes: 909}}
	e.NoteFile("Full stderr: "+errs, errs)
	e.Settle()
	for _, s := range []string{"[Full output: " + out + "]", "[Full stderr: " + errs + "]"} {
		if !strings.Contains(e.Text, s) {
			t.Errorf("text lacks %q:\n%s", s, e.Text)
		}
	}
	bin := Envelope{Data: Data{Command: "cat a.out", ExitCode: intp(0), Binary: true, FullOutputPath: &out, Stdout: marker(out)}, Stats: Stats{StdoutBytes: 909}}
	bin.Settle()
	if !strings.Contains(bin.Text, "[Full output: "+out+"]") {
		t.Errorf("binary output's file not named:\n%s", bin.Text)
	}
}

// The text says how to take a command back to the reader who can: a person at
// a terminal, a model with the undo tool, or a model without it, whose user can.
func TestUndoSaidToItsReader(t *testing.T) {
	for _, c := range []struct {
		u          Undo
		line, note string
	}{
		{UndoCommand, "`shellgate undo 7` puts the project back as it was before.]", "`shellgate undo 7` puts it back.]"},
		{UndoTool, "the undo tool with id 7 puts the project back as it was before.]", "the undo tool with id 7 puts it back.]"},
		{UndoUser, "the user can take it back with `shellgate undo 7`.]", "(rule lose-work): the user can take it back with `shellgate undo 7`.]"},
	} {
		e := Envelope{Data: Data{Command: "git reset --hard", ExitCode: intp(0), Changed: &Changed{Checkpoint: 7, Modified: 1, Paths: []string{"modified a.go"}}}}
		e.NoteUndo("Allowed without asking because checkpoint 7 keeps the project as it was before it (rule lose-work): ", 7)
		e.Settle()
		e.SetUndo(c.u)
		if !strings.Contains(e.Text, "[Changed: modified a.go; "+c.line) || !strings.Contains(e.Text, c.note) {
			t.Errorf("undo %d:\n%s\nwant %q and %q", c.u, e.Text, c.line, c.note)
		}
		if c.u != UndoCommand && strings.Contains(e.Text, "` puts") {
			t.Errorf("undo %d: a command the reader cannot run:\n%s", c.u, e.Text)
		}
	}
}

// Cut output whose whole is in a file says to read that file, not to run the
// command again or redirect it to a file of its own: that would redo the work
// for what is already on disk. Without a file, narrowing the command is the way.
func TestTruncatedSaysWhereTheRestIs(t *testing.T) {
	path := "/tmp/x.stdout.log"
	e := Envelope{Data: Data{Command: "make", ExitCode: intp(2), Truncated: true, FullOutputPath: &path,
		Stdout: "1\n... [900 bytes omitted; full output: " + path + "] ...\n9\n"}, Stats: Stats{StdoutBytes: 909}}
	e.Settle()
	if !strings.Contains(e.Text, "read the rest from the full output file") || strings.Contains(e.Text, "redirect") {
		t.Errorf("cut output with a file:\n%s", e.Text)
	}
	// A job's read names its output file in a note.
	job := Envelope{Data: Data{Command: "make", Truncated: true, Job: &Job{ID: "j1", State: JobRunning}, Stdout: "1\n9\n"}, Stats: Stats{StdoutBytes: 909}}
	job.NoteFile("900 bytes not shown; the job's full output: /tmp/j1.log", "/tmp/j1.log")
	job.Settle()
	if !strings.Contains(job.Text, "read the rest from the full output file") || strings.Contains(job.Text, "redirect") {
		t.Errorf("cut job output with a file:\n%s", job.Text)
	}
	e = Envelope{Data: Data{Command: "make", ExitCode: intp(2), Truncated: true, Stdout: "1\n[… 900 bytes cut …]\n9\n"}, Stats: Stats{StdoutBytes: 909}}
	e.Settle()
	if strings.Contains(e.Text, "full output file") || !strings.Contains(e.Text, "Narrow the command") {
		t.Errorf("cut output without a file:\n%s", e.Text)
	}
}

// A background process the call leaves running prints into nothing once the
// call has returned: the text says so and how to keep its output, in the full
// text and in Brief's (where its PIDs are data.background_pids alone).
func TestBackgroundOutputDroppedSaid(t *testing.T) {
	e := Envelope{Data: Data{Command: "npm run dev &", ExitCode: intp(0), BackgroundPIDs: []int{42}}}
	e.Settle()
	advice := "[Their later output is dropped: redirect it to a file, or use run_in_background.]"
	if !strings.Contains(e.Text, "[Background processes still running: 42]\n"+advice) {
		t.Errorf("text:\n%s", e.Text)
	}
	if b := e.Brief(); !strings.Contains(b.Text, advice) || strings.Contains(b.Text, "42") {
		t.Errorf("brief text:\n%s", b.Text)
	}
	e.BackgroundStopped()
	if strings.Contains(e.Text, "dropped") {
		t.Errorf("stopped at exit, yet:\n%s", e.Text)
	}
}

// A job call refused (a bad parameter, an unknown id) leaves the job as it was:
// its text says nothing was done to the job, not that its command did not run,
// which would tell a model its server never started.
func TestRefusedJobCallText(t *testing.T) {
	e := NotRun("npm run dev", map[string]any{"job_id": "j1", "wait_ms": -5}, Err{Code: InvalidParam, Message: "wait_ms must be between 0 and 600000 (got -5)."})
	if want := "Nothing done to job j1: npm run dev\nError INVALID_PARAM: wait_ms must be between 0 and 600000 (got -5)."; e.Text != want {
		t.Errorf("text:\n%s\nwant:\n%s", e.Text, want)
	}
	unknown := NotRun("", map[string]any{"job_id": "j9"}, Err{Code: NotFound, Message: "No job \"j9\" in this session (jobs: j1)."})
	if !strings.HasPrefix(unknown.Text, "Nothing done to job j9.\n") || unknown.Brief().Text != "Nothing done to job j9." {
		t.Errorf("unknown job:\n%s\nbrief: %s", unknown.Text, unknown.Brief().Text)
	}
}

// A refusal whose reason quotes the whole command names it there only; one that
// quotes part of a line keeps the line in the headline, where the model sees
// what it sent.
func TestRefusalNamesTheCommandOnce(t *testing.T) {
	deny := Err{Code: PolicyDenied, Rule: "catastrophic", Message: "`rm -rf ~` would delete the home directory (rule catastrophic)."}
	e := NotRun("rm -rf ~", nil, deny)
	if want := "Command not run.\nError POLICY_DENIED: " + deny.Message; e.Text != want || e.Data.Command != "rm -rf ~" {
		t.Errorf("text:\n%s\nwant:\n%s", e.Text, want)
	}
	e = NotRun("git status; rm -rf ~", nil, deny)
	if !strings.HasPrefix(e.Text, "Command not run: git status; rm -rf ~\n") {
		t.Errorf("part of a line quoted:\n%s", e.Text)
	}
}

// The [Changed: …] line names each change once: the paths alone where they
// are all of them, the counts and the first paths where there are more (or a
// kind the paths do not say in as many words).
func TestChangedLineSaysEachOnce(t *testing.T) {
	for _, c := range []struct {
		changed Changed
		want    string
	}{
		{Changed{Checkpoint: 3, Added: 1, Paths: []string{"added f.txt"}}, "[Changed: added f.txt; `shellgate undo 3`"},
		{Changed{Checkpoint: 3, Added: 1, Modified: 1, Git: 2, Paths: []string{"modified a.go", "added b.go"}}, "[Changed: modified a.go, added b.go, 2 in .git; "},
		{Changed{Checkpoint: 3, Added: 3, Deleted: 1, Paths: []string{"added a.go", "added b.go", "deleted c.go", "added d.go"}}, "[Changed: added a.go, b.go, deleted c.go, added d.go; "},
		{Changed{Checkpoint: 3, Deleted: 7, Paths: []string{"deleted a", "deleted b"}, More: 5}, "[Changed: deleted 7 files (deleted a, deleted b, 5 more); "},
		{Changed{Checkpoint: 3, Ignored: 1, Paths: []string{"ignored data.bin"}}, "[Changed: 1 now ignored (not deleted) (ignored data.bin); "},
		{Changed{Checkpoint: 3, Git: 4}, "[Changed: 4 in .git; "},
	} {
		cc := c.changed
		e := Envelope{Data: Data{Command: "make", ExitCode: intp(0), Changed: &cc}}
		e.Settle()
		if !strings.Contains(e.Text, c.want) {
			t.Errorf("%+v:\n%s\nwant %q", c.changed, e.Text, c.want)
		}
	}
}

// A timeout's advice offers the background only where a background job
// outlives the run: not in a one-shot run (BackgroundStopped), which stops
// it as it ends. Settle's own error is made again when the envelope is.
func TestTimeoutAdviceInOneShotRuns(t *testing.T) {
	for _, out := range []string{"", "started\n"} {
		e := Envelope{Data: Data{Command: "make", TimedOut: true, Signal: strp("SIGTERM"), Stdout: out}, Stats: Stats{StdoutBytes: int64(len(out))}}
		e.Settle()
		if !strings.Contains(e.Text, "Give it a longer timeout, or run long jobs in the background.") {
			t.Errorf("output %q, in a session or a Gate:\n%s", out, e.Text)
		}
		e.BackgroundStopped()
		if !strings.Contains(e.Text, "Give it a longer timeout.") || strings.Contains(e.Text, "background") {
			t.Errorf("output %q, one-shot:\n%s", out, e.Text)
		}
		if out == "" && (e.Error == nil || e.Error.Code != Timeout || strings.Contains(e.Error.Message, "background")) {
			t.Errorf("one-shot error: %+v", e.Error)
		}
	}
}

// A job read's sections say what they hold: what is new since the last read,
// or the last lines or the matching lines the read asked for, not "new" for
// a tail of what was read before.
func TestJobReadSaysWhatItHolds(t *testing.T) {
	for _, c := range []struct {
		params      map[string]any
		stdout      string
		header, not string
	}{
		{map[string]any{"job_id": "j1"}, "b\n", "--- STDOUT (new; 4 bytes in all) ---\nb", ""},
		{map[string]any{"job_id": "j1", "tail_lines": 5}, "a\nb\n", "--- STDOUT (last 5 lines; 4 bytes in all) ---\na\nb", "new"},
		{map[string]any{"job_id": "j1", "tail_lines": float64(2), "filter": "b"}, "b\n", "--- STDOUT (last 2 matching lines; 4 bytes in all) ---", "new"},
		{map[string]any{"job_id": "j1", "filter": "b"}, "b\n", "--- STDOUT (new, matching lines; 4 bytes in all) ---", ""},
		{map[string]any{"job_id": "j1", "tail_lines": 5}, "", "\n(no output)", "new"},
		{map[string]any{"job_id": "j1"}, "", "\n(no new output)", ""},
	} {
		e := Envelope{Data: Data{Command: "make", Stdout: c.stdout, Job: &Job{ID: "j1", State: JobRunning}},
			Stats: Stats{StdoutBytes: 4}, Context: Context{ParamsInput: c.params}}
		e.Settle()
		if !strings.Contains(e.Text, c.header) || c.not != "" && strings.Contains(e.Text, c.not) {
			t.Errorf("%v:\n%s\nwant %q", c.params, e.Text, c.header)
		}
	}
}

// An error given to Refuse stays through a later Settle, where Settle's own
// (a silent timeout's) is made again from the data.
func TestRefuseAfterSettlesOwnError(t *testing.T) {
	e := Envelope{Data: Data{Command: "make", TimedOut: true, Signal: strp("SIGTERM")}}
	e.Settle()
	e.Refuse(Err{Code: ExecutionError, Message: "the checkpoint after it failed"})
	e.BackgroundStopped()
	if e.Error == nil || e.Error.Code != ExecutionError {
		t.Errorf("the refusal's error was lost: %+v\n%s", e.Error, e.Text)
	}
}

// TestAnswerIsNotACommand: a tool that runs no command (the undo tool) answers
// with its text alone, in every view, not dressed as a command's run.
func TestAnswerIsNotACommand(t *testing.T) {
	const answer = "Restored the project to before command 3 (rm f): added f.\nThe state just before the undo is checkpoint 4: undo it with id 4."
	e := Answer(answer+"\n", map[string]any{"id": 3, "confirm": true})
	b := e.Brief()
	js, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ name, got string }{{"text", e.Text}, {"summary", e.Summary()}, {"brief", b.Text}} {
		if tt.got != answer {
			t.Errorf("%s:\n%s\nwant:\n%s", tt.name, tt.got, answer)
		}
	}
	if e.Status != Success || !strings.Contains(string(js), `"data":{}`) || strings.Contains(string(js), `"stdout":`) {
		t.Errorf("status %q, data %+v; brief %s", e.Status, b.Data, js)
	}
	e.Refuse(Err{Code: NotFound, Message: "No command 3."})
	if e.Status != Error || !strings.Contains(e.Text, "Error NOT_FOUND: No command 3.") {
		t.Errorf("refused: %q %s", e.Status, e.Text)
	}
	// Its refusal is headed by what was not done, not "Command not run: undo 3".
	e = NotAnswered("Nothing undone", map[string]any{"id": 3}, Err{Code: NotFound, Message: "No command 3."})
	if want := "Nothing undone.\nError NOT_FOUND: No command 3."; e.Status != Error || e.Text != want || e.Data.Command != "" || e.Data.Directory != "" {
		t.Errorf("not answered: %q %+v\n%s\nwant:\n%s", e.Status, e.Data, e.Text, want)
	}
}
