package shellgate

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shellgate/shellgate/envelope"
	"github.com/shellgate/shellgate/internal/audit"
	"github.com/shellgate/shellgate/internal/output"
	"github.com/shellgate/shellgate/internal/runner"
	"github.com/shellgate/shellgate/internal/shell"
	"github.com/shellgate/shellgate/internal/tempdir"
	"github.com/shellgate/shellgate/policy"
)

// Gate runs requests under one configuration. It is safe for concurrent use.
// Close it when done: it owns every process its commands started.
type Gate struct {
	cfg  Config
	root string
	// rootProblem refuses every command (RootProblem).
	rootProblem error
	shell       shell.Shell
	policy      *policy.Engine
	// unconfinedPolicy is the policy as without a sandbox (nil when none
	// is wanted: policy is that already), for a session that hides no
	// secrets after all (no user namespace here, or one that could not
	// start): made on first need.
	unconfinedPolicy func() (*policy.Engine, error)
	sup              *runner.Supervisor
	home             string
	spill            *output.SessionDir // this Gate's spill directory, in cfg.SpillDir
	quota            *output.Quota      // its bytes, cfg.SpillTotal
	box              *box               // the kernel sandbox
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
	// built is the commands' environment as last built from the process's
	// (see childEnv); reset when env changes.
	built atomic.Pointer[builtEnv]

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
	untold untold     // an earlier session's quarantine moves no one told (untold.go)
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

// RootProblem is why every command in the Gate's root is refused before it
// starts (its envelope's error is CHECKPOINT_FAILED with this message), or
// nil: a root of / or of the home directory holds the checkpoint store, so
// no checkpoint could be taken there. Say it once, up front: the CLI does,
// and the MCP server on stderr.
func (g *Gate) RootProblem() error { return g.rootProblem }

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
	// Without a sandbox the policy is the only wall: what it leaves to the
	// sandbox (a program given on the command line, reading the secrets) is
	// asked about, as in a hook's Checker (NewGateChecker).
	pol, sc := cfg.Policy, cfg.Sandbox
	if wanted, err := sandboxWanted(&sc); err == nil && !wanted {
		pol = unconfined(pol, cfg.Sandbox.Hide)
	}
	chk, err := newChecker(root, pol)
	if err != nil {
		return nil, err
	}
	g := &Gate{cfg: cfg, root: root, shell: sh, policy: chk.policy, home: chk.home,
		cps: newGateCheckpoints(root, cfg.Checkpoints)}
	g.rootProblem = g.cps.rootProblem(root)
	if !pol.Unconfined {
		g.unconfinedPolicy = sync.OnceValues(func() (*policy.Engine, error) {
			return policy.New(unconfined(pol, cfg.Sandbox.Hide))
		})
	}
	// The Gate's own spill directory: what it spills is not another Gate's
	// (another project's session) to read, and its sandbox shows only this.
	g.spill = output.NewSessionDir(cfg.SpillDir)
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
	g.settings = pol // the rules in force, for Info
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
		SpillDir:       g.spill.Path,
		Rules:          g.settings.Active(),
		NetworkMode:    g.NetworkMode(),
		NetworkAllow:   g.networkAllowInfo(),
		Sandboxed:      g.sandboxed(),
	}
}

// Idle tells the Gate that its user is idle: an agent's server that has
// heard nothing from its client for a while (`shellgate mcp` calls
// it after 5 s, beside giving back its own memory). Each sandbox session's
// helper then gives up its mappings of the executable's pages once no
// command of its runs; without Idle a helper keeps them until its session
// has sat empty for 30 s, so that a command after an agent's pause does not
// wait for them to be mapped back. It does not wait for the helpers, and
// the Gate runs on as before.
func (g *Gate) Idle() {
	g.box.idle()
	g.sessMu.Lock()
	open := make([]*Session, 0, len(g.sessions))
	for s := range g.sessions {
		open = append(open, s)
	}
	g.sessMu.Unlock()
	for _, s := range open {
		s.box.idle()
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
	// What the commands could touch goes once they are gone, beside the
	// sandbox helper's exit (the kernel's end of its namespaces) rather
	// than after it.
	var besideErr error
	boxErr := g.box.closeBeside(func() {
		g.spill.Close() // kept if anything spilled
		g.closeRepos()
		<-synced
		besideErr = g.auditLog.Close()
		g.tmpMu.RLock()
		tmp, own := g.tmp, g.ownTmp
		g.tmpMu.RUnlock()
		if own {
			if rmErr := tempdir.Remove(tmp); besideErr == nil {
				besideErr = rmErr
			}
		}
	})
	g.caches.close() // the session's overlays of the caches are gone with it
	for _, e := range []error{boxErr, besideErr, sessErr} {
		if err == nil {
			err = e
		}
	}
	return err
}

// Check returns the policy verdict for req without running anything. A directory that
// cannot be used yields a deny verdict saying why: rule confinement for one outside
// the root, no rule for one that is missing or not a directory (a bad parameter).
func (g *Gate) Check(req Request) Verdict {
	abs, refusal := g.checkable(req)
	if refusal != nil {
		return *refusal
	}
	_, v, _ := g.judge(req.Command, g.policyEnv(abs))
	return verdict(v)
}

// CheckApproved is Check in a session whose user has approved some session
// keys (approved reports which): an ask is about the first sub-command whose
// key is not approved yet, and a line with all its asks approved is allowed.
func (g *Gate) CheckApproved(req Request, approved func(key string) bool) Verdict {
	abs, refusal := g.checkable(req)
	if refusal != nil {
		return *refusal
	}
	return verdict(g.decide(g.policy.Judge(req.Command, g.policyEnv(abs)), g.covers, abs, approved))
}

// checkable is the directory req runs in, or the refusal Run would give a
// request it does not take (bad parameters, first: judging a line Run refuses
// is wasted, and one of 1 MiB takes seconds) or a directory it cannot use.
func (g *Gate) checkable(req Request) (dir string, refusal *Verdict) {
	if _, _, msg := g.validate(req); msg != "" {
		return "", &Verdict{Verdict: policy.Verdict{Decision: policy.Deny, Reason: msg}, Code: envelope.InvalidParam}
	}
	abs, _, err := resolveDir(g.root, req.Directory)
	if err != nil {
		v := dirVerdict(err)
		return "", &v
	}
	return abs, nil
}

// judge checks a command line once, and decides as the Gate plans to
// contain it (plannedCovers); relied reports an allow that needed the
// sandbox.
func (g *Gate) judge(command string, pe policy.Env) (j *policy.Judgement, v policy.Verdict, relied bool) {
	j = g.policy.Judge(command, pe)
	v = g.decide(j, g.covers, pe.Dir, nil)
	return j, v, v.Decision == policy.Allow && g.decide(j, policy.Covers{Checkpoint: g.covers.Checkpoint}, pe.Dir, nil).Decision != policy.Allow
}

// decide is j's verdict under covers (and approved), run in dir; an allow
// that counts on checkpoints for a line undo would not cover (undoCovers) is
// decided as without them. Check, CheckApproved and Run all decide here, so
// they agree.
func (g *Gate) decide(j *policy.Judgement, covers policy.Covers, dir string, approved func(string) bool) policy.Verdict {
	v := j.Verdict(covers, approved)
	if covers.Checkpoint && slices.Contains(v.Relaxed, policy.RuleLoseWork) && !g.undoCovers(v, dir, covers.Sandbox) {
		covers.Checkpoint = false
		v = j.Verdict(covers, approved)
	}
	return v
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

// Run checks req against the policy, runs it and returns the envelope. It never
// panics on bad input: every problem is an error envelope. Cancelling ctx kills the
// command and everything it started. Every request is recorded in the audit log.
func (g *Gate) Run(ctx context.Context, req Request, opts ...Option) envelope.Envelope {
	c, opts := g.startAudit(req, "", opts)
	env := g.run(ctx, req, opts...)
	if len(env.Data.BackgroundPIDs) > 0 {
		env.NoJobs() // its advice is for a Gate: no run_in_background without a session
	}
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
	a, refused := g.admit(ctx, req, o, "", g.box, false)
	if refused != nil {
		g.box.dropEarly() // not run: its sandbox's helper, started ahead, ends now
		return *refused
	}
	label := "run"
	if o.stdio != nil {
		label = "exec" // its own stdio: shellgate exec, as an agent's shell prefix runs it
	}
	cp, refused := g.checkpoint(a, g.box, label, req.Command, "")
	if refused != nil {
		g.box.dropEarly()
		return *refused
	}
	ended := g.egressCall(g.box, a, o, req.Command, "")
	env := g.execute(ctx, a, req.Command, o)
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
