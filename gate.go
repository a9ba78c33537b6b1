package shellgate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/shellgate/shellgate/envelope"
	"github.com/shellgate/shellgate/internal/audit"
	"github.com/shellgate/shellgate/internal/hint"
	"github.com/shellgate/shellgate/internal/output"
	"github.com/shellgate/shellgate/internal/runner"
	"github.com/shellgate/shellgate/internal/sandbox"
	"github.com/shellgate/shellgate/internal/shell"
	"github.com/shellgate/shellgate/internal/tempdir"
	"github.com/shellgate/shellgate/policy"
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
	spill  string        // this Gate's spill directory, in cfg.SpillDir
	quota  *output.Quota // its bytes, cfg.SpillTotal
	box    *box          // the kernel sandbox
	// covers are what contains commands besides the policy, as planned
	// (plannedCovers): each command is judged once, its verdict taken for them.
	covers policy.Covers
	// settings are policy's: the configured ones, less what the sandbox contains.
	settings policy.Settings
	auditLog *audit.Lazy // records every request (audit.go); nil: off
	refused  refusals    // the budget of refused requests' lines (audit.go)

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

	sessMu   sync.Mutex
	sessions map[*Session]bool // open sessions, closed with the Gate

	egress egressGate // allow-listed egress (egress.go)
	repos  *repos     // what appears in the root (repos.go)

	cps *gateCheckpoints // the checkpoints taken before commands (checkpoints.go)

	caches gateCaches // the project's copies of the tool caches (caches.go)
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
	// NetworkMode is off, on or allow-list (NetworkAllowList: the domains of
	// Config.Network.Allow, through shellgate's proxy).
	NetworkMode string
	// NetworkAllow is the allow-list as configured (presets unresolved),
	// with NetworkMode allow-list.
	NetworkAllow []string
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
	g := &Gate{cfg: cfg, root: root, shell: sh, policy: chk.policy, home: chk.home,
		cps: newGateCheckpoints(root, cfg.Checkpoints)}
	// The Gate's own spill directory: what it spills is not another Gate's
	// (another project's session) to read, and its sandbox shows only this.
	g.spill = filepath.Join(cfg.SpillDir, output.SessionDirPrefix+strconv.FormatUint(rand.Uint64(), 36))
	g.quota = output.NewQuota(cfg.SpillTotal)
	if g.auditLog, err = openAudit(cfg.Audit); err != nil {
		return nil, err
	}
	if err := g.planSandbox(); err != nil {
		return nil, err
	}
	if err := checkNetwork(cfg.Network); err != nil {
		return nil, err
	}
	g.covers = g.plannedCovers()
	g.settings = cfg.Policy // the rules in force, for Info
	if g.covers.Checkpoint {
		g.settings.Relax = append(slices.Clip(g.settings.Relax), policy.RuleLoseWork)
	}
	if g.covers.Sandbox {
		g.settings.Relax = append(slices.Clip(g.settings.Relax), policy.SandboxRules...)
	}
	if err := g.makeTemp(); err != nil {
		return nil, err
	}
	g.repos = g.newRepos()
	g.sup = runner.NewSupervisor()
	g.box.sup = g.sup
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
	if dir == "" && g.sessionTmp() {
		g.setTemp(sandbox.SessionTemp(g.root), false)
		return nil
	}
	own := false
	if dir == "" {
		d, err := tempdir.New()
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
	// MYCODEAGENT=1 tells scripts an agent runs them (seed 001 §5.6), so that
	// they can turn interactive prompts off.
	extra := map[string]string{"TMPDIR": dir, "TMP": dir, "TEMP": dir, "MYCODEAGENT": "1"}
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
	c.DefaultTimeout = cmp.Or(c.DefaultTimeout, DefaultTimeout)
	c.MaxTimeout = cmp.Or(c.MaxTimeout, MaxTimeout)
	c.KillGrace = cmp.Or(c.KillGrace, DefaultKillGrace)
	c.OutputLimit = cmp.Or(c.OutputLimit, DefaultOutputLimit)
	c.MaxOutputLimit = cmp.Or(c.MaxOutputLimit, max(DefaultMaxOutputLimit, c.OutputLimit))
	if c.SpillDir == "" {
		c.SpillDir = output.DefaultSpillDir()
	}
	c.SpillMax = cmp.Or(c.SpillMax, DefaultSpillMax)
	c.SpillTotal = cmp.Or(c.SpillTotal, max(DefaultSpillTotal, c.SpillMax))
	c.SpillRetention = cmp.Or(c.SpillRetention, DefaultSpillRetention)
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
	case c.SpillTotal < 0:
		return fmt.Errorf("spill total %d must be positive", c.SpillTotal)
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
		SpillDir:       g.spill,
		Rules:          g.settings.Active(),
		NetworkMode:    g.NetworkMode(),
		NetworkAllow:   g.networkAllowInfo(),
		Sandboxed:      g.sandboxed(),
	}
}

// Close kills everything still running or left in the background by this Gate's
// commands, waits until it is gone, and removes the commands' private temp dir.
func (g *Gate) Close() error {
	g.sessMu.Lock()
	open := make([]*Session, 0, len(g.sessions))
	for s := range g.sessions {
		open = append(open, s)
	}
	g.sessMu.Unlock()
	var sessErr error
	for _, s := range open {
		if err := s.Close(); sessErr == nil {
			sessErr = err
		}
	}
	g.cps.close() // the checkpoints after the sessions' jobs, which have ended
	g.flushRefusals()
	// The audit log's fsync waits on the disk: it overlaps with ending the
	// commands and the sandbox instead of adding to them.
	synced := make(chan struct{})
	go func() {
		defer close(synced)
		g.auditLog.Sync()
	}()
	g.startMu.Lock()
	g.closed = true
	started := g.started
	g.startMu.Unlock()
	var err error
	if started {
		err = g.sup.Close()
	}
	if boxErr := g.box.close(); err == nil {
		err = boxErr
	}
	g.caches.close()
	os.Remove(g.spill) // made for the sandbox's view; kept if anything spilled
	g.closeRepos()
	<-synced
	if auditErr := g.auditLog.Close(); err == nil {
		err = auditErr
	}
	g.tmpMu.RLock()
	tmp, own := g.tmp, g.ownTmp
	g.tmpMu.RUnlock()
	if own {
		if rmErr := os.RemoveAll(tmp); err == nil {
			err = rmErr
		}
	}
	if err == nil {
		err = sessErr
	}
	return err
}

// Check returns the policy verdict for req without running anything. A directory that
// cannot be used yields a deny verdict saying why: rule confinement for one outside
// the root, no rule for one that is missing or not a directory (a bad parameter).
func (g *Gate) Check(req Request) Verdict {
	abs, _, err := resolveDir(g.root, req.Directory)
	if err != nil {
		return dirVerdict(err.(*dirError))
	}
	_, v, _ := g.judge(req.Command, g.policyEnv(abs))
	return verdict(v)
}

// CheckApproved is Check in a session whose user has approved some session
// keys (approved reports which): an ask is about the first sub-command whose
// key is not approved yet, and a line with all its asks approved is allowed.
func (g *Gate) CheckApproved(req Request, approved func(key string) bool) Verdict {
	abs, _, err := resolveDir(g.root, req.Directory)
	if err != nil {
		return dirVerdict(err.(*dirError))
	}
	return verdict(g.policy.Judge(req.Command, g.policyEnv(abs)).Verdict(g.covers, approved))
}

// judge checks a command line once, and decides as the Gate plans to
// contain it (plannedCovers); relied reports an allow that needed the
// sandbox.
func (g *Gate) judge(command string, pe policy.Env) (j *policy.Judgement, v policy.Verdict, relied bool) {
	j = g.policy.Judge(command, pe)
	v = j.Verdict(g.covers, nil)
	return j, v, v.Decision == policy.Allow && j.Verdict(policy.Covers{Checkpoint: g.covers.Checkpoint}, nil).Decision != policy.Allow
}

// plannedCovers are what contains commands besides the policy, as planned:
// the sandbox (it may turn out missing: admit decides again then) and the
// checkpoints.
func (g *Gate) plannedCovers() policy.Covers {
	c := policy.Covers{Checkpoint: !g.cps.off}
	if g.sandboxed() {
		c.Sandbox = true
		c.PrivateLoopback = runtime.GOOS == "linux" // a network namespace per session
		c.Egress = g.egressOn()                     // the proxy decides per domain
	}
	return c
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

// Run checks req against the policy, runs it and returns the envelope. It never
// panics on bad input: every problem is an error envelope. Cancelling ctx kills the
// command and everything it started. Every request is recorded in the audit log.
func (g *Gate) Run(ctx context.Context, req Request, opts ...Option) envelope.Envelope {
	c, opts := g.startAudit(req, "", opts)
	env := g.run(ctx, req, opts...)
	g.audit(c, &env)
	return env
}

func (g *Gate) run(ctx context.Context, req Request, opts ...Option) envelope.Envelope {
	o := options(opts)
	if req.RunInBackground || req.YieldAfter != 0 || req.YieldAfterMS != nil || req.TTY {
		env := envelope.NotRun(req.Command, envelope.CutParams(req.params(), envelope.EchoLimit), envelope.Err{Code: envelope.InvalidParam,
			Message: "run_in_background, yield_after_ms and tty need a session (Gate.NewSession; every MCP connection has one)."})
		return env
	}
	a, refused := g.admit(ctx, req, o, "", g.box)
	if refused != nil {
		return *refused
	}
	cp, refused := g.checkpoint(a, "run", req.Command, "")
	if refused != nil {
		return *refused
	}
	ended := g.egressCall(g.box, o, req.Command, "")
	env := g.execute(ctx, &a.env, req.Command, a.dir, a.timeout, a.budget, o)
	ended()
	cp.finish(&env, nil)
	g.noteAppeared(&env, "")
	return env
}

func options(opts []Option) runOptions {
	var o runOptions
	for _, opt := range opts {
		opt(&o)
	}
	return o
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
}

// admit validates req, resolves its directory (cwd, relative to the root, when
// req gives none), and judges it with the policy as the sandbox b allows; a
// request that may not run gets its refusal envelope instead.
func (g *Gate) admit(ctx context.Context, req Request, o runOptions, cwd string, b *box) (*admitted, *envelope.Envelope) {
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
	wanted := req.Directory
	if wanted == "" {
		wanted = cwd
	}
	dir, rel, err := resolveDir(g.root, wanted)
	if err != nil {
		v := dirVerdict(err.(*dirError)) // the rule Check names, too
		return nil, env.Refuse(envelope.Err{Code: v.Code, Rule: v.Rule, Message: v.Reason})
	}
	env.Data.Directory, env.Context.Cwd, env.Context.DirectoryResolved = rel, rel, rel

	pe := g.policyEnv(dir)
	pe.Terminal = req.TTY
	j, v, relied := g.judge(req.Command, pe)
	covers := g.covers
	if relied {
		if why := g.uncontained(b); why != "" || !g.egressHeld(b) {
			// The sandbox this allow counted on could not be set up, or lacks
			// a layer it needs: decide as without it, and say which.
			covers = policy.Covers{Checkpoint: covers.Checkpoint}
			v, relied = j.Verdict(covers, nil), false
			if why != "" && v.Decision != policy.Allow {
				v.Reason += " The sandbox would contain it, but here it lacks a layer (" + why + ")."
			}
		}
	}
	undoable := slices.Contains(v.Relaxed, policy.RuleLoseWork)
	if undoable && covers.Checkpoint && !g.undoCovers(v, dir) {
		// A checkpoint would not keep what it throws away: ask as without one.
		covers.Checkpoint = false
		v, undoable = j.Verdict(covers, nil), false
		relied = relied && v.Decision == policy.Allow
	}
	if req.TTY && v.Decision == policy.Allow {
		v, relied = g.terminalVerdict(req.Command, v, relied, b)
	}
	undoable = undoable && v.Decision == policy.Allow
	env.Context.Policy = &envelope.PolicyInfo{Decision: string(v.Decision), Rule: v.Rule, Reason: v.Reason, Sandboxed: relied}
	switch v.Decision {
	case policy.Deny:
		return nil, env.Refuse(envelope.Err{Code: refusalCode(v), Rule: v.Rule, Message: v.Reason})
	case policy.Ask:
		who, refusal := g.approveAll(ctx, req, v, j, covers, o.approver)
		if refusal != nil {
			return nil, env.Refuse(*refusal)
		}
		env.Context.Policy.Approved = who
	}
	if ctx.Err() != nil {
		return nil, env.Fail(envelope.Cancelled, "Command was cancelled before it could start.")
	}
	if !g.starting() {
		return nil, env.Fail(envelope.Cancelled, "Command was not started: shellgate is shutting down.")
	}
	g.sweep()
	g.auditDecision(o.audit, &env) // before it starts: a kill -9 leaves this line
	return &admitted{env: env, dir: dir, timeout: timeout, budget: budget,
		readOnly: v.ReadOnly, undoable: undoable}, nil
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

// approve asks the approver about an "ask" verdict.
func (g *Gate) approve(ctx context.Context, req Request, v policy.Verdict, a Approver) (answer string, ok, asked bool) {
	if a == nil {
		return "", false, false
	}
	q := Question{Command: req.Command, Rule: v.Rule, Reason: v.Reason, SessionKey: v.SessionKey}
	if _, ok := q.Shown(); !ok {
		return "", false, true // approveAll says why
	}
	switch a(ctx, q) {
	case AllowOnce:
		return "once", true, true
	case AllowSession:
		return "session", true, true
	case NotAsked:
		return "", false, false
	}
	return "", false, true
}

// approveAll asks about v, then about each further ask of the line (another
// rule, another sub-command) that the answers so far do not cover, so that no
// command rides on another's approval. It returns "once" if any answer was
// for this run only, else "session"; or the refusal of the first not approved.
func (g *Gate) approveAll(ctx context.Context, req Request, v policy.Verdict, j *policy.Judgement, covers policy.Covers, a Approver) (string, *envelope.Err) {
	approved := map[string]bool{}
	asked := map[string]bool{}
	who := "session"
	for {
		answer, ok, put := g.approve(ctx, req, v, a)
		if _, shown := (Question{Command: req.Command}).Shown(); !ok && a != nil && !shown {
			return "", &envelope.Err{Code: envelope.ApprovalRequired, Rule: v.Rule, Message: fmt.Sprintf(
				"Approval required: %s The command is too long to show for approval (%d bytes; at most %d bytes and %d lines are shown whole), so the user was not asked. Split it into shorter commands, or write it to a script file in the project and ask the user to review and allow that.",
				v.Reason, len(req.Command), MaxShownCommand, MaxShownLines)}
		}
		if !ok {
			return "", &envelope.Err{Code: envelope.ApprovalRequired, Rule: v.Rule, Message: g.approvalMessage(v, put)}
		}
		if answer == "once" {
			who = "once"
		}
		asked[askID(v)] = true
		if v.SessionKey == "" {
			// The engine cannot look past an ask that has no key: the others
			// (if any) were shown to the user with the whole command line.
			return who, nil
		}
		approved[v.SessionKey] = true
		next := j.Verdict(covers, func(key string) bool { return approved[key] })
		if next.Decision != policy.Ask || asked[askID(next)] {
			return who, nil
		}
		v = next
	}
}

func askID(v policy.Verdict) string {
	return fmt.Sprintf("%s\x00%s\x00%d:%d\x00%s", v.Rule, v.Command, v.Line, v.Col, v.SessionKey)
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
func (g *Gate) execute(ctx context.Context, env *envelope.Envelope, command, dir string, timeout time.Duration, budget int, o runOptions) envelope.Envelope {
	sess, failed := g.confine(env, g.box)
	if failed != nil {
		return *failed
	}
	childEnv, secrets := g.childEnv()
	stdout, stderr := g.captures(budget, o, secrets)
	spec := runner.Spec{
		Argv:      g.shell.Argv(command),
		Dir:       dir,
		Env:       g.keepCreated(env, childEnv),
		Stdout:    tee(stdout, "stdout", o.onOutput, secrets),
		Stderr:    tee(stderr, "stderr", o.onOutput, secrets),
		Timeout:   timeout,
		KillGrace: g.cfg.KillGrace,
	}
	if o.stdio != nil {
		spec.Stdin, spec.Stdout, spec.Stderr = o.stdio.in, o.stdio.out, o.stdio.err
	}
	res, err := g.sup.Run(ctx, spec)
	env.Context.TimeoutMS = timeout.Milliseconds()
	return g.finish(env, res, err, stdout, stderr, budget, sess, o)
}

// confine starts (or finds) the sandbox session of b and records in env what it
// applied; in sandbox mode "on" a missing layer refuses the command.
func (g *Gate) confine(env *envelope.Envelope, b *box) (*sandbox.Session, *envelope.Envelope) {
	if !g.sandboxed() {
		env.Context.Sandbox = "off"
		return nil, nil
	}
	sess, report, err := g.session(b, b.sup)
	if err != nil {
		env.Context.Sandbox = report.Map() // what is missing, as in auto mode
		return nil, env.Fail(envelope.SandboxUnavailable, fmt.Sprintf("Not run: %v. Run `shellgate doctor` to see what this machine supports, or use --sandbox auto to run with what is available.", err))
	}
	m := report.Map()
	g.egressReport(m)
	env.Context.Sandbox = m
	if b.takeRestarted() {
		env.Note(restartNote)
	}
	return sess, nil
}

// captures returns the bounded sinks of a call's stdout and stderr. Each may
// need the whole budget; who gets what is settled at the end.
// childEnv is the commands' environment, and the secrets stripped from it.
func (g *Gate) childEnv() ([]string, map[string]string) {
	_, envOpts := g.temp()
	base := os.Environ()
	return g.egressEnv(shell.Env(base, envOpts)), shell.Secrets(base, envOpts)
}

// Secret values stripped from the environment (secrets) are redacted if the
// command prints them anyway.
func (g *Gate) captures(budget int, o runOptions, secrets map[string]string) (stdout, stderr *output.Capture) {
	stdout = output.New(output.Options{Limit: budget, SpillDir: g.spill, SpillMax: g.cfg.SpillMax, Quota: g.quota, NoSpill: o.noSpill, Name: "stdout", Redact: secrets})
	stderr = output.New(output.Options{Limit: budget, SpillDir: g.spill, SpillMax: g.cfg.SpillMax, Quota: g.quota, NoSpill: o.noSpill, Name: "stderr", Redact: secrets})
	return stdout, stderr
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
	d.Digest = digest(out, errOut)
	noteSpills(env, out, errOut)
	if sess != nil {
		if h := g.networkHint(d, time.Now().Add(-res.Duration)); h != "" {
			env.Note(h)
		} else if h := hint.Unseen(d, g.root); h != "" {
			env.Note(h)
		}
	}
	for _, n := range res.Notes {
		env.Note(n)
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
			env.Note(fmt.Sprintf("Full %s file stopped at %d bytes (a file's cap, or the session's for all its files); %d bytes were printed in all.", r.name, r.res.SpillSize, r.res.Total))
		}
		if r.res.SpillErr != nil {
			env.Note(fmt.Sprintf("Full %s could not be saved: %v", r.name, r.res.SpillErr))
		}
	}
}
