package envelope

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Fail makes e an error envelope with the given code and message and settles it.
func (e *Envelope) Fail(code Code, message string) *Envelope {
	e.Error = &Err{Code: code, Message: message}
	return e.Settle()
}

// Settle applies seed 001's status rules to the data gathered so far and writes the
// text summary. Call it last: it reads Data, Stats and Error and sets Status and Text.
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
	if d.Directory == "" {
		d.Directory = e.Context.DirectoryResolved
	}
	silent := e.Stats.StdoutBytes == 0 && e.Stats.StderrBytes == 0
	switch {
	case e.Error != nil:
	case d.TimedOut && silent:
		e.Error = &Err{Code: Timeout, Message: fmt.Sprintf("Command timed out with no output (after %s).", ms(e.Stats.TimeMS))}
	case d.Cancelled && silent:
		e.Error = &Err{Code: Cancelled, Message: "Command was cancelled before it produced any output."}
	}
	switch {
	case e.Error != nil:
		e.Status = Error
	case d.ExitCode != nil && *d.ExitCode == 0 && !d.Truncated && !d.TimedOut && !d.Cancelled:
		e.Status = Success
	default:
		e.Status = Partial
	}
	e.Text = e.render()
	return e
}

// ran reports whether a process was started and finished in some way.
func (e *Envelope) ran() bool {
	d := e.Data
	return d.ExitCode != nil || d.Signal != nil || d.TimedOut || d.Cancelled
}

// render writes seed 001 §7's text:
//
//	Command {succeeded|failed}: <command>
//	(Exit code X. Took Tms)
//	[warnings]
//
//	--- STDOUT (N bytes) ---
//	...
func (e *Envelope) render() string {
	var b strings.Builder
	e.writeSummary(&b)
	d := e.Data
	if !e.ran() {
		return strings.TrimRight(b.String(), "\n")
	}
	if d.Binary {
		fmt.Fprintf(&b, "\n--- BINARY OUTPUT (%d bytes stdout, %d bytes stderr), not shown ---\n", e.Stats.StdoutBytes, e.Stats.StderrBytes)
		return strings.TrimRight(b.String(), "\n")
	}
	section := func(name, text string, n int64) {
		if n == 0 && text == "" {
			return
		}
		fmt.Fprintf(&b, "\n--- %s (%d bytes) ---\n%s", name, n, text)
		if !strings.HasSuffix(text, "\n") {
			b.WriteByte('\n')
		}
	}
	section("STDOUT", d.Stdout, e.Stats.StdoutBytes)
	section("STDERR", d.Stderr, e.Stats.StderrBytes)
	if e.Stats.StdoutBytes == 0 && e.Stats.StderrBytes == 0 {
		b.WriteString("\n(no output)\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// Summary is the text without the output sections: how the command ended, the error
// and the warnings. For a display that has already shown the output live. Call it
// after Settle.
func (e *Envelope) Summary() string {
	var b strings.Builder
	e.writeSummary(&b)
	return strings.TrimRight(b.String(), "\n")
}

// writeSummary writes the header, the ending, the error and the warnings.
func (e *Envelope) writeSummary(b *strings.Builder) {
	d := e.Data
	// The header says how the command itself ended; the warnings below say what else
	// made the result partial (truncation, background processes).
	cmd := headline(d.Command)
	switch {
	case e.Status == Error && !e.ran():
		fmt.Fprintf(b, "Command not run: %s\n", cmd)
	case d.ExitCode != nil && *d.ExitCode == 0 && !d.TimedOut && !d.Cancelled:
		fmt.Fprintf(b, "Command succeeded: %s\n", cmd)
	default:
		fmt.Fprintf(b, "Command failed: %s\n", cmd)
	}
	if e.ran() {
		fmt.Fprintf(b, "(%s. Took %s)\n", e.ending(), ms(e.Stats.TimeMS))
	}
	if e.Error != nil {
		fmt.Fprintf(b, "Error %s: %s\n", e.Error.Code, e.Error.Message)
	}
	for _, w := range e.warnings() {
		fmt.Fprintf(b, "[%s]\n", w)
	}
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

func (e *Envelope) warnings() []string {
	d := e.Data
	var w []string
	if d.TimedOut {
		w = append(w, fmt.Sprintf("Timed out after %s: the command and everything it started were killed. Output printed before the kill is kept. Allow a longer timeout, or run long jobs in the background.", ms(e.Stats.TimeMS)))
	}
	if d.Cancelled {
		w = append(w, "Cancelled: the command and everything it started were killed.")
	}
	if d.Binary {
		w = append(w, "Binary output: not shown as text.")
	}
	if d.Truncated {
		w = append(w, "Truncated: Output exceeded limit; the head and tail are shown. Narrow the command or redirect to a file.")
	}
	if d.FullOutputPath != nil {
		w = append(w, "Full output: "+*d.FullOutputPath)
	}
	w = append(w, e.notes...)
	if len(d.BackgroundPIDs) > 0 {
		pids := make([]string, len(d.BackgroundPIDs))
		for i, p := range d.BackgroundPIDs {
			pids[i] = fmt.Sprint(p)
		}
		w = append(w, "Background processes still running: "+strings.Join(pids, ", "))
	}
	return w
}

// maxHeadline bounds the command as quoted in the text; data.command and
// context.params_input keep it whole.
const maxHeadline = 300

// headline is the command for the text's first line: whole if short, else its first
// bytes (cut at a rune boundary) and its length.
func headline(cmd string) string {
	if len(cmd) <= maxHeadline {
		return cmd
	}
	cut := maxHeadline
	for cut > 0 && !utf8.RuneStart(cmd[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes in all)", cmd[:cut], len(cmd))
}

func ms(n int64) string { return fmt.Sprintf("%dms", n) }
