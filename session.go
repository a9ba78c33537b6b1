package shellgate

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/shellgate/shellgate/envelope"
	"github.com/shellgate/shellgate/internal/jobs"
	"github.com/shellgate/shellgate/internal/runner"
	"github.com/shellgate/shellgate/internal/shellstate"
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
	a, refused := s.g.admit(ctx, req, o, s.Cwd(), s.box, true)
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
	cp, refused := s.g.checkpoint(a, s.box, label, req.Command, s.id)
	if refused != nil {
		return *refused
	}
	if o.stdio != nil { // connected to the caller's own files: nothing to keep as a job
		sess, failed := s.g.confine(&a.env, s.box)
		if failed != nil {
			return *failed
		}
		env, secrets := s.g.childEnv()
		stdout, stderr := s.g.captures(a.budget, o, secrets, nil, nil)
		ended := s.g.egressCall(s.box, a, o, req.Command, s.id)
		spec := s.spec(a, req.Command, s.exports.Apply(env), nil, nil, nil)
		o.stdio.connect(&spec)
		res, err := s.sup.Run(ctx, spec)
		ended()
		out := s.g.finish(&a.env, res, err, stdout, stderr, a.budget, sess, o)
		cp.finish(&out, nil)
		s.g.noteAppeared(&out, s.id)
		return out
	}
	ended := s.g.egressCall(s.box, a, o, req.Command, s.id)
	out := s.execute(ctx, a, req, o)
	afterJob(s.jobDone(out), ended) // egress.go
	if len(out.Data.BackgroundPIDs) > 0 {
		s.g.egressLeft(s.box, req.Command)
	}
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
		Env:       s.g.keepCreated(a.keep, env),
		Stdin:     in,
		Stdout:    out,
		Stderr:    errw,
		KillGrace: s.g.cfg.KillGrace,
		Started:   a.started,
	}
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

// DefaultTerminalYield is how long a terminal call waits for its command to
// end or to wait for input before it returns the screen and lets it run on.
const DefaultTerminalYield = 2 * time.Second
