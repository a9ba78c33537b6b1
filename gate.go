package shellgate

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/shellgate/shellgate/envelope"
	"github.com/shellgate/shellgate/output"
	"github.com/shellgate/shellgate/policy"
	"github.com/shellgate/shellgate/runner"
	"github.com/shellgate/shellgate/sandbox"
	"github.com/shellgate/shellgate/shell"
)

// Gate runs requests under one configuration. It is safe for concurrent use.
// Close it when done: it owns every process its commands started.
type Gate struct {
	cfg    Config
	root   string
	shell  shell.Shell
	policy *policy.Engine
	sup    *runner.Supervisor
	home   string
	box    *box           // the kernel sandbox
	strict *policy.Engine // without the sandbox's relaxations, for Check's "relied on the sandbox"
	// settings are policy's: the configured ones, less what the sandbox contains.
	settings policy.Settings

	tmpMu  sync.RWMutex
	tmp    string // the commands' TMPDIR
	ownTmp bool   // tmp was created by New and is removed by Close
	env    shell.EnvOptions

	sweepMu   sync.Mutex
	lastSweep time.Time

	// A Gate that never ran a command has nothing to kill: Close skips the search
	// for leftover processes, which reads every /proc/*/environ (shellgate check).
	startMu sync.Mutex
	started bool // a command may have started
	closed  bool
}

// Info describes the rules a Gate enforces, for tool descriptions and help texts.
type Info struct {
	Root           string
	TempDir        string // the commands' TMPDIR, writable like the root
	Shell          string
	Network        bool
	Mode           policy.Mode
	DefaultTimeout time.Duration
	MaxTimeout     time.Duration
	OutputLimit    int // per call, stdout and stderr together
	MaxOutputLimit int // the most a call may ask for
	SpillDir       string
	Rules          []policy.RuleInfo // the rules in force (without those the sandbox contains)
	// Sandboxed: commands are meant to run in the kernel sandbox (Linux); whether a
	// layer is missing shows in each envelope's context.sandbox.
	Sandboxed bool
}

// New checks cfg, fills in defaults and returns a Gate.
func New(cfg Config) (*Gate, error) {
	root, err := resolveRoot(cfg.Root)
	if err != nil {
		return nil, err
	}
	cfg.Root = root
	if err := fillDefaults(&cfg); err != nil {
		return nil, err
	}
	sh, err := shell.Detect(cfg.Shell)
	if err != nil {
		return nil, err
	}
	chk, err := newChecker(root, cfg.Policy)
	if err != nil {
		return nil, err
	}
	g := &Gate{cfg: cfg, root: root, shell: sh, policy: chk.policy, strict: chk.policy, home: chk.home}
	if err := g.planSandbox(); err != nil {
		return nil, err
	}
	g.settings = cfg.Policy
	if g.sandboxed() {
		g.settings.Relax = append(slices.Clip(g.settings.Relax), contained...)
		if g.policy, err = policy.New(g.settings); err != nil {
			return nil, fmt.Errorf("policy: %w", err)
		}
	}
	if err := g.makeTemp(); err != nil {
		return nil, err
	}
	g.sup = runner.NewSupervisor()
	g.sup.KillGrace = cfg.KillGrace
	return g, nil
}

// makeTemp sets up the commands' temp dir: one the user configured, else the
// sandbox session's own /tmp, else a private directory that Close removes.
func (g *Gate) makeTemp() error {
	dir := g.cfg.TempDir
	if dir == "" {
		dir = g.cfg.Env["TMPDIR"] // a TMPDIR the user configured is the commands' temp dir
	}
	if dir == "" && g.sandboxed() {
		g.setTemp(sandboxTemp(g.root), false)
		return nil
	}
	own := false
	if dir == "" {
		d, err := os.MkdirTemp("", "shellgate-tmp-")
		if err != nil {
			return fmt.Errorf("temp dir for commands: %w", err)
		}
		dir, own = d, true
	}
	abs, err := filepath.Abs(dir)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return fmt.Errorf("temp dir %q: %w", dir, err)
	}
	g.setTemp(abs, own)
	return nil
}

// setTemp points the commands' TMPDIR, TMP and TEMP at dir.
func (g *Gate) setTemp(dir string, own bool) {
	extra := map[string]string{"TMPDIR": dir, "TMP": dir, "TEMP": dir}
	for k, v := range g.cfg.Env { // the user's variables win
		extra[k] = v
	}
	g.tmpMu.Lock()
	defer g.tmpMu.Unlock()
	g.tmp, g.ownTmp = dir, own
	g.env = shell.EnvOptions{Extra: extra, KeepSecrets: g.cfg.KeepEnv, KeepAllSecrets: g.cfg.KeepSecrets}
}

// temp returns the commands' temp dir and environment options.
func (g *Gate) temp() (string, shell.EnvOptions) {
	g.tmpMu.RLock()
	defer g.tmpMu.RUnlock()
	return g.tmp, g.env
}

func fillDefaults(c *Config) error {
	if c.DefaultTimeout == 0 {
		c.DefaultTimeout = DefaultTimeout
	}
	if c.MaxTimeout == 0 {
		c.MaxTimeout = MaxTimeout
	}
	if c.KillGrace == 0 {
		c.KillGrace = DefaultKillGrace
	}
	if c.OutputLimit == 0 {
		c.OutputLimit = DefaultOutputLimit
	}
	if c.MaxOutputLimit == 0 {
		c.MaxOutputLimit = max(DefaultMaxOutputLimit, c.OutputLimit)
	}
	if c.SpillDir == "" {
		c.SpillDir = output.DefaultSpillDir()
	}
	if c.SpillMax == 0 {
		c.SpillMax = DefaultSpillMax
	}
	if c.SpillRetention == 0 {
		c.SpillRetention = DefaultSpillRetention
	}
	switch {
	case c.DefaultTimeout < time.Millisecond || c.MaxTimeout < time.Millisecond:
		return fmt.Errorf("timeouts must be at least 1ms (default %s, max %s)", c.DefaultTimeout, c.MaxTimeout)
	case c.DefaultTimeout > c.MaxTimeout:
		return fmt.Errorf("default timeout %s is longer than the max timeout %s", c.DefaultTimeout, c.MaxTimeout)
	case c.KillGrace < 0 || c.KillGrace > 2*time.Second:
		return fmt.Errorf("kill grace %s must be between 0 and 2s", c.KillGrace)
	case c.OutputLimit < 0 || c.MaxOutputLimit < c.OutputLimit:
		return fmt.Errorf("output limit %d must be positive and at most the max output limit %d", c.OutputLimit, c.MaxOutputLimit)
	case c.SpillMax < 0:
		return fmt.Errorf("spill max %d must be positive", c.SpillMax)
	}
	return nil
}

// Info describes the rules in force.
func (g *Gate) Info() Info {
	tmp, _ := g.temp()
	return Info{
		Root:           g.root,
		TempDir:        tmp,
		Shell:          g.shell.Path,
		Network:        g.cfg.Policy.Network,
		Mode:           g.cfg.Policy.Mode,
		DefaultTimeout: g.cfg.DefaultTimeout,
		MaxTimeout:     g.cfg.MaxTimeout,
		OutputLimit:    g.cfg.OutputLimit,
		MaxOutputLimit: g.cfg.MaxOutputLimit,
		SpillDir:       g.cfg.SpillDir,
		Rules:          g.settings.Active(),
		Sandboxed:      g.sandboxed(),
	}
}

// Close kills everything still running or left in the background by this Gate's
// commands, waits until it is gone, and removes the commands' private temp dir.
func (g *Gate) Close() error {
	g.startMu.Lock()
	g.closed = true
	started := g.started
	g.startMu.Unlock()
	var err error
	if started {
		err = g.sup.Close()
	}
	if boxErr := g.closeSandbox(); err == nil {
		err = boxErr
	}
	g.tmpMu.RLock()
	tmp, own := g.tmp, g.ownTmp
	g.tmpMu.RUnlock()
	if own {
		if rmErr := os.RemoveAll(tmp); err == nil {
			err = rmErr
		}
	}
	return err
}

// Check returns the policy verdict for req without running anything. A directory that
// cannot be used yields a deny verdict saying why: rule confinement for one outside
// the root, no rule for one that is missing or not a directory (a bad parameter).
func (g *Gate) Check(req Request) policy.Verdict {
	abs, _, err := resolveDir(g.root, req.Directory)
	if err != nil {
		return dirVerdict(err.(*dirError))
	}
	v, _ := g.judge(req.Command, g.policyEnv(abs))
	return v
}

// judge checks a command line. Where a sandbox is planned, the rules it
// contains are relaxed; relied reports an allow that needed that.
func (g *Gate) judge(command string, pe policy.Env) (v policy.Verdict, relied bool) {
	v = g.policy.Check(command, pe)
	if g.policy == g.strict || v.Decision != policy.Allow {
		return v, false
	}
	return v, g.strict.Check(command, pe).Decision != policy.Allow
}

func (g *Gate) policyEnv(dir string) policy.Env {
	tmp, _ := g.temp()
	return policy.Env{Root: g.root, Dir: dir, Home: g.home, TempDir: tmp, Vars: g.cfg.Env, Shell: g.shell.Path}
}

// starting records that a command may start, unless the Gate is closed.
func (g *Gate) starting() bool {
	g.startMu.Lock()
	defer g.startMu.Unlock()
	g.started = g.started || !g.closed
	return !g.closed
}

// sweep removes spill files past their retention, at most once a minute, and only
// once commands run: checking one must not pay for it.
func (g *Gate) sweep() {
	g.sweepMu.Lock()
	defer g.sweepMu.Unlock()
	if time.Since(g.lastSweep) < time.Minute {
		return
	}
	g.lastSweep = time.Now()
	_ = output.Sweep(g.cfg.SpillDir, g.cfg.SpillRetention)
}

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

// Run checks req against the policy, runs it and returns the envelope. It never
// panics on bad input: every problem is an error envelope. Cancelling ctx kills the
// command and everything it started.
func (g *Gate) Run(ctx context.Context, req Request, opts ...Option) envelope.Envelope {
	var o runOptions
	for _, opt := range opts {
		opt(&o)
	}
	env := envelope.Envelope{
		Data:    envelope.Data{Command: req.Command},
		Context: envelope.Context{ParamsInput: req.params(), Shell: g.shell.Path},
	}
	timeout, budget, bad := g.validate(req)
	if bad != "" {
		return *env.Fail(envelope.InvalidParam, bad)
	}
	dir, rel, err := resolveDir(g.root, req.Directory)
	if err != nil {
		de := err.(*dirError)
		return *env.Fail(de.code, de.msg)
	}
	env.Data.Directory, env.Context.Cwd, env.Context.DirectoryResolved = rel, rel, rel

	pe := g.policyEnv(dir)
	v, relied := g.judge(req.Command, pe)
	if relied && !g.confining() {
		// The sandbox this allow counted on could not be set up: judge as without it.
		v, relied = g.strict.Check(req.Command, pe), false
	}
	env.Context.Policy = &envelope.PolicyInfo{Decision: string(v.Decision), Rule: v.Rule, Reason: v.Reason, Sandboxed: relied}
	switch v.Decision {
	case policy.Deny:
		return *env.Refuse(envelope.Err{Code: denyCode(v), Rule: v.Rule, Message: v.Reason})
	case policy.Ask:
		who, ok := g.approve(ctx, req, v, o.approver)
		if !ok {
			return *env.Refuse(envelope.Err{Code: envelope.ApprovalRequired, Rule: v.Rule, Message: g.approvalMessage(v, o.approver != nil)})
		}
		env.Context.Policy.Approved = who
	}
	if ctx.Err() != nil {
		return *env.Fail(envelope.Cancelled, "Command was cancelled before it could start.")
	}
	if !g.starting() {
		return *env.Fail(envelope.Cancelled, "Command was not started: shellgate is shutting down.")
	}
	g.sweep()
	return g.execute(ctx, &env, req.Command, dir, timeout, budget, o)
}

// approve asks the approver about an "ask" verdict.
func (g *Gate) approve(ctx context.Context, req Request, v policy.Verdict, a Approver) (string, bool) {
	if a == nil {
		return "", false
	}
	switch a(ctx, Question{Command: req.Command, Rule: v.Rule, Reason: v.Reason, SessionKey: v.SessionKey}) {
	case AllowOnce:
		return "once", true
	case AllowSession:
		return "session", true
	}
	return "", false
}

func (g *Gate) approvalMessage(v policy.Verdict, asked bool) string {
	if asked {
		return fmt.Sprintf("Not approved: %s The user declined this command; do not retry it as is.", v.Reason)
	}
	// Not the project's .shellgate.toml: a project file may not loosen the policy.
	how := fmt.Sprintf("To allow it without asking, the user can add [policy] allow = [\"%s *\"] to their own config (~/.config/shellgate/config.toml) or a --config file, or run it where a person can approve it.", sessionKeyOr(v, "COMMAND"))
	return fmt.Sprintf("Approval required: %s No one could be asked to approve it. %s", v.Reason, how)
}

// denyCode is the error code of a refusal: ACCESS_DENIED for a path leaving the
// root, POLICY_DENIED for any other rule (INVALID_PARAM would tell a model its
// parameters were malformed).
func denyCode(v policy.Verdict) envelope.Code {
	switch {
	case v.Code == envelope.AccessDenied:
		return v.Code
	case v.Rule == policy.RuleEnv: // the caller's mistake, not the command's
		return envelope.ExecutionError
	}
	return envelope.PolicyDenied
}

func sessionKeyOr(v policy.Verdict, def string) string {
	if v.SessionKey != "" {
		return v.SessionKey
	}
	return def
}

// execute runs the command and fills env from the result.
func (g *Gate) execute(ctx context.Context, env *envelope.Envelope, command, dir string, timeout time.Duration, budget int, o runOptions) envelope.Envelope {
	// Each stream may need the whole budget; who gets what is settled at the end.
	_, envOpts := g.temp()
	base := os.Environ()
	secrets := shell.Secrets(base, envOpts) // stripped, and redacted if printed anyway
	stdout := output.New(output.Options{Limit: budget, SpillDir: g.cfg.SpillDir, SpillMax: g.cfg.SpillMax, NoSpill: o.noSpill, Name: "stdout", Redact: secrets})
	stderr := output.New(output.Options{Limit: budget, SpillDir: g.cfg.SpillDir, SpillMax: g.cfg.SpillMax, NoSpill: o.noSpill, Name: "stderr", Redact: secrets})
	var sess *sandbox.Session
	if g.sandboxed() {
		var report sandbox.Report
		var err error
		sess, report, err = g.session()
		if err != nil {
			return *env.Fail(envelope.SandboxUnavailable, fmt.Sprintf("Not run: %v. Run `shellgate doctor` to see what this machine supports, or use --sandbox auto to run with what is available.", err))
		}
		env.Context.Sandbox = report.Map()
	} else {
		env.Context.Sandbox = "off"
	}
	spec := runner.Spec{
		Argv:      g.shell.Argv(command),
		Dir:       dir,
		Env:       shell.Env(base, envOpts),
		Stdout:    tee(stdout, "stdout", o.onOutput),
		Stderr:    tee(stderr, "stderr", o.onOutput),
		Timeout:   timeout,
		KillGrace: g.cfg.KillGrace,
	}
	if o.stdio != nil {
		spec.Stdin, spec.Stdout, spec.Stderr = o.stdio.in, o.stdio.out, o.stdio.err
	}
	res, err := g.sup.Run(ctx, spec)
	outShare, errShare := output.Share(budget, stdout.Total(), stderr.Total())
	out, errOut := stdout.CloseWithin(outShare), stderr.CloseWithin(errShare)
	for _, r := range []output.Result{out, errOut} {
		if r.SpillPath != "" && o.onSpill != nil {
			o.onSpill(r.SpillPath)
		}
	}
	env.Stats = envelope.Stats{TimeMS: res.Duration.Milliseconds(), StdoutBytes: out.Total, StderrBytes: errOut.Total}
	env.Context.TimeoutMS = timeout.Milliseconds()
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
	d.Digest = digest(out, errOut)
	noteSpills(env, out, errOut)
	if sess != nil {
		if hint := sandboxHint(d, g.cfg.Policy.Network); hint != "" {
			env.Note(hint)
		}
	}
	return *env.Settle()
}

// digest lists the error-like lines of both streams' omitted middles, numbered in
// their full output files.
func digest(out, errOut output.Result) string {
	var b strings.Builder
	for _, r := range []struct {
		name string
		res  output.Result
	}{{"stdout", out}, {"stderr", errOut}} {
		for _, l := range r.res.Digest {
			fmt.Fprintf(&b, "%s line %d: %s\n", r.name, l.N, l.Text)
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// noteSpills sets full_output_path to the first spill file and notes in the text
// what that one field cannot say: a second spill file, a capped one, or one that
// could not be written.
func noteSpills(env *envelope.Envelope, out, errOut output.Result) {
	for _, r := range []struct {
		name string
		res  output.Result
	}{{"stdout", out}, {"stderr", errOut}} {
		switch {
		case r.res.SpillPath == "":
		case env.Data.FullOutputPath == nil:
			p := r.res.SpillPath
			env.Data.FullOutputPath = &p
		default:
			env.Note(fmt.Sprintf("Full %s: %s", r.name, r.res.SpillPath))
		}
		if r.res.SpillCapped {
			env.Note(fmt.Sprintf("Full %s file stopped at its size cap; %d bytes were printed in all.", r.name, r.res.Total))
		}
		if r.res.SpillErr != nil {
			env.Note(fmt.Sprintf("Full %s could not be saved: %v", r.name, r.res.SpillErr))
		}
	}
}
