package envelope

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/shellgate/shellgate/internal/output"
)

// Fail makes e an error envelope with the given code and message and settles it.
func (e *Envelope) Fail(code Code, message string) *Envelope {
	return e.Refuse(Err{Code: code, Message: message})
}

// Refuse makes e an error envelope carrying err and settles it. A command that was
// not run is not echoed back whole: past maxEcho bytes it is cut in data.command and
// context.params_input, since the caller has it and a model pays for every byte.
func (e *Envelope) Refuse(err Err) *Envelope {
	e.Error, e.madeErr = &err, false // the caller's, kept as Settle's own is not
	if !e.ran() && len(e.Data.Command) > maxEcho {
		short := CutMiddle(e.Data.Command, maxEcho)
		if c, ok := e.Context.ParamsInput["command"].(string); ok && c == e.Data.Command {
			p := make(map[string]any, len(e.Context.ParamsInput))
			for k, v := range e.Context.ParamsInput {
				p[k] = v
			}
			p["command"] = short
			e.Context.ParamsInput = p
		}
		e.Data.Command = short
	}
	return e.Settle()
}

// NotRun returns the error envelope of a command that was not run, for callers that
// have nothing else to report: params is the input as given (nil: just the command).
func NotRun(command string, params map[string]any, err Err) Envelope {
	if params == nil {
		params = map[string]any{"command": command}
	}
	e := Envelope{Data: Data{Command: command}, Context: Context{ParamsInput: params}}
	e.Refuse(err)
	return e
}

// maxEcho bounds a refused command as echoed back in the envelope.
const maxEcho = 2 << 10

// Settle applies seed 001's status rules to the data gathered so far and writes the
// text summary. Call it last: it reads Data, Stats and Error and sets Status and Text,
// which is a function of the rest of the envelope only, so settling again after
// changing the data (cutting the output, say) gives the text of the new data.
//
//   - error: Error is set, or the command timed out or was cancelled with no output;
//   - success: exit code 0, nothing truncated, not timed out or cancelled;
//   - partial: everything else that ran (non-zero exit, signal, truncation, timeout
//     or cancellation after some output).
func (e *Envelope) Settle() *Envelope {
	d := &e.Data
	if d.BackgroundPIDs == nil {
		d.BackgroundPIDs = []int{}
	}
	if e.Context.Cwd == "" {
		e.Context.Cwd = "."
	}
	if e.Context.DirectoryResolved == "" {
		e.Context.DirectoryResolved = e.Context.Cwd
	}
	if d.Directory == "" && e.answer == "" && e.head == "" { // an answer ran nowhere
		d.Directory = e.Context.DirectoryResolved
	}
	if e.madeErr { // Settle's own error, made again from the data as it is now
		e.Error, e.madeErr = nil, false
	}
	switch {
	case e.Error != nil:
	case d.TimedOut && e.silent():
		e.Error = &Err{Code: Timeout, Message: fmt.Sprintf("No output before the timeout (%s): the command and everything it started were killed. %s", e.timeout(), e.longer())}
		e.madeErr = true
	case d.Cancelled && e.silent():
		e.Error = &Err{Code: Cancelled, Message: "Cancelled before the command printed anything: it and everything it started were killed."}
		e.madeErr = true
	}
	switch {
	case e.Error != nil:
		e.Status = Error
	case e.answer != "", d.Job != nil && d.Job.State == JobRunning, d.Jobs != nil:
		e.Status = Success
	case d.Job != nil && d.Job.State == JobWaiting:
		e.Status = Partial
	case d.ExitCode != nil && *d.ExitCode == 0 && !d.Truncated && !d.TimedOut && !d.Cancelled:
		e.Status = Success
	default:
		e.Status = Partial
	}
	e.Text = e.render(fullText)
	return e
}

// longer is the advice for a command that timed out: a longer timeout, or
// the background, where a background job outlives the run (not in a one-shot
// run, BackgroundStopped, whose Gate closes as it ends).
func (e *Envelope) longer() string {
	if e.bgStopped {
		return "Give it a longer timeout."
	}
	return "Give it a longer timeout, or run long jobs in the background."
}

// silent reports whether the command printed nothing at all.
func (e *Envelope) silent() bool { return e.Stats.StdoutBytes == 0 && e.Stats.StderrBytes == 0 }

// ran reports whether a process was started and finished in some way.
func (e *Envelope) ran() bool {
	d := e.Data
	return d.Job != nil || d.ExitCode != nil || d.Signal != nil || d.TimedOut || d.Cancelled
}

// Summary is the text without the output sections: how the command ended, the error
// and the warnings. For a display that has already shown the output live. Call it
// after Settle.
func (e *Envelope) Summary() string { return e.render(summaryText) }

// A view is how much of the envelope a text spells out.
type view int

const (
	fullText    view = iota // Text: everything, for a reader of the text alone
	summaryText             // Summary: without the output, which was shown live
	briefText               // Brief's text: only what no field of Brief says
)

// render writes seed 001 §7's text:
//
//	Command {succeeded|failed}: <command>
//	(Exit code X. Took Tms)
//	[warnings]
//
//	--- STDOUT (N bytes) ---
//	...
func (e *Envelope) render(v view) string {
	if e.answer != "" && e.Error == nil {
		return e.answer // a tool's answer, not a command's run: see Answer
	}
	var b strings.Builder
	d := e.Data
	head := e.headline()
	switch {
	case v == briefText || d.Jobs != nil || strings.TrimSpace(d.Command) == "" || e.errorQuotesCommand():
		// The command is data.command, or there is none (a blank one), or the
		// error below quotes it whole (a policy's refusal).
		b.WriteString(head + ".\n")
	default:
		fmt.Fprintf(&b, "%s: %s\n", head, shortCommand(d.Command))
	}
	switch {
	case d.Job != nil && d.Job.Running():
		fmt.Fprintf(&b, "(Running for %s)\n", duration(d.Job.RuntimeMS))
	case e.ran():
		fmt.Fprintf(&b, "(%s. Took %s)\n", e.ending(), ms(e.Stats.TimeMS))
	}
	for _, j := range d.Jobs {
		if v == briefText {
			break // data.jobs has each
		}
		fmt.Fprintf(&b, "%s\n", jobLine(j))
	}
	if e.Error != nil && v != briefText {
		fmt.Fprintf(&b, "Error %s: %s\n", e.Error.Code, e.Error.Message)
	}
	for _, w := range e.warnings() {
		if w.inSection && v == fullText && e.ran() {
			continue // the output's section below says it
		}
		if w.file != "" && v != summaryText && e.shows(w.file) {
			continue // the output, where it was cut, names the file (the summary goes with output shown live)
		}
		if v != briefText || !w.restates {
			fmt.Fprintf(&b, "[%s]\n", w.text)
		}
	}
	if v == fullText && e.ran() {
		e.writeOutput(&b)
	}
	return strings.TrimRight(b.String(), "\n")
}

// writeOutput writes the output sections and the digest.
func (e *Envelope) writeOutput(b *strings.Builder) {
	d := e.Data
	if d.Binary {
		fmt.Fprintf(b, "\n--- BINARY OUTPUT (%d bytes stdout, %d bytes stderr), not shown ---\n", e.Stats.StdoutBytes, e.Stats.StderrBytes)
		return
	}
	if d.Job != nil {
		e.writeJobOutput(b)
		return
	}
	section := func(name, text string, n int64) {
		if n == 0 && text == "" {
			return
		}
		fmt.Fprintf(b, "\n--- %s (%d bytes) ---\n%s", name, n, text)
		if !strings.HasSuffix(text, "\n") {
			b.WriteByte('\n')
		}
	}
	if d.Summary != "" {
		fmt.Fprintf(b, "\n--- SUMMARY (by the client's model, from the output below) ---\n%s\n", strings.TrimRight(d.Summary, "\n"))
	}
	section("STDOUT", d.Stdout, e.Stats.StdoutBytes)
	section("STDERR", d.Stderr, e.Stats.StderrBytes)
	if e.silent() && (e.Error == nil || (e.Error.Code != Timeout && e.Error.Code != Cancelled)) {
		b.WriteString("\n(no output)\n") // a silent timeout's or cancel's error says it
	}
	if d.Digest != "" {
		fmt.Fprintf(b, "\n--- DIGEST: lines of the omitted middle that look like errors or warnings (line numbers in the full output) ---\n%s\n", d.Digest)
	}
}

// writeJobOutput writes what a job printed since the last read, or what the
// read asked for (its last lines, the lines matching a filter: jobRead):
// only the streams that have some.
func (e *Envelope) writeJobOutput(b *strings.Builder) {
	d := e.Data
	what, none := e.jobRead()
	section := func(name, text string, n int64) {
		if text == "" {
			return
		}
		fmt.Fprintf(b, "\n--- %s (%s; %d bytes in all) ---\n%s", name, what, n, text)
		if !strings.HasSuffix(text, "\n") {
			b.WriteByte('\n')
		}
	}
	section("STDOUT", d.Stdout, e.Stats.StdoutBytes)
	section("STDERR", d.Stderr, e.Stats.StderrBytes)
	if d.Stdout == "" && d.Stderr == "" {
		b.WriteString("\n(" + none + ")\n")
	}
}

// jobRead says what a job read returned, as its parameters (tail_lines,
// filter) asked, for its sections' headers, and what to say when it is none.
func (e *Envelope) jobRead() (what, none string) {
	tail := 0
	switch n := e.Context.ParamsInput["tail_lines"].(type) {
	case int:
		tail = n
	case int64:
		tail = int(n)
	case float64:
		tail = int(n)
	}
	filter, _ := e.Context.ParamsInput["filter"].(string)
	switch {
	case tail > 0 && filter != "":
		return fmt.Sprintf("last %d matching lines", tail), "no line matches"
	case tail > 0:
		return fmt.Sprintf("last %d lines", tail), "no output"
	case filter != "":
		return "new, matching lines", "no new line matches"
	}
	return "new", "no new output"
}

// outputInFile reports whether the text names a file that holds the whole
// output: data.full_output_path, or a job's output file.
func (e *Envelope) outputInFile() bool {
	if e.Data.FullOutputPath != nil {
		return true
	}
	for _, n := range e.notes {
		if n.file != "" {
			return true
		}
	}
	return false
}

// errorQuotesCommand reports whether a command that did not run is refused by an
// error that quotes it whole, as "`rm -rf ~` would delete …" does.
func (e *Envelope) errorQuotesCommand() bool {
	c := strings.TrimSpace(e.Data.Command)
	return e.Error != nil && !e.ran() && strings.Contains(e.Error.Message, "`"+c+"`")
}

// headline says how the command ended; warnings say what else made it partial.
func (e *Envelope) headline() string {
	d := e.Data
	if e.head != "" {
		return e.head // a tool that runs no command: see NotAnswered
	}
	if j := d.Job; j != nil {
		switch {
		case j.State == JobRunning:
			return "Running as job " + j.ID
		case j.State == JobWaiting:
			return "Waiting for input: job " + j.ID
		case j.State == JobKilled:
			return "Job " + j.ID + " was killed"
		case d.ExitCode != nil && *d.ExitCode == 0:
			return "Job " + j.ID + " succeeded"
		}
		return "Job " + j.ID + " failed"
	}
	switch {
	case d.Jobs == nil:
	case len(d.Jobs) == 0:
		return "No jobs"
	case len(d.Jobs) == 1:
		return "1 job"
	default:
		return fmt.Sprintf("%d jobs", len(d.Jobs))
	}
	switch {
	case !e.ran():
		if id, ok := e.Context.ParamsInput["job_id"]; ok {
			// A job call refused: the job, if there is one, runs on as it was;
			// "Command not run: <its command>" would say it never started.
			return NothingDoneTo(id)
		}
		return "Command not run"
	case d.TimedOut:
		return "Timed out after " + e.timeout()
	case d.Cancelled:
		return "Cancelled"
	case d.ExitCode != nil && *d.ExitCode == 0:
		return "Command succeeded"
	}
	return "Command failed"
}

// timeout is the timeout in force, or failing that the time the command took.
func (e *Envelope) timeout() string {
	n := e.Context.TimeoutMS
	if n <= 0 {
		n = e.Stats.TimeMS
	}
	return duration(n)
}

// ending says how the process ended, for the "(… Took Tms)" line.
func (e *Envelope) ending() string {
	d := e.Data
	var parts []string
	if d.ExitCode != nil {
		parts = append(parts, fmt.Sprintf("Exit code %d", *d.ExitCode))
	}
	if d.Signal != nil {
		parts = append(parts, "Killed by "+*d.Signal)
	}
	if len(parts) == 0 {
		parts = append(parts, "No exit code")
	}
	return strings.Join(parts, ", ")
}

// A warning is one bracketed line of the text.
type warning struct {
	text      string
	restates  bool   // only restates a field (a path, PIDs): left out of Brief's text
	inSection bool   // says what the full text's output section says
	file      string // names this file of the whole output; see shows
}

// shows reports whether the output shown (the sections of the text, and
// data.stdout and data.stderr) names path: a cut stream's marker line says
// where the whole of it is, "... [N bytes omitted; full output: PATH] ...",
// and a line above it saying the same would only repeat it.
func (e *Envelope) shows(path string) bool {
	d := e.Data
	return e.ran() && !d.Binary && (strings.Contains(d.Stdout, path) || strings.Contains(d.Stderr, path))
}

func (e *Envelope) warnings() []warning {
	d := e.Data
	var w []warning
	add := func(restates bool, format string, args ...any) {
		w = append(w, warning{text: fmt.Sprintf(format, args...), restates: restates})
	}
	if !e.silent() { // a silent stop is the error itself
		if d.TimedOut {
			add(false, "Everything it started was killed too. %s", e.longer())
		}
		if d.Cancelled {
			add(false, "Killed when cancelled, with everything it started.")
		}
	}
	switch {
	case d.Binary:
		add(false, "Binary output: not shown as text.")
		w[len(w)-1].inSection = true
	case d.Truncated && e.outputInFile():
		// The whole output is in a file already: rerunning the command, or
		// redirecting it to another file, would only do the work again.
		add(false, "Truncated to its head and tail: read the rest from the full output file (grep, sed -n, tail), do not rerun.")
	case d.Truncated:
		add(false, "Truncated: the output exceeded the limit; its head and tail are shown. Narrow the command or redirect to a file.")
	}
	if d.ControlsRemoved && !d.Binary {
		if d.FullOutputPath != nil {
			add(true, "Terminal control sequences removed from the output shown; the full output file has the bytes as printed.")
		} else {
			add(true, "Terminal control sequences removed from the output shown.")
		}
	}
	if d.FullOutputPath != nil {
		add(true, "Full output: %s", *d.FullOutputPath)
		w[len(w)-1].file = *d.FullOutputPath
	}
	if c := d.Changed; c != nil {
		if line := c.line(e); line != "" {
			add(true, "%s", line) // data.changed says it in Brief
		}
	}
	for _, n := range e.notes {
		// A note may name what a command made (a repository's directory, a
		// path moved aside): no terminal control in its name reaches the text.
		t, _ := output.Text([]byte(n.text))
		if n.undo > 0 {
			t += e.undoes(n.undo, "it back") + "."
		}
		add(false, "%s", t)
		w[len(w)-1].file = n.file
	}
	if len(d.BackgroundPIDs) > 0 {
		pids := make([]string, len(d.BackgroundPIDs))
		for i, p := range d.BackgroundPIDs {
			pids[i] = fmt.Sprint(p)
		}
		if e.bgStopped {
			add(false, "Background processes stopped at exit: %s", strings.Join(pids, ", "))
		} else {
			add(true, "Background processes still running: %s", strings.Join(pids, ", "))
			// The call has returned: nothing reads their output any more.
			if e.noJobs {
				add(false, "Their later output is dropped: redirect it to a file.")
			} else {
				add(false, "Their later output is dropped: redirect it to a file, or use run_in_background.")
			}
		}
	}
	return w
}

// jobLine describes a job in a list.
func jobLine(j Job) string {
	state := string(j.State)
	switch {
	case j.Signal != "":
		state += " (" + j.Signal + ")"
	case j.ExitCode != nil:
		state += fmt.Sprintf(" (exit %d)", *j.ExitCode)
	}
	return fmt.Sprintf("%s  %s  %s  %s out/%s err  %s", j.ID, state, duration(j.RuntimeMS), size(j.StdoutBytes), size(j.StderrBytes), shortCommand(j.Command))
}

// size writes a byte count the way a person would: 512B, 3.1KB, 12MB.
func size(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%dB", n)
	case n < 1000_000:
		return fmt.Sprintf("%.1fKB", float64(n)/1e3)
	}
	return fmt.Sprintf("%.1fMB", float64(n)/1e6)
}

// maxHeadline bounds the command as quoted in the text; data.command and
// context.params_input keep it whole.
const maxHeadline = 300

// shortCommand is the command for the text's first line: whole if short, else its
// first bytes (cut at a rune boundary) and its length; no line of it ends in
// blanks (data.command has them).
func shortCommand(cmd string) string {
	all := uncutLen(cmd)
	cmd = trimLineEnds(cmd)
	if len(cmd) <= maxHeadline {
		return cmd
	}
	cut := maxHeadline
	for cut > 0 && !utf8.RuneStart(cmd[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes in all)", cmd[:cut], all)
}

// cutMark is CutMiddle's marker, as Refuse leaves it in data.command.
var cutMark = regexp.MustCompile(`\n\[… (\d+) bytes cut …\]\n`)

// uncutLen is the length of cmd before Refuse cut its middle out: the text's
// first line gives the size of the command as given, not of its echo.
func uncutLen(cmd string) int {
	m := cutMark.FindAllStringSubmatchIndex(cmd, 2)
	if len(m) != 1 {
		return len(cmd)
	}
	n, err := strconv.Atoi(cmd[m[0][2]:m[0][3]])
	if err != nil {
		return len(cmd)
	}
	return len(cmd) - (m[0][1] - m[0][0]) + n
}

// trimLineEnds removes the blanks that end s and each of its lines.
func trimLineEnds(s string) string {
	s = strings.TrimRight(s, " \t\r\n")
	if !strings.Contains(s, " \n") && !strings.Contains(s, "\t\n") && !strings.Contains(s, "\r\n") {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t\r")
	}
	return strings.Join(lines, "\n")
}

// NothingDoneTo is the headline of a job call refused, naming job id as
// given: cut, and quoted where it holds what does not print (a line break
// would put a line of its own, "Command succeeded", under the headline).
func NothingDoneTo(id any) string {
	s := CutMiddle(fmt.Sprint(id), 64)
	if strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
		s = strconv.Quote(s)
	}
	return "Nothing done to job " + s
}

// CutMiddle keeps about n bytes of s, half from the head and half from the tail, on
// UTF-8 boundaries, with a marker saying how much was cut.
func CutMiddle(s string, n int) string {
	if len(s) <= n {
		return s
	}
	head, tail := n/2, len(s)-n/2
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	for tail < len(s) && !utf8.RuneStart(s[tail]) {
		tail++
	}
	return fmt.Sprintf("%s\n[… %d bytes cut …]\n%s", s[:head], tail-head, s[tail:])
}

func ms(n int64) string { return fmt.Sprintf("%dms", n) }

// duration writes milliseconds the way a person would: 1s, 1.5s, 2m, 250ms.
func duration(n int64) string { return Duration(time.Duration(n) * time.Millisecond) }

// Duration writes d the way a person would, without the zero units Go's
// String ends with: 1s, 1.5s, 2m (not 2m0s), 1h30m, 250ms.
func Duration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// EchoLimit is how much of a string parameter a refusal echoes in
// context.params_input when the parameter was refused for its size.
const EchoLimit = 256

// CutParams returns params with every string but the command cut in the middle to
// at most n bytes, and every list to its first 16 items (strings cut too): what a
// call was refused for being too big is not echoed whole. params is not changed.
func CutParams(params map[string]any, n int) map[string]any {
	out := make(map[string]any, len(params))
	for k, v := range params {
		if k != "command" {
			v = cutValue(v, n)
		}
		out[k] = v
	}
	return out
}

func cutValue(v any, n int) any {
	const items = 16
	switch x := v.(type) {
	case string:
		return CutMiddle(x, n)
	case []string:
		l := make([]any, 0, min(len(x), items+1))
		for _, s := range x[:min(len(x), items)] {
			l = append(l, CutMiddle(s, n))
		}
		if len(x) > items {
			l = append(l, fmt.Sprintf("[… %d more]", len(x)-items))
		}
		return l
	case []any:
		l := make([]any, 0, min(len(x), items+1))
		for _, e := range x[:min(len(x), items)] {
			l = append(l, cutValue(e, n))
		}
		if len(x) > items {
			l = append(l, fmt.Sprintf("[… %d more]", len(x)-items))
		}
		return l
	case map[string]any:
		if len(x) > items {
			return fmt.Sprintf("[an object of %d keys]", len(x))
		}
		return CutParams(x, n)
	}
	return v
}

// line says what a command changed, in one line: "Changed: deleted 1204
// files (deleted src/a.go, …, 1199 more); `shellgate undo 7` puts …", or,
// where the paths name every change, just them: "Changed: added a.go;
// …". Nothing for a command that changed nothing.
func (c *Changed) line(e *Envelope) string {
	if c.Pending {
		return ""
	}
	var parts []string
	for _, p := range []struct {
		n    int
		what string
	}{{c.Deleted, "deleted"}, {c.Modified, "modified"}, {c.Added, "added"}, {c.Mode, "changed the mode of"}} {
		switch {
		case p.n == 1:
			parts = append(parts, p.what+" 1 file")
		case p.n > 1:
			parts = append(parts, fmt.Sprintf("%s %d files", p.what, p.n))
		}
	}
	if c.Ignored > 0 {
		parts = append(parts, fmt.Sprintf("%d now ignored (not deleted)", c.Ignored))
	}
	if c.Git > 0 {
		parts = append(parts, fmt.Sprintf("%d in .git", c.Git))
	}
	if len(parts) == 0 {
		return ""
	}
	s := "Changed: " + strings.Join(parts, ", ")
	if c.More == 0 && c.Ignored == 0 && c.Mode == 0 && len(c.Paths) > 0 {
		// Every change is named ("added a.go"): the counts would say them
		// again; a kind is said once for a run of paths of that kind.
		s = "Changed: " + byKind(c.Paths)
		if c.Git > 0 {
			s += fmt.Sprintf(", %d in .git", c.Git)
		}
	} else if len(c.Paths) > 0 {
		s += " (" + strings.Join(c.Paths, ", ")
		if c.More > 0 {
			s += fmt.Sprintf(", %d more", c.More)
		}
		s += ")"
	}
	return s + "; " + e.undoes(c.Checkpoint, "the project back as it was before") + "."
}

// byKind joins paths ("added a.go"), saying the kind once for each run of
// the same kind: "added a.go, b.go, deleted c.go".
func byKind(paths []string) string {
	var b strings.Builder
	last := ""
	for i, p := range paths {
		if i > 0 {
			b.WriteString(", ")
		}
		kind, path, ok := strings.Cut(p, " ")
		if ok && kind == last {
			p = path
		}
		last = kind
		b.WriteString(p)
	}
	return b.String()
}

// undoes says how checkpoint id puts back what ("the project back as it was
// before", "it back"), to the reader SetUndo names.
func (e *Envelope) undoes(id int, back string) string {
	switch e.undo {
	case UndoTool:
		return fmt.Sprintf("the undo tool with id %d puts %s", id, back)
	case UndoUser:
		return fmt.Sprintf("the user can take it back with `shellgate undo %d`", id)
	}
	return fmt.Sprintf("`shellgate undo %d` puts %s", id, back)
}
