package output

import (
	"fmt"
	"io"
	"strings"
	"sync"
)

// A call reports its two streams together: one digest, one full_output_path.

// DigestText lists the error-like lines of both streams' omitted middles,
// one "stdout line N: TEXT" (or stderr) a line, numbered in their full output
// files.
func DigestText(stdout, stderr Result) string {
	var b strings.Builder
	for _, s := range named(stdout, stderr) {
		for _, l := range s.res.Digest {
			fmt.Fprintf(&b, "%s line %d: %s\n", s.name, l.N, l.Text)
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// Spills is where both streams' complete output went: the first spill file
// (the envelope's full_output_path, "" if none), and notes for what that one
// path cannot say: a second spill file (its Note names the file), a capped
// one, or one that could not be written.
func Spills(stdout, stderr Result) (first string, notes []Note) {
	for _, s := range named(stdout, stderr) {
		switch {
		case s.res.SpillPath == "":
		case first == "":
			first = s.res.SpillPath
		default:
			notes = append(notes, Note{fmt.Sprintf("Full %s: %s", s.name, s.res.SpillPath), s.res.SpillPath})
		}
		if s.res.SpillCapped {
			notes = append(notes, Note{Text: fmt.Sprintf("Full %s file stopped at %d bytes (a file's cap, or the session's for all its files); %d bytes were printed in all.", s.name, s.res.SpillSize, s.res.Total)})
		}
		if s.res.SpillErr != nil {
			notes = append(notes, Note{Text: fmt.Sprintf("Full %s could not be saved: %v", s.name, s.res.SpillErr)})
		}
	}
	return first, notes
}

// A Note is a line of Spills: its text, and the spill file it names, if any.
type Note struct {
	Text string
	File string
}

type namedResult struct {
	name string
	res  Result
}

func named(stdout, stderr Result) []namedResult {
	return []namedResult{{"stdout", stdout}, {"stderr", stderr}}
}

// Detachable passes writes on until Detach, then drops them: a call's
// captures stop growing once its command goes on as a job, whose own logs
// keep the rest. Writes never fail, so the job's copy is never cut short.
type Detachable struct {
	mu sync.Mutex
	w  io.Writer
}

// NewDetachable passes writes on to w.
func NewDetachable(w io.Writer) *Detachable { return &Detachable{w: w} }

func (d *Detachable) Write(p []byte) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.w != nil {
		d.w.Write(p)
	}
	return len(p), nil
}

// Detach drops every later write.
func (d *Detachable) Detach() {
	d.mu.Lock()
	d.w = nil
	d.mu.Unlock()
}
