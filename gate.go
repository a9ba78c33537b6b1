package shellgate

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/shellgate/shellgate/envelope"
	"github.com/shellgate/shellgate/output"
	"github.com/shellgate/shellgate/policy"
	"github.com/shellgate/shellgate/runner"
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
	tmp    string // the commands' TMPDIR
	ownTmp bool   // tmp was created by New and is removed by Close
	env    shell.EnvOptions

	sweepMu   sync.Mutex
	lastSweep time.Time
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
	OutputLimit    int
	SpillDir       string
	Rules          []policy.RuleInfo
}

// New checks cfg, fills in defaults and returns a Gate.
func New(cfg Config) (*Gate, error) {
	if cfg.Root == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("project root: cannot read the current directory: %w", err)
		}
		cfg.Root = wd
	}
	root, err := filepath.Abs(cfg.Root)
	if err == nil {
		root, err = filepath.EvalSymlinks(root)
	}
	if err != nil {
		return nil, fmt.Errorf("project root %q: %w", cfg.Root, errors.Unwrap(err))
	}
	if fi, err := os.Stat(root); err != nil {
		return nil, fmt.Errorf("project root %q: %w", cfg.Root, err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("project root %q is not a directory", cfg.Root)
	}
	if f, err := os.Open(root); err != nil {
		return nil, fmt.Errorf("project root %q is not readable: %w", cfg.Root, err)
	} else {
		f.Close()
	}
	cfg.Root = root
	if err := fillDefaults(&cfg); err != nil {
		return nil, err
	}
	sh, err := shell.Detect(cfg.Shell)
	if err != nil {
		return nil, err
	}
	eng, err := policy.New(cfg.Policy)
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	home, _ := os.UserHomeDir()
	g := &Gate{cfg: cfg, root: root, shell: sh, policy: eng, home: home}
	if err := g.makeTemp(); err != nil {
		return nil, err
	}
	g.sup = runner.NewSupervisor()
	g.sup.KillGrace = cfg.KillGrace
	g.sweep()
	return g, nil
}

// makeTemp sets up the commands' temp dir and the environment that points at it.
func (g *Gate) makeTemp() error {
	g.tmp = g.cfg.TempDir
	if g.tmp == "" {
		g.tmp = g.cfg.Env["TMPDIR"] // a TMPDIR the user configured is the commands' temp dir
	}
	if g.tmp == "" {
		dir, err := os.MkdirTemp("", "shellgate-tmp-")
		if err != nil {
			return fmt.Errorf("temp dir for commands: %w", err)
		}
		g.tmp, g.ownTmp = dir, true
	}
	abs, err := filepath.Abs(g.tmp)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return fmt.Errorf("temp dir %q: %w", g.tmp, err)
	}
	g.tmp = abs
	extra := map[string]string{"TMPDIR": abs, "TMP": abs, "TEMP": abs}
	for k, v := range g.cfg.Env { // the user's variables win
		extra[k] = v
	}
	g.env = shell.EnvOptions{Extra: extra, KeepSecrets: g.cfg.KeepEnv, KeepAllSecrets: g.cfg.KeepSecrets}
	return nil
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
	case c.OutputLimit < 0:
		return fmt.Errorf("output limit %d must be positive", c.OutputLimit)
	case c.SpillMax < 0:
		return fmt.Errorf("spill max %d must be positive", c.SpillMax)
	}
	return nil
}

// Info describes the rules in force.
func (g *Gate) Info() Info {
	return Info{
		Root:           g.root,
		TempDir:        g.tmp,
		Shell:          g.shell.Path,
		Network:        g.cfg.Policy.Network,
		Mode:           g.cfg.Policy.Mode,
		DefaultTimeout: g.cfg.DefaultTimeout,
		MaxTimeout:     g.cfg.MaxTimeout,
		OutputLimit:    g.cfg.OutputLimit,
		SpillDir:       g.cfg.SpillDir,
		Rules:          g.cfg.Policy.Active(),
	}
}

// Close kills everything still running or left in the background by this Gate's
// commands, waits until it is gone, and removes the commands' private temp dir.
func (g *Gate) Close() error {
	err := g.sup.Close()
	if g.ownTmp {
		if rmErr := os.RemoveAll(g.tmp); err == nil {
			err = rmErr
		}
	}
	return err
}

// Check returns the policy verdict for req without running anything. A directory that
// cannot be used yields a deny verdict saying why.
func (g *Gate) Check(req Request) policy.Verdict {
	abs, _, err := resolveDir(g.root, req.Directory)
	if err != nil {
		de := err.(*dirError)
		return policy.Verdict{Decision: policy.Deny, Rule: "directory", Reason: de.msg, Code: de.code}
	}
	return g.policy.Check(req.Command, g.policyEnv(abs))
}

func (g *Gate) policyEnv(dir string) policy.Env {
	return policy.Env{Root: g.root, Dir: dir, Home: g.home, TempDir: g.tmp, Shell: g.shell.Path}
}

// sweep removes spill files past their retention, at most once a minute.
func (g *Gate) sweep() {
	g.sweepMu.Lock()
	defer g.sweepMu.Unlock()
	if time.Since(g.lastSweep) < time.Minute {
		return
	}
	g.lastSweep = time.Now()
	_ = output.Sweep(g.cfg.SpillDir, g.cfg.SpillRetention)
}

// validate checks the request's own fields; it returns an INVALID_PARAM message.
func (g *Gate) validate(req Request) (time.Duration, string) {
	switch {
	case req.Command == "":
		return 0, "Missing required parameter 'command'."
	case strings.TrimSpace(req.Command) == "":
		return 0, "Parameter 'command' is empty or only whitespace; give a shell command to run."
	case strings.IndexByte(req.Command, 0) >= 0:
		return 0, fmt.Sprintf("Parameter 'command' contains a NUL byte at offset %d; shell commands cannot contain NUL bytes.", strings.IndexByte(req.Command, 0))
	}
	if max := g.shell.MaxScript(); len(req.Command) > max {
		return 0, fmt.Sprintf("Parameter 'command' is %d bytes; at most %d fit in one %s command line. Write the script to a file in the project and run that file.", len(req.Command), max, g.shell.Kind)
	}
	timeout := g.cfg.DefaultTimeout
	if req.TimeoutMS != nil {
		max := g.cfg.MaxTimeout.Milliseconds()
		if *req.TimeoutMS < 1 || *req.TimeoutMS > max {
			return 0, fmt.Sprintf("timeout_ms must be an integer between 1 and %d (got %d).", max, *req.TimeoutMS)
		}
		timeout = time.Duration(*req.TimeoutMS) * time.Millisecond
	}
	return timeout, ""
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
	timeout, bad := g.validate(req)
	if bad != "" {
		return *env.Fail(envelope.InvalidParam, bad)
	}
	dir, rel, err := resolveDir(g.root, req.Directory)
	if err != nil {
		de := err.(*dirError)
		return *env.Fail(de.code, de.msg)
	}
	env.Data.Directory, env.Context.Cwd, env.Context.DirectoryResolved = rel, rel, rel

	v := g.policy.Check(req.Command, g.policyEnv(dir))
	env.Context.Policy = &envelope.PolicyInfo{Decision: string(v.Decision), Rule: v.Rule, Reason: v.Reason}
	switch v.Decision {
	case policy.Deny:
		env.Fail(v.Code, v.Reason)
		env.Error.Rule = v.Rule
		return *env.Settle()
	case policy.Ask:
		who, ok := g.approve(ctx, req, v, o.approver)
		if !ok {
			env.Fail(envelope.ApprovalRequired, g.approvalMessage(v, o.approver != nil))
			env.Error.Rule = v.Rule
			return *env.Settle()
		}
		env.Context.Policy.Approved = who
	}
	if ctx.Err() != nil {
		return *env.Fail(envelope.Cancelled, "Command was cancelled before it could start.")
	}
	g.sweep()
	return g.execute(ctx, &env, req.Command, dir, timeout, o.onOutput)
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

func sessionKeyOr(v policy.Verdict, def string) string {
	if v.SessionKey != "" {
		return v.SessionKey
	}
	return def
}

// execute runs the command and fills env from the result.
func (g *Gate) execute(ctx context.Context, env *envelope.Envelope, command, dir string, timeout time.Duration, onOutput func(Output)) envelope.Envelope {
	stdout := output.New(output.Options{Limit: g.cfg.OutputLimit, SpillDir: g.cfg.SpillDir, SpillMax: g.cfg.SpillMax, Name: "stdout"})
	stderr := output.New(output.Options{Limit: g.cfg.OutputLimit, SpillDir: g.cfg.SpillDir, SpillMax: g.cfg.SpillMax, Name: "stderr"})
	spec := runner.Spec{
		Argv:      g.shell.Argv(command),
		Dir:       dir,
		Env:       shell.Env(os.Environ(), g.env),
		Stdout:    tee(stdout, "stdout", onOutput),
		Stderr:    tee(stderr, "stderr", onOutput),
		Timeout:   timeout,
		KillGrace: g.cfg.KillGrace,
	}
	res, err := g.sup.Run(ctx, spec)
	out, errOut := stdout.Close(), stderr.Close()
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
	d.BackgroundPIDs = res.BackgroundPIDs
	noteSpills(env, out, errOut)
	return *env.Settle()
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
