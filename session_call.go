package shellgate

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"time"

	"github.com/shellgate/shellgate/envelope"
	"github.com/shellgate/shellgate/internal/inherit"
	"github.com/shellgate/shellgate/internal/jobs"
	"github.com/shellgate/shellgate/internal/output"
	"github.com/shellgate/shellgate/internal/runner"
	"github.com/shellgate/shellgate/internal/sandbox"
	"github.com/shellgate/shellgate/internal/shell"
	"github.com/shellgate/shellgate/internal/shellstate"
)

// A call is one Run in the session: its command runs as a job from the start,
// so that it can go on as one (yield, waiting for input) without a restart.
type call struct {
	s        *Session
	a        *admitted
	job      *jobs.Job
	sess     *sandbox.Session
	stdout   *output.Capture // the call's own envelope, while it is one
	stderr   *output.Capture
	callOut  *output.Detachable
	callErr  *output.Detachable
	report   *shellstate.Report // what the shell reports on exit: its directory, its exports
	env      []string           // the environment the command was given
	cancel   context.CancelFunc
	timedOut atomic.Bool
	pid      atomic.Int64
	timer    *time.Timer // the timeout; stopped when a default timeout no longer applies
	asJob    bool        // a job from the start: in the background or on a terminal
	noRoom   error       // why it could not go on as a job (the session's job limit)
	// printed, when set, reports whether all the command printed so far
	// has reached its job's log (a terminal's pump): waiting for input is
	// said only then, so that the prompt it waits at is in the read.
	printed func() bool
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
		return c.becomeJob(ctx, explicit, "") // the headline says it runs as a job
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
			return c.becomeJob(ctx, explicit, "") // the headline says it runs on, and for how long
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
	inW, inR, err := inherit.Pipe(true)
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
	c.stdout, c.stderr = g.captures(a.budget, o, secrets, job.Stdout, job.Stderr)
	c.callOut = output.NewDetachable(tee(c.stdout, "stdout", o.onOutput, secrets))
	c.callErr = output.NewDetachable(tee(c.stderr, "stderr", o.onOutput, secrets))
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
		Input: input, Kill: cancel, LogDir: g.spill.Path, LogMax: g.cfg.SpillMax, Redact: secrets,
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
	told := spec.Started // the admitted command's (egress)
	spec.Started = func(pid int) {
		if told != nil {
			told(pid)
		}
		c.pid.Store(int64(pid))
		close(started)
	}
	job.Waiting = func() bool {
		pid := int(c.pid.Load())
		// In this order: what it printed before it began to wait is then
		// in the log, or still in the terminal for printed to see.
		return pid > 0 && runner.WaitingForInput(pid, input) && (c.printed == nil || c.printed())
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

// finish is the call's envelope once the command has ended in the call.
func (c *call) finish(o runOptions) envelope.Envelope {
	if c.timer != nil {
		c.timer.Stop()
	}
	res, err := c.job.Result()
	if c.timedOut.Load() {
		res.TimedOut, res.Cancelled = true, false
	}
	// The captures take the job's files as their spill files before the
	// job's are removed.
	defer c.s.jobs.Discard(c.job)
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
		c.callOut.Detach()
		c.callErr.Detach()
		c.stdout.Close() // a job's logs are not handed over: they have it all
		c.stderr.Close()
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
	// How to go on, once, as the call becomes a job: a read of it, or an
	// answer typed into it, has used the tools already.
	switch out.Info.State {
	case envelope.JobRunning:
		env.Note("Read its output with job_output (it can wait for a line or a port), type into it with job_input, stop it with job_kill.")
	case envelope.JobWaiting:
		env.Note("It waits for input: answer with job_input (text, and keys such as Enter or Ctrl-D), or stop it with job_kill.")
	}
	return *env.Settle()
}
