package shellgate

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/shellgate/shellgate/envelope"
	"github.com/shellgate/shellgate/policy"
)

// validate checks the request's own fields and returns its timeout and output
// budget, or an INVALID_PARAM message.
func (g *Gate) validate(req Request) (time.Duration, int, string) {
	switch {
	case req.Command == "":
		return 0, 0, "Missing required parameter 'command'."
	case strings.TrimSpace(req.Command) == "":
		return 0, 0, "Parameter 'command' is empty or only whitespace; give a shell command to run."
	case strings.IndexByte(req.Command, 0) >= 0:
		return 0, 0, fmt.Sprintf("Parameter 'command' contains a NUL byte at offset %d; shell commands cannot contain NUL bytes.", strings.IndexByte(req.Command, 0))
	}
	if max := g.shell.MaxScript(); len(req.Command) > max {
		return 0, 0, fmt.Sprintf("Parameter 'command' is %d bytes; at most %d fit in one %s command line. Write the script to a file in the project and run that file.", len(req.Command), max, g.shell.Kind)
	}
	if msg := requestTooLong(req); msg != "" {
		return 0, 0, msg
	}
	timeout := g.cfg.DefaultTimeout
	if req.TimeoutMS != nil {
		max := g.cfg.MaxTimeout.Milliseconds()
		if *req.TimeoutMS < 1 || *req.TimeoutMS > max {
			return 0, 0, fmt.Sprintf("timeout_ms must be an integer between 1 and %d (got %d).", max, *req.TimeoutMS)
		}
		timeout = time.Duration(*req.TimeoutMS) * time.Millisecond
	}
	if d := req.Timeout; d != 0 {
		switch {
		case req.TimeoutMS != nil:
			return 0, 0, "Give the timeout once: Timeout or TimeoutMS, not both."
		case d < time.Millisecond || d > g.cfg.MaxTimeout:
			return 0, 0, fmt.Sprintf("Timeout must be between 1ms and %s (got %s).", g.cfg.MaxTimeout, d)
		}
		timeout = d
	}
	budget := g.cfg.OutputLimit
	if n := req.MaxOutputBytes; n != 0 {
		if n < 1 || n > g.cfg.MaxOutputLimit {
			return 0, 0, fmt.Sprintf("max_output_bytes must be an integer between 1 and %d (got %d).", g.cfg.MaxOutputLimit, n)
		}
		budget = n
	}
	return timeout, budget, ""
}

// admitted is a request that passed validation and the policy, ready to run.
type admitted struct {
	env     envelope.Envelope
	dir     string // absolute
	timeout time.Duration
	budget  int
	// readOnly: the policy knows the command only reads (no checkpoint);
	// undoable: it was allowed because a checkpoint is taken (rule lose-work).
	readOnly, undoable bool
	// keep: the protected paths the user approved the command to write, which
	// the sandbox keeps where they are if it creates them.
	keep []string
	// started, if set, is told the command's PID once it has started
	// (runner.Spec.Started): the egress proxy's, which names the command
	// whose process connects by it.
	started func(pid int)
}

// admit validates req, resolves its directory (cwd, relative to the root, when
// req gives none), and judges it with the policy as the sandbox b allows; a
// request that may not run gets its refusal envelope instead. session: the
// caller is a Session, which can run a line as a terminal job.
func (g *Gate) admit(ctx context.Context, req Request, o runOptions, cwd string, b *box, session bool) (*admitted, *envelope.Envelope) {
	env := envelope.Envelope{
		Data: envelope.Data{Command: req.Command},
		// Until the directory is resolved, the session's: where it would have run.
		Context: envelope.Context{Cwd: cwd, ParamsInput: req.params(), Shell: g.shell.Path},
	}
	timeout, budget, bad := g.validate(req)
	if bad != "" {
		env.Context.ParamsInput = envelope.CutParams(env.Context.ParamsInput, envelope.EchoLimit)
		return nil, env.Fail(envelope.InvalidParam, bad)
	}
	if g.rootProblem != nil {
		return nil, env.Fail(envelope.CheckpointFailed, "Not run: "+g.rootProblem.Error()+".")
	}
	wanted := req.Directory
	if wanted == "" {
		wanted = cwd
	}
	dir, rel, err := resolveDir(g.root, wanted)
	if err != nil {
		v := dirVerdict(err) // the rule Check names, too
		return nil, env.Refuse(envelope.Err{Code: v.Code, Rule: v.Rule, Message: v.Reason})
	}
	env.Data.Directory, env.Context.Cwd, env.Context.DirectoryResolved = rel, rel, rel

	pe := g.policyEnv(dir)
	pe.Terminal, pe.TerminalJobs = req.TTY, session
	j, v, relied := g.judge(req.Command, pe)
	covers := g.covers
	if v.Decision != policy.Deny && g.unconfinedPolicy != nil && g.unhidden(b, v.Decision == policy.Allow) {
		// The session shows the host's files as they are (no user namespace
		// here, or it could not start): judged again as without a sandbox,
		// where reading a credential, or a program the policy cannot read,
		// is asked about, whatever layers remain.
		if eng, err := g.unconfinedPolicy(); err == nil {
			covers = policy.Covers{Checkpoint: covers.Checkpoint}
			j = eng.Judge(req.Command, pe)
			v, relied = g.decide(j, covers, dir, nil), false
			if v.Decision != policy.Allow {
				v.Reason += " The sandbox would contain it, but here it lacks a layer (" + g.uncontained(b) + ")."
			}
		}
	}
	if relied {
		if why := g.uncontained(b); why != "" || !g.egressHeld(b) {
			// The sandbox this allow counted on could not be set up, or lacks
			// a layer it needs: decide as without it, and say which.
			covers = policy.Covers{Checkpoint: covers.Checkpoint}
			v, relied = g.decide(j, covers, dir, nil), false
			if why != "" && v.Decision != policy.Allow {
				v.Reason += " The sandbox would contain it, but here it lacks a layer (" + why + ")."
			}
		}
	}
	// Relaxed for lose-work only where a checkpoint keeps what it throws away.
	undoable := slices.Contains(v.Relaxed, policy.RuleLoseWork)
	if req.TTY && v.Decision == policy.Allow {
		v, relied = g.terminalVerdict(req.Command, v, relied, b)
	}
	undoable = undoable && v.Decision == policy.Allow
	var keep []string
	env.Context.Policy = &envelope.PolicyInfo{Decision: string(v.Decision), Rule: v.Rule, Reason: v.Reason, Sandboxed: relied}
	switch v.Decision {
	case policy.Deny:
		return nil, env.Refuse(envelope.Err{Code: refusalCode(v), Rule: v.Rule, Message: v.Reason})
	case policy.Ask:
		// Not while the user decides: a helper started ahead ends now (an
		// approved command starts the session anew).
		b.dropEarly()
		who, paths, refusal := g.approveAll(ctx, req, v, j, covers, o.approver)
		if refusal != nil {
			if r := v.Unasked(); strings.Contains(refusal.Message, r) {
				env.Context.Policy.Reason = r // as the refusal says it, which Brief leaves to error.message
			}
			return nil, env.Refuse(*refusal)
		}
		env.Context.Policy.Approved, keep = who, paths
	}
	if ctx.Err() != nil {
		return nil, env.Fail(envelope.Cancelled, "Command was cancelled before it could start.")
	}
	if !g.starting() {
		return nil, env.Fail(envelope.Cancelled, "Command was not started: shellgate is shutting down.")
	}
	g.sweep()
	g.spill.Make()                 // held from the first command, so a kill leaves nothing a sweep keeps
	g.auditDecision(o.audit, &env) // before it starts: a kill -9 leaves this line
	return &admitted{env: env, dir: dir, timeout: timeout, budget: budget,
		readOnly: v.ReadOnly, undoable: undoable, keep: keep}, nil
}

// terminalVerdict judges a terminal job the policy allowed: what a REPL or
// shell on a terminal runs is typed into it later, never checked, so it is
// code known only at run time (rule dynamic). The sandbox contains that; without
// it, the user is asked.
func (g *Gate) terminalVerdict(command string, v policy.Verdict, relied bool, b *box) (policy.Verdict, bool) {
	switch {
	case slices.Contains(g.cfg.Policy.Relax, policy.RuleDynamic):
		return v, relied
	case g.confining(b):
		return v, true
	}
	v = policy.Verdict{Decision: policy.Ask, Rule: policy.RuleDynamic, Command: command, SessionKey: "tty " + command,
		Reason: "`" + command + "` runs on a terminal, where what it does depends on the input sent to it later, which shellgate does not check, and no sandbox contains it (rule dynamic)."}
	if g.cfg.Policy.Mode == policy.ModeNever {
		v.Decision, v.SessionKey = policy.Deny, ""
		v.Reason += " Approval mode is \"never\", so it cannot be approved; run the program non-interactively instead."
	}
	return v, false
}
