package shellgate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"
	"time"

	"github.com/shellgate/shellgate/envelope"
	"github.com/shellgate/shellgate/internal/hint"
	"github.com/shellgate/shellgate/internal/output"
	"github.com/shellgate/shellgate/internal/runner"
	"github.com/shellgate/shellgate/internal/sandbox"
)

// execute runs the admitted command and fills its envelope from the result.
func (g *Gate) execute(ctx context.Context, a *admitted, command string, o runOptions) envelope.Envelope {
	env, timeout, budget := &a.env, a.timeout, a.budget
	sess, failed := g.confine(env, g.box)
	if failed != nil {
		return *failed
	}
	childEnv, secrets := g.childEnv()
	stdout, stderr := g.captures(budget, o, secrets, nil, nil)
	spec := runner.Spec{
		Argv:      g.shell.Argv(command),
		Dir:       a.dir,
		Env:       g.keepCreated(a.keep, childEnv),
		Stdout:    tee(stdout, "stdout", o.onOutput, secrets),
		Stderr:    tee(stderr, "stderr", o.onOutput, secrets),
		Timeout:   timeout,
		KillGrace: g.cfg.KillGrace,
		Started:   a.started,
	}
	if o.stdio != nil {
		o.stdio.connect(&spec)
	}
	res, err := g.sup.Run(ctx, spec)
	env.Context.TimeoutMS = timeout.Milliseconds()
	return g.finish(env, res, err, stdout, stderr, budget, sess, o)
}

// captures returns the bounded sinks of a call's stdout and stderr. Each may
// need the whole budget; who gets what is settled at the end. Secret values
// stripped from the environment (secrets) are redacted if the command prints
// them anyway. Streams kept whole elsewhere (a session call's job logs: out
// and errs; nil if none) are not written again: their files become the
// spill files.
func (g *Gate) captures(budget int, o runOptions, secrets map[string]string, outs, errs output.Store) (stdout, stderr *output.Capture) {
	opts := func(name string, store output.Store) output.Options {
		return output.Options{Limit: budget, SpillDir: g.spill.Path, SpillMax: g.cfg.SpillMax, Quota: g.quota, NoSpill: o.noSpill, Name: name, Redact: secrets, Store: store}
	}
	return output.New(opts("stdout", outs)), output.New(opts("stderr", errs))
}

// finish fills env from how the command ended and what it printed.
func (g *Gate) finish(env *envelope.Envelope, res runner.Result, err error, stdout, stderr *output.Capture, budget int, sess *sandbox.Session, o runOptions) envelope.Envelope {
	outShare, errShare := output.Share(budget, stdout.Total(), stderr.Total())
	out, errOut := stdout.CloseWithin(outShare), stderr.CloseWithin(errShare)
	for _, r := range []output.Result{out, errOut} {
		if r.SpillPath != "" && o.onSpill != nil {
			o.onSpill(r.SpillPath)
		}
	}
	env.Stats = envelope.Stats{TimeMS: res.Duration.Milliseconds(), StdoutBytes: out.Total, StderrBytes: errOut.Total}
	if err != nil {
		code := envelope.ExecutionError
		switch {
		case errors.Is(err, runner.ErrClosed):
			return *env.Fail(envelope.Cancelled, "Command was not started: shellgate is shutting down.")
		case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
			return *env.Fail(envelope.Cancelled, "Command was cancelled before it could start.")
		case errors.Is(err, fs.ErrPermission):
			code = envelope.PermissionDenied
		}
		return *env.Fail(code, fmt.Sprintf("Command failed: could not start %s: %v", g.shell.Path, err))
	}
	d := &env.Data
	d.Stdout, d.Stderr = out.Text, errOut.Text
	d.ExitCode = res.ExitCode
	if res.Signal != "" {
		sig := res.Signal
		d.Signal = &sig
	}
	d.TimedOut, d.Cancelled = res.TimedOut, res.Cancelled
	d.Truncated = out.Truncated || errOut.Truncated
	d.Binary = out.Binary || errOut.Binary
	d.ControlsRemoved = out.Controls || errOut.Controls
	d.BackgroundPIDs = res.BackgroundPIDs
	if sess != nil {
		d.BackgroundPIDs = sess.InnerPIDs(res.BackgroundPIDs) // the numbers the next command can kill
	}
	d.Digest = output.DigestText(out, errOut)
	first, notes := output.Spills(out, errOut)
	if first != "" {
		d.FullOutputPath = &first
	}
	for _, n := range notes {
		env.NoteFile(n.Text, n.File)
	}
	if sess != nil {
		if h := g.networkHint(d, time.Now().Add(-res.Duration)); h != "" {
			env.Note(h)
		} else if h := hint.Unseen(d, g.root, func() []string { return g.hidden(g.childHome()) }); h != "" {
			env.Note(h)
		}
	}
	for _, n := range res.Notes {
		env.Note(n)
	}
	return *env.Settle()
}

// connect gives spec the caller's files. Pipes and sockets are passed to the
// command as they are (runner.Spec.PassStdout): it writes into them itself, so
// a reader of both, an agent that joins its two sockets as data comes, sees
// its lines in the order it wrote them, as without shellgate; and nothing is
// copied. They give the command what a pipe of ours would: a stream to write.
// A terminal or a regular file would give more (the user's terminal's
// ioctls; truncating or writing anywhere in a file outside the root), so
// they are copied through pipes of ours, one for both when they are one file
// (as a terminal is), which keeps the order there too. Not on Windows, where
// a command given the caller's handles is untested.
func (st *stdio) connect(spec *runner.Spec) {
	spec.Stdin, spec.Stdout, spec.Stderr = st.in, st.out, st.err
	spec.PassStdout, spec.PassStderr = passable(st.out), passable(st.err)
}

// passable reports whether w is a pipe or a socket that a command can be
// given as it is (stdio.connect).
func passable(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || f == nil || runtime.GOOS == "windows" {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&(os.ModeNamedPipe|os.ModeSocket) != 0
}
