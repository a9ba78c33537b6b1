package shellgate

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shellgate/shellgate/envelope"
	"github.com/shellgate/shellgate/internal/jobs"
	"github.com/shellgate/shellgate/internal/output"
	"github.com/shellgate/shellgate/internal/runner"
	"github.com/shellgate/shellgate/internal/sandbox"
	"github.com/shellgate/shellgate/internal/shell"
	"github.com/shellgate/shellgate/internal/shellstate"
	"github.com/shellgate/shellgate/internal/terminal"
)

// JobLimits bound a session's jobs: how many run at once, and how many ended
// ones are remembered and for how long (zero fields: the defaults, 16, 32 and
// 30 minutes).
type JobLimits = jobs.Limits

// SessionConfig configures a Session.
type SessionConfig struct {
	// ID names the session in logs; the MCP server gives its session's id.
	ID string
	// Jobs bounds the session's jobs (zero: the Gate's Sessions.Jobs).
	Jobs JobLimits
	// KeepExports carries exported variables to the next commands, as cd is
	// carried (or the Gate's Sessions.KeepExports).
	KeepExports bool
}

// Session is a sequence of calls that share a working directory, jobs and, on
// Linux, a sandbox session with its own network namespace: a server started in
// the background answers the session's next commands on localhost. `cd` in a
// command (bash) moves the session's directory for the next call, within the
// root (checked again at every call). The MCP server keeps one per client
// connection. Close it when the client goes away: it kills every job.
type Session struct {
	g    *Gate
	id   string
	sup  *runner.Supervisor
	box  *box
	jobs *jobs.Table

	keepExports bool
	exports     shellstate.Exports // carried from earlier commands (KeepExports)

	mu     sync.Mutex
	cwd    string // relative to the root, POSIX separators
	closed bool
}

// NewSession returns a new session of g, in the root. Gate.Close closes it too.
func (g *Gate) NewSession(c SessionConfig) *Session {
	sup := runner.NewSupervisor()
	sup.KillGrace = g.cfg.KillGrace
	limits := c.Jobs
	if limits == (JobLimits{}) {
		limits = g.cfg.Sessions.Jobs
	}
	s := &Session{
		g: g, id: c.ID, sup: sup, cwd: ".",
		box:         &box{mode: g.box.mode, wanted: g.box.wanted, sup: sup},
		jobs:        jobs.NewTable(limits),
		keepExports: c.KeepExports || g.cfg.Sessions.KeepExports,
	}
	g.sessMu.Lock()
	defer g.sessMu.Unlock()
	if g.sessions == nil {
		g.sessions = map[*Session]bool{}
	}
	g.sessions[s] = true
	return s
}

// Warm starts the session's sandbox now, in the background, so that its first
// command does not wait for it (an MCP server calls it when a client connects).
func (s *Session) Warm() {
	if !s.g.sandboxed() {
		return
	}
	go s.g.session(s.box, s.sup)
}

// ID is the session's id, as configured.
func (s *Session) ID() string { return s.id }

// Cwd is the session's working directory, relative to the root.
func (s *Session) Cwd() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cwd
}

// Close kills every job of the session and everything its commands left
// running, ends its sandbox, and removes its jobs' output files.
func (s *Session) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	s.g.sessMu.Lock()
	delete(s.g.sessions, s)
	s.g.sessMu.Unlock()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := s.jobs.Close(ctx)
	if supErr := s.sup.Close(); err == nil {
		err = supErr
	}
	if boxErr := s.box.close(); err == nil {
		err = boxErr
	}
	return err
}

// Run is Gate.Run in the session: the command runs in the session's directory
// unless req gives one, and may become a job (RunInBackground, YieldAfterMS,
// TTY, or waiting for input).
func (s *Session) Run(ctx context.Context, req Request, opts ...Option) envelope.Envelope {
	c, opts := s.g.startAudit(req, s.id, opts)
	env := s.run(ctx, req, opts...)
	s.g.audit(c, &env)
	return env
}

func (s *Session) run(ctx context.Context, req Request, opts ...Option) envelope.Envelope {
	o := options(opts)
	if msg := s.validate(req, o); msg != "" {
		return envelope.NotRun(req.Command, envelope.CutParams(req.params(), envelope.EchoLimit), envelope.Err{Code: envelope.InvalidParam, Message: msg})
	}
	a, refused := s.g.admit(ctx, req, o, s.Cwd(), s.box)
	if refused != nil {
		return *refused
	}
	label := "run"
	switch {
	case req.TTY:
		label = "terminal"
	case req.RunInBackground:
		label = "job"
	}
	cp, refused := s.g.checkpoint(a, label, req.Command, s.id)
	if refused != nil {
		return *refused
	}
	if o.stdio != nil { // connected to the caller's own files: nothing to keep as a job
		sess, failed := s.g.confine(&a.env, s.box)
		if failed != nil {
			return *failed
		}
		env, secrets := s.g.childEnv()
		stdout, stderr := s.g.captures(a.budget, o, secrets)
		ended := s.g.egressCall(s.box, o, req.Command, s.id)
		res, err := s.sup.Run(ctx, s.spec(a, req.Command, s.exports.Apply(env), o.stdio.in, o.stdio.out, o.stdio.err))
		ended()
		out := s.g.finish(&a.env, res, err, stdout, stderr, a.budget, sess, o)
		cp.finish(&out, nil)
		s.g.noteAppeared(&out, s.id)
		return out
	}
	ended := s.g.egressCall(s.box, o, req.Command, s.id)
	out := s.execute(ctx, a, req, o)
	afterJob(s.jobDone(out), ended) // egress.go
	cp.finish(&out, s.jobDone(out))
	s.g.noteAppeared(&out, s.id)
	return out
}

// jobDone is the end of the job env describes, if it is one of the session's.
func (s *Session) jobDone(env envelope.Envelope) <-chan struct{} {
	if env.Data.Job == nil {
		return nil
	}
	if j, ok := s.jobs.Get(env.Data.Job.ID); ok {
		return j.Done()
	}
	return nil
}

// validate checks the fields only a session takes.
func (s *Session) validate(req Request, o runOptions) string {
	maxMS := s.g.cfg.MaxTimeout.Milliseconds()
	switch {
	case req.YieldAfterMS != nil && req.YieldAfter != 0:
		return "Give yield_after_ms once: YieldAfter or YieldAfterMS, not both."
	case req.YieldAfterMS != nil && (*req.YieldAfterMS < 1 || *req.YieldAfterMS > maxMS):
		return fmt.Sprintf("yield_after_ms must be an integer between 1 and %d (got %d).", maxMS, *req.YieldAfterMS)
	case req.YieldAfter < 0 || req.YieldAfter > s.g.cfg.MaxTimeout:
		return fmt.Sprintf("YieldAfter must be between 1ms and %s (got %s).", s.g.cfg.MaxTimeout, req.YieldAfter)
	case o.stdio != nil && (req.RunInBackground || req.TTY || req.YieldAfterMS != nil || req.YieldAfter != 0):
		return "A command connected to the caller's stdio (WithStdio) cannot become a job."
	}
	return ""
}

func yieldOf(req Request) time.Duration {
	if req.YieldAfterMS != nil {
		return time.Duration(*req.YieldAfterMS) * time.Millisecond
	}
	return req.YieldAfter
}

// spec is the runner's description of an admitted command.
func (s *Session) spec(a *admitted, command string, env []string, in io.Reader, out, errw io.Writer) runner.Spec {
	return runner.Spec{
		Argv:      s.g.shell.Argv(command),
		Dir:       a.dir,
		Env:       s.g.keepCreated(&a.env, env),
		Stdin:     in,
		Stdout:    out,
		Stderr:    errw,
		KillGrace: s.g.cfg.KillGrace,
	}
}

// A call is one Run in the session: its command runs as a job from the start,
// so that it can go on as one (yield, waiting for input) without a restart.
type call struct {
	s        *Session
	a        *admitted
	job      *jobs.Job
	sess     *sandbox.Session
	stdout   *output.Capture // the call's own envelope, while it is one
	stderr   *output.Capture
	callOut  *detachable
	callErr  *detachable
	report   *shellstate.Report // what the shell reports on exit: its directory, its exports
	env      []string           // the environment the command was given
	cancel   context.CancelFunc
	timedOut atomic.Bool
	pid      atomic.Int64
	timer    *time.Timer // the timeout; stopped when a default timeout no longer applies
	asJob    bool        // a job from the start: in the background or on a terminal
	noRoom   error       // why it could not go on as a job (the session's job limit)
}

// execute starts the command as a job and waits for it to end, to wait for
// input, to pass yield_after_ms, or — for a background one — to start.
func (s *Session) execute(ctx context.Context, a *admitted, req Request, o runOptions) envelope.Envelope {
	g := s.g
	env := &a.env
	sess, failed := g.confine(env, s.box)
	if failed != nil {
		return *failed
	}
	c := &call{s: s, a: a, sess: sess, asJob: req.RunInBackground || req.TTY}
	job, err := c.start(req, o)
	if err != nil {
		return *env.Fail(envelope.ExecutionError, fmt.Sprintf("Not run: %v.", err))
	}
	c.job = job
	explicit := req.TimeoutMS != nil || req.Timeout != 0
	if !req.RunInBackground || explicit {
		c.timer = time.AfterFunc(a.timeout, func() { c.timedOut.Store(true); c.cancel() })
	}
	env.Context.TimeoutMS = a.timeout.Milliseconds()
	if req.RunInBackground {
		return c.becomeJob(ctx, explicit, "Started in the background.")
	}
	yieldAfter := yieldOf(req)
	if yieldAfter == 0 && req.TTY {
		yieldAfter = DefaultTerminalYield
	}
	var yield <-chan time.Time
	if yieldAfter > 0 {
		t := time.NewTimer(yieldAfter)
		defer t.Stop()
		yield = t.C
	}
	look := time.NewTicker(inputPoll)
	defer look.Stop()
	var printed int64 = -1
	quietSince := time.Now()
	for {
		select {
		case <-job.Done():
			if req.TTY {
				return c.becomeJob(ctx, explicit, "")
			}
			return c.finish(o)
		case <-ctx.Done():
			c.cancel()
			<-job.Done()
			if req.TTY {
				return c.becomeJob(ctx, explicit, "")
			}
			return c.finish(o)
		case <-yield:
			if err := c.s.jobs.Keep(job, false); err != nil {
				c.noRoom = err // it stays a call: waits for its end or its timeout
				continue
			}
			return c.becomeJob(ctx, explicit, fmt.Sprintf("Still running after %s; nothing was killed: it goes on as a job.", yieldAfter))
		case now := <-look.C:
			// Waiting for input, and quiet: a prompt, not a program that also
			// reads its input while it works.
			if n := job.Stdout.Total() + job.Stderr.Total(); n != printed {
				printed, quietSince = n, now
			}
			// On a terminal, a program may wait for the terminal's answer to a
			// query before it prints anything: give it a moment to start.
			starting := req.TTY && printed == 0 && now.Sub(job.Started()) < time.Second
			if now.Sub(quietSince) >= inputQuiet && !starting && c.noRoom == nil && job.Waiting() {
				if err := c.s.jobs.Keep(job, false); err != nil {
					c.noRoom = err
					continue
				}
				return c.becomeJob(ctx, explicit, "") // the headline and its hint say it
			}
		}
	}
}

// DefaultTerminalYield is how long a terminal call waits for its command to
// end or to wait for input before it returns the screen and lets it run on.
const DefaultTerminalYield = 2 * time.Second

// inputQuiet is how long a command must print nothing, while it waits for
// input, to count as waiting for an answer.
const inputQuiet = 200 * time.Millisecond

// inputPoll is how often a running call looks whether its command waits for input.
const inputPoll = 100 * time.Millisecond

// start starts the command with a pipe for its input, and one for the shell to
// say where it ended up (bash: a trap on EXIT; see cwdPrologue) — or, for a
// terminal job, on a pseudo-terminal.
func (c *call) start(req Request, o runOptions) (*jobs.Job, error) {
	if req.TTY {
		return c.startTerminal(req)
	}
	s, g, a := c.s, c.s.g, c.a
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer inR.Close() // the command has its own copy once started
	var extra []*os.File
	script := req.Command
	if g.shell.Kind == shell.Bash {
		rep, w, err := shellstate.NewReport()
		if err != nil {
			inW.Close()
			return nil, err
		}
		defer w.Close()
		c.report, extra = rep, []*os.File{w}
		script = shellstate.Prologue(s.keepExports) + script
	}
	env, secrets := g.childEnv()
	c.env = s.exports.Apply(env)
	job, jctx, err := c.newJob(req, inW, secrets)
	if err != nil {
		inW.Close()
		if c.report != nil {
			c.report.Take()
		}
		return nil, err
	}
	c.stdout, c.stderr = g.captures(a.budget, o, secrets)
	c.callOut = &detachable{w: tee(c.stdout, "stdout", o.onOutput, secrets)}
	c.callErr = &detachable{w: tee(c.stderr, "stderr", o.onOutput, secrets)}
	spec := s.spec(a, script, c.env, inR, io.MultiWriter(job.Stdout, c.callOut), io.MultiWriter(job.Stderr, c.callErr))
	spec.ExtraFiles = extra
	c.run(jctx, job, spec, inW, nil)
	return job, nil
}

// newJob registers the command with the session's jobs; its context ends it.
func (c *call) newJob(req Request, input io.WriteCloser, secrets map[string]string) (*jobs.Job, context.Context, error) {
	g := c.s.g
	jctx, cancel := context.WithCancel(context.Background())
	job, err := c.s.jobs.New(jobs.Spec{
		Command: req.Command, Directory: c.a.env.Data.Directory, TTY: req.TTY,
		Input: input, Kill: cancel, LogDir: g.spill, LogMax: g.cfg.SpillMax, Redact: secrets,
		Interrupt: func() error { return interruptGroup(int(c.pid.Load())) },
	}, c.asJob)
	if err != nil {
		cancel()
		return nil, nil, err
	}
	c.cancel = cancel
	return job, jctx, nil
}

// run starts spec as job's command and returns once it has started (or
// failed to); drained, if set, is waited for (briefly) before the job ends:
// the terminal's last output.
func (c *call) run(jctx context.Context, job *jobs.Job, spec runner.Spec, input *os.File, drained <-chan struct{}) {
	started := make(chan struct{})
	spec.Started = func(pid int) { c.pid.Store(int64(pid)); close(started) }
	job.Waiting = func() bool {
		pid := int(c.pid.Load())
		return pid > 0 && runner.WaitingForInput(pid, input)
	}
	go func() {
		res, err := c.s.sup.Run(jctx, spec)
		if drained != nil {
			select {
			case <-drained:
			case <-time.After(terminalDrain):
			}
		}
		job.Finish(res, err)
	}()
	select {
	case <-started:
	case <-job.Done():
	}
}

// Terminal jobs get a screen this large, and keep this many lines above it.
const (
	terminalCols       = 120
	terminalRows       = 40
	terminalScrollback = 2000
	// terminalDrain is how long a terminal job's end waits for the output still
	// in the terminal (longer only if a background process keeps it open).
	terminalDrain = 200 * time.Millisecond
)

// startTerminal starts the command on a pseudo-terminal: what it prints is
// kept raw in the job's log and rendered on a screen, which reads return.
func (c *call) startTerminal(req Request) (*jobs.Job, error) {
	master, slave, err := c.s.sup.OpenTerminal(terminalCols, terminalRows)
	if err != nil {
		return nil, err
	}
	env, secrets := c.s.g.childEnv()
	job, jctx, err := c.newJob(req, nopCloser{master}, secrets)
	if err != nil {
		master.Close()
		slave.Close()
		return nil, err
	}
	screen := terminal.New(terminalCols, terminalRows, terminalScrollback, master)
	job.Screen = func(lines int) string {
		if lines > 0 {
			return screen.Scrollback(lines)
		}
		return screen.Text()
	}
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		job.Stdout.Tee(screen)      // the screen shows what the log keeps: secrets redacted
		io.Copy(job.Stdout, master) // until EIO: the terminal is closed
	}()
	go func() {
		<-job.Done()
		<-drained
		screen.Close()
		master.Close()
	}()
	spec := c.s.spec(c.a, req.Command, c.s.exports.Apply(env), nil, nil, nil)
	spec.Terminal = slave
	spec.Env = append(spec.Env, "TERM=xterm-256color", fmt.Sprintf("COLUMNS=%d", terminalCols), fmt.Sprintf("LINES=%d", terminalRows))
	c.run(jctx, job, spec, master, drained)
	return job, nil
}

// nopCloser keeps a terminal open when its job's input is "closed": the
// screen reader owns it.
type nopCloser struct{ *os.File }

func (nopCloser) Close() error { return nil }

// finish is the call's envelope once the command has ended in the call.
func (c *call) finish(o runOptions) envelope.Envelope {
	if c.timer != nil {
		c.timer.Stop()
	}
	res, err := c.job.Result()
	if c.timedOut.Load() {
		res.TimedOut, res.Cancelled = true, false
	}
	c.s.jobs.Discard(c.job)
	env := &c.a.env
	if c.noRoom != nil {
		env.Note(fmt.Sprintf("It could not go on as a job (%v), so the call waited for it.", c.noRoom))
	}
	if c.report != nil {
		if dir, vars, ok := shellstate.Parse(c.report.Take()); ok {
			c.s.follow(dir, c.a.dir, env)
			if c.s.keepExports {
				c.s.exports.Carry(c.env, vars)
			}
		}
	}
	return c.s.g.finish(env, res, err, c.stdout, c.stderr, c.a.budget, c.sess, o)
}

// follow moves the session to dir, where the last command's shell ended after
// starting in from, if it is inside the root; a directory outside is not
// kept, and env says so.
func (s *Session) follow(dir, from string, env *envelope.Envelope) {
	if dir == "" || dir == from {
		return
	}
	_, rel, err := resolveDir(s.g.root, dir)
	if err != nil {
		env.Note(fmt.Sprintf("The command ended in %s, outside the project root: the session stays in %s.", dir, s.Cwd()))
		return
	}
	s.mu.Lock()
	moved := rel != s.cwd
	s.cwd = rel
	s.mu.Unlock()
	if moved {
		env.Note(fmt.Sprintf("The session's directory is now %s (the next command starts there).", rel))
	}
}

// becomeJob ends the call while the command runs on as its job: the call's
// envelope gets the output so far and the job's id.
func (c *call) becomeJob(ctx context.Context, explicit bool, note string) envelope.Envelope {
	if c.timer != nil && !explicit {
		c.timer.Stop() // the default timeout was the call's; a given one is the job's
	}
	if c.asJob {
		c.s.jobs.Keep(c.job, true) // counted when it started
	}
	if pid := int(c.pid.Load()); c.sess != nil && pid > 0 {
		c.sess.Detach(pid)
	}
	if c.stdout != nil { // not on a terminal
		c.callOut.detach()
		c.callErr.detach()
		for _, r := range []output.Result{c.stdout.Close(), c.stderr.Close()} {
			if r.SpillPath != "" {
				os.Remove(r.SpillPath) // the job's own files have it all
			}
		}
	}
	if c.report != nil {
		c.report.CloseAt(c.job.Done()) // a job's directory is not the session's
	}
	out := c.job.Read(ctx, jobs.ReadOptions{Limit: c.a.budget})
	env := &c.a.env
	fillJob(env, c.job, out, c.sess)
	if c.timer == nil || !explicit {
		env.Context.TimeoutMS = 0 // it runs until it ends or is killed
	}
	if note != "" {
		env.Note(note)
	}
	if out.Info.State == envelope.JobRunning {
		env.Note("Read its output with job_output (it can wait for a line or a port), type into it with job_input, stop it with job_kill.")
	}
	return *env.Settle()
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
			env.Note(fmt.Sprintf("%d bytes not shown; the job's full output: %s", sl.Skipped, sl.Path))
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

// detachable passes writes on until detached, then drops them: the call's
// captures stop growing once its command has become a job.
type detachable struct {
	mu sync.Mutex
	w  io.Writer
}

func (d *detachable) Write(p []byte) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.w != nil {
		d.w.Write(p)
	}
	return len(p), nil
}

func (d *detachable) detach() {
	d.mu.Lock()
	d.w = nil
	d.mu.Unlock()
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
