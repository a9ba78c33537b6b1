// Package jobs keeps the commands of a session that run on after the call that
// started them: their output, kept whole in files and read a piece at a time
// (since the last read, the last lines, the lines matching a pattern), their
// input, how they end, and how long they are remembered afterwards.
//
// What runs, and under which policy and sandbox, is decided by the session
// (package shellgate); a Job only keeps what runs. Memory stays bounded
// whatever a job prints: past its first MemMax bytes, a stream goes to files,
// and reads return at most a budget of it.
package jobs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/shellgate/shellgate/envelope"
	"github.com/shellgate/shellgate/internal/output"
	"github.com/shellgate/shellgate/internal/runner"
)

// Spec describes a job to the Table.
type Spec struct {
	Command   string
	Directory string // relative to the project root, for lists
	TTY       bool
	// Input is the job's stdin (the write end of its pipe) or its terminal
	// (the pty master); nil: the job reads no input.
	Input io.WriteCloser
	// Kill ends the job's process group (it is cancelled); Finish follows.
	Kill func()
	// Interrupt sends the job's process group SIGINT (nil: not possible).
	Interrupt func() error
	// LogDir holds the output files; LogMax caps each.
	LogDir string
	LogMax int64
	// Redact names secrets (name → value) replaced in the output if printed.
	Redact map[string]string
}

// Job is one command running in, or ended in, a session.
type Job struct {
	id      string
	spec    Spec
	started time.Time
	Stdout  *Log
	Stderr  *Log

	// Waiting reports whether the job is blocked reading its input (set by the
	// session, which knows how to look; nil: never).
	Waiting func() bool
	// Screen renders a terminal job's screen as plain text, with the last lines
	// above it when lines > 0 (nil: not a terminal).
	Screen func(lines int) string

	done chan struct{}

	mu        sync.Mutex
	res       runner.Result
	startErr  error
	killed    bool
	ended     time.Time
	cursor    [2]int64 // where the next "since the last read" starts, per stream
	inputGone bool
}

// ID names the job to the job tools.
func (j *Job) ID() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.id
}

// kept reports whether the Table made j a job.
func (j *Job) kept() bool { return strings.HasPrefix(j.ID(), "j") }

// Command is the command line the job runs.
func (j *Job) Command() string { return j.spec.Command }

// Done is closed when the job has ended.
func (j *Job) Done() <-chan struct{} { return j.done }

// Finish records how the job ended; the session calls it when Run returns.
func (j *Job) Finish(res runner.Result, err error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	select {
	case <-j.done:
		return
	default:
	}
	j.Stdout.flush()
	j.Stderr.flush()
	j.res, j.startErr, j.ended = res, err, time.Now()
	if j.spec.Input != nil {
		j.spec.Input.Close()
	}
	close(j.done)
}

// Result is how the job ended; valid once Done is closed.
func (j *Job) Result() (runner.Result, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.res, j.startErr
}

// Started is when the job started.
func (j *Job) Started() time.Time { return j.started }

func (j *Job) over() bool {
	select {
	case <-j.done:
		return true
	default:
		return false
	}
}

// Info describes the job now.
func (j *Job) Info() envelope.Job {
	j.mu.Lock()
	defer j.mu.Unlock()
	info := envelope.Job{
		ID:          j.id,
		State:       envelope.JobRunning,
		Command:     j.spec.Command,
		Directory:   j.spec.Directory,
		TTY:         j.spec.TTY,
		StdoutBytes: j.Stdout.Total(),
		StderrBytes: j.Stderr.Total(),
	}
	end := time.Now()
	if j.ended.IsZero() {
		if j.Waiting != nil && j.Waiting() {
			info.State = envelope.JobWaiting
		}
	} else {
		end = j.ended
		info.State = envelope.JobExited
		if j.killed || j.res.Cancelled || j.res.TimedOut {
			info.State = envelope.JobKilled
		}
		info.ExitCode, info.Signal = j.res.ExitCode, j.res.Signal
	}
	info.RuntimeMS = end.Sub(j.started).Milliseconds()
	return info
}

// ErrInputClosed is returned for input to a job whose input was closed or
// that has ended.
var ErrInputClosed = errors.New("the job's input is closed")

// Send writes p to the job's input.
func (j *Job) Send(p []byte) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.spec.Input == nil || j.inputGone || !j.ended.IsZero() {
		return ErrInputClosed
	}
	_, err := j.spec.Input.Write(p)
	return err
}

// CloseInput ends the job's input (end of file on a pipe).
func (j *Job) CloseInput() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.spec.Input == nil || j.inputGone {
		return ErrInputClosed
	}
	j.inputGone = true
	return j.spec.Input.Close()
}

// Interrupt interrupts the job as Ctrl-C on a terminal would.
func (j *Job) Interrupt() error {
	if j.over() {
		return ErrInputClosed
	}
	if j.spec.Interrupt == nil {
		return errors.New("this job cannot be interrupted; kill it instead")
	}
	return j.spec.Interrupt()
}

// Kill ends the job and everything it started, and waits until it has ended
// or ctx is done.
func (j *Job) Kill(ctx context.Context) error {
	j.mu.Lock()
	if j.ended.IsZero() {
		j.killed = true
	}
	j.mu.Unlock()
	j.spec.Kill()
	select {
	case <-j.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ReadOptions choose what Read returns and how long it waits first.
type ReadOptions struct {
	// TailLines > 0 returns the last lines of the whole output instead of what
	// came since the last read; the read position is not moved.
	TailLines int
	// Filter keeps only the lines that match (complete lines only).
	Filter *regexp.Regexp
	// Wait is how long to wait for something to report: new output (a line
	// matching Until, if set), the job's end, or the job waiting for input.
	Wait time.Duration
	// Until waits for a line of new output matching it.
	Until *regexp.Regexp
	// Ready, when set, is polled while waiting: true ends the wait (a port
	// accepting connections, say).
	Ready func() bool
	// Limit is the most bytes of text returned, both streams together.
	Limit int
	// Peek leaves the read position where it was.
	Peek bool
	// Settle, once new output came, waits on until the job is quiet for a
	// moment (or ends, or waits for input): the whole answer to an input.
	Settle bool
}

// Output is what Read returns.
type Output struct {
	Stdout, Stderr Slice
	Info           envelope.Job
	// Matched: Until matched, or Ready became true, while waiting.
	Matched bool
	// Screen is a terminal job's rendered screen.
	Screen string
}

// Read waits as opts say, then returns the output since the last read (or the
// last lines), and moves the read position past it.
func (j *Job) Read(ctx context.Context, opts ReadOptions) Output {
	if opts.Limit <= 0 {
		opts.Limit = 16 << 10
	}
	matched := j.wait(ctx, opts)
	j.mu.Lock()
	from := j.cursor
	j.mu.Unlock()
	var out Output
	share := opts.Limit / 2
	for i, l := range []*Log{j.Stdout, j.Stderr} {
		var s Slice
		switch {
		case opts.TailLines > 0 && opts.Filter != nil:
			s = l.readLines(0, share, opts.Filter.Match)
			s.Text = lastLines(s.Text, opts.TailLines)
			s.Next = from[i]
		case opts.TailLines > 0:
			s = l.tailLines(opts.TailLines, share)
			s.Next = from[i]
		case opts.Filter != nil:
			s = l.readLines(from[i], share, opts.Filter.Match)
		default:
			s = l.readSince(from[i], share)
		}
		if s.Skipped > 0 && s.Path == "" {
			s.Path = l.filePath() // what was left out is there to read
		}
		if i == 0 {
			out.Stdout = s
		} else {
			out.Stderr = s
		}
	}
	if !opts.Peek && opts.TailLines == 0 {
		j.mu.Lock()
		j.cursor = [2]int64{max(j.cursor[0], out.Stdout.Next), max(j.cursor[1], out.Stderr.Next)}
		j.mu.Unlock()
	}
	out.Matched = matched
	out.Info = j.Info()
	if j.Screen != nil {
		out.Screen = j.Screen(opts.TailLines)
	}
	return out
}

// pollEvery is how often a wait looks at what has no channel: input waits and
// readiness probes.
const pollEvery = 50 * time.Millisecond

// wait blocks as opts say; it reports whether Until or Ready was met.
func (j *Job) wait(ctx context.Context, opts ReadOptions) bool {
	if opts.Wait <= 0 {
		return opts.Ready != nil && opts.Ready() || opts.Until != nil && j.sawLine(opts.Until)
	}
	deadline := time.NewTimer(opts.Wait)
	defer deadline.Stop()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	j.mu.Lock()
	from := j.cursor
	j.mu.Unlock()
	for {
		outCh, errCh := j.Stdout.Changed(), j.Stderr.Changed()
		switch {
		case opts.Ready != nil && opts.Ready():
			return true
		case opts.Until != nil && j.sawLine(opts.Until):
			return true
		case opts.Until == nil && opts.Ready == nil && !opts.Settle &&
			(j.Stdout.Total() > from[0] || j.Stderr.Total() > from[1]):
			return false
		case opts.Settle && (j.Stdout.Total() > from[0] || j.Stderr.Total() > from[1]):
			j.quiet(ctx, deadline.C)
			return false
		case j.over():
			return false
		case !opts.Settle && j.Waiting != nil && j.Waiting():
			return false // (after input, it waits until the answer has come)
		}
		select {
		case <-outCh:
		case <-errCh:
		case <-j.done:
		case <-tick.C:
		case <-deadline.C:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

// quietFor is how long output must pause for an answer to count as complete;
// quietWaiting is enough when the job is also back waiting for input.
const (
	quietFor     = 300 * time.Millisecond
	quietWaiting = 100 * time.Millisecond
)

// quiet waits until no output came for quietFor (or for quietWaiting, with the
// job waiting for input again), the job ended, or until stop. Waiting for
// input alone is no sign of an answer's end: a line editor is back in its
// read between every key it echoes.
func (j *Job) quiet(ctx context.Context, stop <-chan time.Time) {
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	last, since := j.Stdout.Total()+j.Stderr.Total(), time.Now()
	for {
		select {
		case <-tick.C:
		case <-j.done:
			return
		case <-stop:
			return
		case <-ctx.Done():
			return
		}
		if n := j.Stdout.Total() + j.Stderr.Total(); n != last {
			last, since = n, time.Now()
			continue
		}
		q := time.Since(since)
		if q >= quietFor || q >= quietWaiting && j.Waiting != nil && j.Waiting() {
			return
		}
	}
}

// sawLine reports whether a complete line since the read position matches re.
func (j *Job) sawLine(re *regexp.Regexp) bool {
	j.mu.Lock()
	from := j.cursor
	j.mu.Unlock()
	for i, l := range []*Log{j.Stdout, j.Stderr} {
		if s := l.readLines(from[i], 1<<20, re.Match); s.Text != "" {
			return true
		}
	}
	return false
}

// remove deletes the job's files.
func (j *Job) remove() {
	j.Stdout.Remove()
	j.Stderr.Remove()
}

// lastLines keeps the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "")
}

// text is output bytes as the model reads them: valid UTF-8.
func text(b []byte) string {
	t, _ := output.Text(b)
	return t
}

func cutMarker(n int64, path string) string {
	return fmt.Sprintf("\n... [%d bytes omitted; full output: %s] ...\n", n, path)
}
