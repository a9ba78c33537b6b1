package shellgate

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/shellgate/shellgate/envelope"
	"github.com/shellgate/shellgate/internal/hostscan"
	"github.com/shellgate/shellgate/internal/jobs"
	"github.com/shellgate/shellgate/internal/sandbox"
)

// JobRead says what Session.Output returns, and how long it may wait first.
type JobRead struct {
	// TailLines > 0: the last lines of the whole output, instead of what came
	// since the last read.
	TailLines int `json:"tail_lines,omitempty"`
	// Filter (a regular expression) keeps only the lines that match.
	Filter string `json:"filter,omitempty"`
	// WaitMS waits up to this long for new output, the job's end, or input
	// being waited for; with Until or Port, for those instead (0 there:
	// UntilWait, as one asking for a line or a port means to wait for it).
	WaitMS int64 `json:"wait_ms,omitempty"`
	// Until (a regular expression) waits for a line of output matching it: a
	// server's "listening on" line, say.
	Until string `json:"until,omitempty"`
	// Port waits until something in the session listens on this TCP port.
	Port int `json:"port,omitempty"`
	// MaxOutputBytes bounds the text returned; 0: the configured output limit.
	MaxOutputBytes int `json:"max_output_bytes,omitempty"`
}

func (r JobRead) params(id string) map[string]any {
	p := map[string]any{"job_id": id}
	for k, v := range map[string]any{"tail_lines": r.TailLines, "filter": r.Filter, "wait_ms": r.WaitMS, "until": r.Until, "port": r.Port, "max_output_bytes": r.MaxOutputBytes} {
		switch x := v.(type) {
		case int:
			if x != 0 {
				p[k] = x
			}
		case int64:
			if x != 0 {
				p[k] = x
			}
		case string:
			if x != "" {
				p[k] = x
			}
		}
	}
	return p
}

// UntilWait is how long a JobRead with Until or Port and no WaitMS waits
// (no longer than the configured longest timeout).
const UntilWait = 30 * time.Second

// Output returns a job's output since the last read (or as r says), after
// waiting as r says.
func (s *Session) Output(ctx context.Context, id string, r JobRead) envelope.Envelope {
	params := r.params(id)
	j, ok := s.jobs.Get(id)
	if !ok {
		return s.unknownJob(id, params)
	}
	opts, msg := s.readOptions(r)
	if msg != "" {
		return jobFailure(j, params, envelope.InvalidParam, msg)
	}
	if r.Port != 0 {
		port := r.Port
		opts.Ready = func() bool { return s.listening(port) }
	}
	out := j.Read(ctx, opts)
	env := jobEnvelope(j, params, s.Cwd())
	fillJob(&env, j, out, s.sandbox())
	switch {
	case r.Until != "" && !out.Matched && !out.Info.Running():
		env.Note(fmt.Sprintf("The job ended without printing a line matching %q.", r.Until))
	case r.Until != "" && !out.Matched:
		env.Note(fmt.Sprintf("No line matching %q within %dms.", r.Until, opts.Wait.Milliseconds()))
	case r.Port != 0 && out.Matched:
		env.Note(fmt.Sprintf("Port %d accepts connections in this session.", r.Port))
	case r.Port != 0:
		env.Note(fmt.Sprintf("Nothing listens on port %d yet (waited %dms).", r.Port, opts.Wait.Milliseconds()))
	}
	return *env.Settle()
}

// readOptions checks r and turns it into the jobs package's options.
func (s *Session) readOptions(r JobRead) (jobs.ReadOptions, string) {
	maxWait := s.g.cfg.MaxTimeout.Milliseconds()
	o := jobs.ReadOptions{TailLines: r.TailLines, Wait: time.Duration(r.WaitMS) * time.Millisecond, Limit: s.g.cfg.OutputLimit}
	switch {
	case r.TailLines < 0:
		return o, fmt.Sprintf("tail_lines must be a positive number of lines (got %d).", r.TailLines)
	case r.WaitMS < 0 || r.WaitMS > maxWait:
		return o, fmt.Sprintf("wait_ms must be between 0 and %d (got %d).", maxWait, r.WaitMS)
	case r.Port < 0 || r.Port > 65535:
		return o, fmt.Sprintf("port must be a TCP port, 1…65535 (got %d).", r.Port)
	case r.MaxOutputBytes < 0 || r.MaxOutputBytes > s.g.cfg.MaxOutputLimit:
		return o, fmt.Sprintf("max_output_bytes must be between 1 and %d (got %d).", s.g.cfg.MaxOutputLimit, r.MaxOutputBytes)
	}
	if r.MaxOutputBytes > 0 {
		o.Limit = r.MaxOutputBytes
	}
	if r.WaitMS == 0 && (r.Until != "" || r.Port != 0) {
		o.Wait = min(UntilWait, s.g.cfg.MaxTimeout)
	}
	if msg := tooLong("filter", len(r.Filter), MaxPattern, "Match a shorter pattern."); msg != "" {
		return o, msg
	}
	if msg := tooLong("until", len(r.Until), MaxPattern, "Wait for a shorter pattern."); msg != "" {
		return o, msg
	}
	var err error
	if r.Filter != "" {
		if o.Filter, err = regexp.Compile(r.Filter); err != nil {
			return o, fmt.Sprintf("filter is not a valid regular expression (Go RE2 syntax): %v.", err)
		}
	}
	if r.Until != "" {
		if o.Until, err = regexp.Compile(r.Until); err != nil {
			return o, fmt.Sprintf("until is not a valid regular expression (Go RE2 syntax): %v.", err)
		}
	}
	return o, ""
}

// JobInput is what Session.Input sends to a job.
type JobInput struct {
	// Text is sent as is; a terminal job gets "\r" for each "\n", as a keyboard would.
	Text string `json:"text,omitempty"`
	// Keys are sent after Text: Enter, Tab, Escape, Backspace, Up, Down, Left,
	// Right, Ctrl-C, Ctrl-D … On a job without a terminal, Ctrl-C interrupts its
	// process group and Ctrl-D closes its input (end of file).
	Keys []string `json:"keys,omitempty"`
	// WaitMS waits up to this long for the job's answer (new output, its end,
	// or waiting for input again) before returning. Default 1000.
	WaitMS *int64 `json:"wait_ms,omitempty"`
}

// DefaultInputWait is how long Input waits for an answer when JobInput.WaitMS is nil.
const DefaultInputWait = time.Second

// Input sends text and keys to a job, then returns its output since the last
// read, once it answered or WaitMS passed.
func (s *Session) Input(ctx context.Context, id string, in JobInput) envelope.Envelope {
	began := time.Now()
	// What is typed into a job (a shell on a terminal) is never judged: it
	// gets a checkpoint like a command.
	cp, refused := s.g.checkpointInput(s, id, in)
	if refused != nil {
		return *refused
	}
	env := s.input(ctx, id, in)
	cp.finish(&env, nil)
	s.g.noteAppeared(&env, s.id)
	s.g.auditJob(s.id, id, "input", in.Text+strings.Join(in.Keys, " "), &env, began)
	return env
}

func (s *Session) input(ctx context.Context, id string, in JobInput) envelope.Envelope {
	params := map[string]any{"job_id": id}
	if in.Text != "" {
		params["text"] = in.Text
	}
	if len(in.Keys) > 0 {
		params["keys"] = in.Keys
	}
	if in.WaitMS != nil {
		params["wait_ms"] = *in.WaitMS
	}
	j, ok := s.jobs.Get(id)
	if !ok {
		return s.unknownJob(id, params)
	}
	wait := DefaultInputWait
	if in.WaitMS != nil {
		if *in.WaitMS < 0 || *in.WaitMS > s.g.cfg.MaxTimeout.Milliseconds() {
			return jobFailure(j, params, envelope.InvalidParam, fmt.Sprintf("wait_ms must be between 0 and %d (got %d).", s.g.cfg.MaxTimeout.Milliseconds(), *in.WaitMS))
		}
		wait = time.Duration(*in.WaitMS) * time.Millisecond
	}
	if msg := tooLong("text", len(in.Text), MaxInputText, "Write a long text to a file in the project and have the job read that file."); msg != "" {
		return jobFailure(j, params, envelope.InvalidParam, msg)
	}
	if len(in.Keys) > MaxInputKeys {
		return jobFailure(j, params, envelope.InvalidParam,
			fmt.Sprintf("Parameter 'keys' has %d keys; at most %d are accepted in one call.", len(in.Keys), MaxInputKeys))
	}
	if in.Text == "" && len(in.Keys) == 0 {
		return jobFailure(j, params, envelope.InvalidParam, "Give text or keys to send.")
	}
	if !j.Info().Running() {
		return jobFailure(j, params, envelope.ExecutionError, fmt.Sprintf("Job %s has ended; it reads no more input. Its output is still there to read.", id))
	}
	if err := j.Type(in.Text, in.Keys); err != nil {
		code := envelope.InvalidParam
		if errors.Is(err, jobs.ErrInputClosed) {
			code = envelope.ExecutionError
		}
		return jobFailure(j, params, code, err.Error())
	}
	out := j.Read(ctx, jobs.ReadOptions{Wait: wait, Limit: s.g.cfg.OutputLimit, Settle: true})
	env := jobEnvelope(j, params, s.Cwd())
	fillJob(&env, j, out, s.sandbox())
	return *env.Settle()
}

// Kill ends a job and everything it started, and returns its last output.
func (s *Session) Kill(ctx context.Context, id string) envelope.Envelope {
	began := time.Now()
	env := s.kill(ctx, id)
	s.g.auditJob(s.id, id, "kill", "", &env, began)
	return env
}

func (s *Session) kill(ctx context.Context, id string) envelope.Envelope {
	params := map[string]any{"job_id": id}
	j, ok := s.jobs.Get(id)
	if !ok {
		return s.unknownJob(id, params)
	}
	wasRunning := j.Info().Running()
	if err := j.Kill(ctx); err != nil {
		return jobFailure(j, params, envelope.Cancelled, fmt.Sprintf("Job %s was signalled but had not ended when the call was cancelled.", id))
	}
	out := j.Read(ctx, jobs.ReadOptions{Limit: s.g.cfg.OutputLimit})
	env := jobEnvelope(j, params, s.Cwd())
	fillJob(&env, j, out, s.sandbox())
	if !wasRunning {
		env.Note(fmt.Sprintf("Job %s had already ended.", id))
	}
	return *env.Settle()
}

// Jobs lists the session's jobs, oldest first.
func (s *Session) Jobs() envelope.Envelope {
	list := []envelope.Job{}
	for _, j := range s.jobs.List() {
		list = append(list, j.Info())
	}
	env := envelope.Envelope{Data: envelope.Data{Jobs: list}, Context: envelope.Context{Cwd: s.Cwd(), ParamsInput: map[string]any{}}}
	return *env.Settle()
}

// jobEnvelope is the start of the envelope of a job call.
func jobEnvelope(j *jobs.Job, params map[string]any, cwd string) envelope.Envelope {
	info := j.Info()
	return envelope.Envelope{
		Data:    envelope.Data{Command: j.Command(), Directory: info.Directory},
		Context: envelope.Context{Cwd: cwd, ParamsInput: params, DirectoryResolved: info.Directory},
	}
}

// A refusal does not echo its parameters whole: one may be what was refused.
func jobFailure(j *jobs.Job, params map[string]any, code envelope.Code, msg string) envelope.Envelope {
	return envelope.NotRun(j.Command(), envelope.CutParams(params, envelope.EchoLimit), envelope.Err{Code: code, Message: msg})
}

// sandbox returns the session's sandbox session, if one is running.
func (s *Session) sandbox() *sandbox.Session {
	s.box.mu.Lock()
	defer s.box.mu.Unlock()
	return s.box.session
}

// listening reports whether something in the session listens on TCP port.
func (s *Session) listening(port int) bool {
	pid := 0
	if sb := s.sandbox(); sb != nil {
		pid = sb.NetPID()
	}
	return hostscan.TCPListening(pid, port)
}

// fillJob puts a job read into env.
func fillJob(env *envelope.Envelope, j *jobs.Job, out jobs.Output, sess *sandbox.Session) {
	info := out.Info
	info.Command, info.Directory = "", "" // data.command and data.directory say them
	d := &env.Data
	d.Job = &info
	d.Stdout, d.Stderr = out.Stdout.Text, out.Stderr.Text
	if out.Screen != "" || info.TTY {
		d.Stdout = out.Screen
	}
	d.ExitCode = info.ExitCode
	if info.Signal != "" {
		sig := info.Signal
		d.Signal = &sig
	}
	env.Stats = envelope.Stats{TimeMS: info.RuntimeMS, StdoutBytes: info.StdoutBytes, StderrBytes: info.StderrBytes}
	for _, sl := range []jobs.Slice{out.Stdout, out.Stderr} {
		if sl.Skipped > 0 && !info.TTY { // a terminal's read is its screen
			d.Truncated = true
			env.NoteFile(fmt.Sprintf("%d bytes not shown; the job's full output: %s", sl.Skipped, sl.Path), sl.Path)
		}
	}
	if res, err := j.Result(); err == nil && !info.Running() {
		if len(res.BackgroundPIDs) > 0 {
			d.BackgroundPIDs = res.BackgroundPIDs
			if sess != nil {
				d.BackgroundPIDs = sess.InnerPIDs(res.BackgroundPIDs)
			}
		}
		for _, n := range res.Notes {
			env.Note(n)
		}
	}
}

// unknownJob is the answer for a job id the session does not know.
func (s *Session) unknownJob(id string, params map[string]any) envelope.Envelope {
	known := ""
	for _, j := range s.jobs.List() {
		if known != "" {
			known += ", "
		}
		known += j.ID()
	}
	if known == "" {
		known = "none"
	}
	return envelope.NotRun("", envelope.CutParams(params, envelope.EchoLimit), envelope.Err{Code: envelope.NotFound,
		Message: fmt.Sprintf("No job %q in this session (jobs: %s). Ended jobs are forgotten after a while.", envelope.CutMiddle(id, 64), known)})
}
