package shellgate

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/shellgate/shellgate/envelope"
	"github.com/shellgate/shellgate/internal/audit"
	"github.com/shellgate/shellgate/internal/cachestore"
	"github.com/shellgate/shellgate/internal/checkpoint"
	"github.com/shellgate/shellgate/internal/home"
	"github.com/shellgate/shellgate/internal/protect"
	"github.com/shellgate/shellgate/internal/runner"
	"github.com/shellgate/shellgate/internal/sandbox"
	"github.com/shellgate/shellgate/internal/tempdir"
)

// SandboxMode says how much confinement a Gate insists on: SandboxAuto (the
// default) applies every layer the kernel offers and reports those it lacks,
// SandboxOn refuses to run a command when a layer is missing, SandboxOff runs
// commands unconfined (the policy still applies).
type SandboxMode = sandbox.Mode

// The sandbox modes.
const (
	SandboxAuto = sandbox.Auto
	SandboxOn   = sandbox.On
	SandboxOff  = sandbox.Off
)

// SandboxProfile is what a session's commands may change.
type SandboxProfile = sandbox.Profile

// The sandbox profiles.
const (
	// ReadOnly: nothing writable but the session's temp dirs; network off.
	ReadOnly = sandbox.ReadOnly
	// WorkspaceWrite: the project root, the temp dirs, tool caches and the
	// configured writable paths (the default).
	WorkspaceWrite = sandbox.WorkspaceWrite
	// FullAccess: no sandbox; the policy still applies.
	FullAccess = sandbox.FullAccess
)

// SandboxLimits bound what a session's processes may use (processes,
// memory, file size, CPU time); zero fields take the defaults.
type SandboxLimits = sandbox.Limits

// SandboxStep is one step of the plan a session's view is built from
// (Gate.SandboxPlan): a bind, a mask, a tmpfs, a Landlock rule, a limit.
type SandboxStep = sandbox.Step

// SandboxConfig is how the kernel confines commands (see internal/sandbox). The
// zero value is the default: everything the kernel offers, the workspace-write
// profile, the network as the policy says.
type SandboxConfig struct {
	Mode    SandboxMode    // auto (default), on or off
	Profile SandboxProfile // workspace-write (default), read-only or full-access
	// Hide names more secret files and directories that commands read as empty,
	// besides DefaultHidden; "~/" stands for the home directory.
	Hide []string
	// Protect names more paths in the root that stay read-only, besides
	// DefaultProtected.
	Protect []string
	// Visible names more paths commands see, read-only, besides what the view
	// shows by default (the system, the toolchains in the home; see
	// sandbox.Plan); "~/" stands for the home directory.
	Visible []string
	// NoCaches keeps the tool caches (Go, npm, pip, cargo …) read-only too.
	NoCaches bool
	// TmpSize caps the session's private /tmp, in bytes (default 2 GiB).
	TmpSize int64
	// HostPorts are ports of the host's loopback that commands reach on their
	// own localhost when the network is off (a dev server, a database):
	// shellgate forwards them into the session.
	HostPorts []int
	Limits    SandboxLimits
}

// DefaultHidden returns the secrets commands read as empty, relative to the home
// directory: a copy, so that no caller can change what every Gate hides.
func DefaultHidden() []string { return protect.Secrets() }

// DefaultProtected returns the paths in the root that commands cannot change: they
// run later outside any check (git hooks and config, editor and agent settings,
// CI workflows, direnv, shellgate's own project config). A copy, like DefaultHidden.
func DefaultProtected() []string { return protect.RootPaths() }

// box is the sandbox of a Gate or of one of its sessions: planned in New,
// started by the first command. Its commands run through sup.
type box struct {
	mode   sandbox.Mode
	wanted bool // the profile and platform call for a sandbox
	sup    *runner.Supervisor

	mu      sync.Mutex
	started bool
	closed  bool
	// early is the session's helper started ahead (Gate.PrestartSandbox),
	// until the first session takes it or it is discarded.
	early *sandbox.Early
	// oneShot: its Gate runs one command (PrestartSandbox), whose session
	// may end as soon as the command has (sandbox.Spec.OneShot).
	oneShot bool
	session *sandbox.Session
	report  sandbox.Report
	err     error // why the session could not start
	// restarted: the session died and a new one started; the next
	// command's result says so (takeRestarted).
	restarted bool

	egress egressCalls // its commands, for the egress proxy (egress.go)

	// leave is what checkpoints taken for its commands leave out once its
	// first session started with a guard (checkpoint_leave.go); pinned are
	// the protected paths sessions it replaced kept in place.
	leave  *checkpoint.Leave
	pinned []string
}

// planSandbox decides in New whether commands will be sandboxed, which changes
// their temp dir and the policy's view of it.
func (g *Gate) planSandbox() error {
	wanted, err := sandboxWanted(&g.cfg.Sandbox)
	g.box = &box{mode: g.cfg.Sandbox.Mode, wanted: wanted}
	return err
}

// sandboxWanted reports whether the profile and platform call for a sandbox,
// once c's mode and profile are parsed; mode on without one is an error.
func sandboxWanted(c *SandboxConfig) (bool, error) {
	var err error
	if c.Mode, err = sandbox.ParseMode(string(c.Mode)); err != nil {
		return false, err
	}
	if c.Profile, err = sandbox.ParseProfile(string(c.Profile)); err != nil {
		return false, err
	}
	wanted := c.Mode != sandbox.Off && c.Profile != sandbox.FullAccess && sandbox.Here()
	if c.Mode == sandbox.On && !wanted {
		return false, fmt.Errorf("sandbox mode on: no sandbox on %s with profile %s", runtime.GOOS, c.Profile)
	}
	return wanted, nil
}

// sessionTmp reports whether the session has a /tmp of its own (Linux): on
// macOS and Windows the commands' temp dir is a private host directory.
func (g *Gate) sessionTmp() bool { return g.sandboxed() && runtime.GOOS == "linux" }

// sandboxed reports whether commands are meant to run in the sandbox.
func (g *Gate) sandboxed() bool { return g.box.wanted }

// session returns the running session, starting it on first use. In auto mode
// a session that cannot start leaves commands unconfined, and the report says
// why; in on mode the error refuses the command.
func (g *Gate) session(b *box, sup *runner.Supervisor) (*sandbox.Session, sandbox.Report, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.started && !b.closed && b.session != nil && !b.session.Alive() {
		// The session died (its helper went down, with everything in it):
		// the next command gets a new one.
		pinned, _ := b.session.Guard()
		b.pinned = append(b.pinned, pinned...)
		b.session.Close()
		b.session, b.started, b.restarted = nil, false, true
	}
	if !b.started {
		b.started = true
		spec, linked := g.sandboxSpec()
		spec.EgressHandler = g.egressHandler(b)
		spec.OneShot = b.oneShot
		if linked.GitDir != "" {
			linked.Prepare()
		}
		if spec.CacheStore != "" {
			if err := g.caches.hold(filepath.Dir(spec.CacheStore), g.root); err != nil {
				spec.CacheStore = "" // the caches as they are, read-only: a build still runs
				spec.Visible = append(spec.Visible, spec.Caches...)
				spec.Caches = nil
			}
		}
		g.takeUntold(spec.QuarantineLog)
		g.watching() // beside the start: its findings are needed by the first command
		if runtime.GOOS != "linux" {
			spec.Protected = append(spec.Protected, g.nestedProtected()...)
		}
		leave := leaveAtStart(g.root, spec)
		early := b.early
		b.early = nil
		b.session, b.err = early.Start(spec) // a new helper when there is none ahead
		if b.err == nil && b.leave == nil {
			if _, guarded := b.session.Guard(); guarded {
				b.leave = leave // the first session's: what a later one started with may be a job's
			}
		}
		if b.err == nil && runtime.GOOS == "linux" {
			b.session.KeepReadOnly(g.nestedProtected())
		}
		if b.err == nil {
			b.report = b.session.Report()
			sup.SetLauncher(b.session)
			sup.OnLauncherGone(func() (runner.Launcher, string, error) { return g.renewSession(b, sup) })
			if b.report.Layers[sandbox.LayerTmp] == "" && g.sessionTmp() && b.mode != sandbox.On {
				g.useHostTemp() // a session without a mount namespace: /tmp is the host's
			}
		} else {
			b.report = sandbox.Report{Missing: []string{b.err.Error()}}
			if b.mode != sandbox.On {
				g.useHostTemp()
			}
		}
	}
	if b.mode == sandbox.On {
		if b.err != nil {
			return nil, b.report, b.err
		}
		if len(b.report.Missing) > 0 {
			return nil, b.report, fmt.Errorf("sandbox mode on, but missing: %s", strings.Join(b.report.Missing, "; "))
		}
	}
	return b.session, b.report, nil
}

// restartNote is told to the model with the first command of a new session
// that replaced one that died: what it relied on there is gone.
const restartNote = "The sandbox session had ended (its helper went down, and every process of the session with it), so this command runs in a new sandbox session: the background jobs, terminal jobs and /tmp files of the old one are gone."

// renewSession replaces b's session for a command that could not start in it
// because it had just ended (the session had not seen it yet when the
// command was admitted): the command starts in the new one, and its result
// says so.
func (g *Gate) renewSession(b *box, sup *runner.Supervisor) (runner.Launcher, string, error) {
	sess, _, err := g.session(b, sup)
	if err != nil {
		return nil, "", err
	}
	if sess == nil { // not without the sandbox the command was admitted for
		return nil, "", errors.New("no new sandbox session")
	}
	note := ""
	if b.takeRestarted() {
		note = restartNote
	}
	return sess, note, nil
}

// takeRestarted reports, once, that the session was replaced by a new one.
func (b *box) takeRestarted() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	r := b.restarted && b.session != nil
	if r {
		b.restarted = false
	}
	return r
}

// confining reports whether commands run contained: with every layer the
// policy's sandbox relaxations count on (see contained), starting the session
// if need be.
func (g *Gate) confining(b *box) bool { return g.uncontained(b) == "" }

// uncontained says why commands do not run contained: the sandbox is off, or
// a layer is missing here (sandbox.Report.Uncontained); "" when they do.
func (g *Gate) uncontained(b *box) string {
	if !g.sandboxed() {
		return "the sandbox is off"
	}
	s, r, err := g.session(b, b.sup)
	switch {
	case err != nil:
		return err.Error()
	case s == nil:
		if why := r.Uncontained(); why != "" {
			return why
		}
		return "no sandbox session"
	}
	return r.Uncontained()
}

// unhidden reports whether commands see the host's files as they are
// (secrets included): a sandbox was planned, but its session has no view of
// its own, or did not start. With start false it answers only for a session
// that already tried to start (an ask does not start one while the user
// decides), and false before.
func (g *Gate) unhidden(b *box, start bool) bool {
	if !g.sandboxed() {
		return false // the policy is the unconfined one already
	}
	if !start {
		b.mu.Lock()
		started := b.started
		b.mu.Unlock()
		if !started {
			return false
		}
	}
	_, r, err := g.session(b, b.sup)
	return err != nil || r.Layers[sandbox.LayerSecrets] == ""
}

// useHostTemp gives commands a private host temp dir when the session's /tmp is
// not there after all.
func (g *Gate) useHostTemp() {
	if tmp, _ := g.temp(); tmp != sandbox.SessionTemp(g.root) {
		return // one the user configured
	}
	if d, err := tempdir.New(); err == nil {
		g.setTemp(d, true)
	}
}

// PrestartSandbox starts the sandbox session's helper process now, in the
// background, for a Gate about to run one command (`shellgate run`): its
// start, a second start of this executable in new namespaces, then overlaps
// the policy's check and the building of the session's view instead of
// following them. The command's session takes it. A command that is refused,
// or that must wait to be approved, ends it at once, before the envelope
// returns (an approved one starts a new one); Close ends it too. The
// Gate's sessions are then for that one command: one ends as soon as its
// command has, if nothing of it is left (sandbox.Spec.OneShot). It does
// nothing where commands are not sandboxed, or a session already started.
func (g *Gate) PrestartSandbox() {
	if !g.sandboxed() || runtime.GOOS != "linux" {
		return
	}
	b := g.box
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.started || b.early != nil {
		return
	}
	c := g.cfg.Sandbox
	b.early, b.oneShot = sandbox.Prestart(g.sandboxNetwork(), c.Limits), true
}

// idle tells the box's sandbox session, if one runs, that its user is idle
// (Gate.Idle).
func (b *box) idle() {
	b.mu.Lock()
	sess := b.session
	b.mu.Unlock()
	if sess != nil {
		sess.Idle()
	}
}

// dropEarly ends the helper started ahead, if no session took it: when it
// returns the helper is gone, and its cgroup.
func (b *box) dropEarly() {
	b.mu.Lock()
	early := b.early
	b.early = nil
	b.mu.Unlock()
	early.Discard()
}

// close ends the sandbox session: every process in it is gone when it returns.
func (b *box) close() error { return b.closeBeside(func() {}) }

// closeBeside is close, calling beside once every process of the session's
// commands is gone: beside the helper's own exit where it can
// (sandbox.Session.CloseBeside), else after it.
func (b *box) closeBeside(beside func()) error {
	b.dropEarly()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.started, b.closed = true, true // no session after Close
	if b.session == nil {
		beside()
		return nil
	}
	err := b.session.CloseBeside(beside)
	b.session = nil
	return err
}

// sandboxSpec is the session's confinement from the Gate's configuration,
// and the root's linked git directory it shows (the zero Linked when there
// is none, or the view is read-only): the root's .git read once.
func (g *Gate) sandboxSpec() (spec sandbox.Spec, linked protect.Linked) {
	c := g.cfg.Sandbox
	g.spill.Make() // the view shows what exists when it is built; unmade, a spill says why
	childHome := g.childHome()
	spec = sandbox.Spec{
		Network: g.sandboxNetwork(),
		TmpSize: c.TmpSize,
		TempDir: sandbox.SessionTemp(g.root),
		// Only needed with the network off; the helper ignores them otherwise.
		HostPorts: c.HostPorts,
		Limits:    c.Limits,
		Home:      g.home, // the user's, whose git runs on the host
		Visible:   []string{g.spill.Path, g.shell.Path},
	}
	for _, v := range c.Visible {
		if rest, ok := strings.CutPrefix(v, "~/"); ok {
			v = filepath.Join(childHome, rest)
		}
		if filepath.IsAbs(v) {
			spec.Visible = append(spec.Visible, filepath.Clean(v))
		}
	}
	spec.EgressPort, spec.EgressHandler = g.egressSpec() // egress.go
	if !g.sessionTmp() {
		spec.TempDir, _ = g.temp() // a host directory, writable in the session
	}
	spec.Hidden = g.hidden(childHome)
	if c.Profile != sandbox.ReadOnly {
		spec.Writable = append([]string{g.root}, g.cfg.Policy.WritablePaths...)
		if caches, _ := home.Caches(childHome, spec.Hidden, g.getenv); !c.NoCaches {
			spec.Caches, spec.MakeCaches = caches, home.GoCaches(childHome, g.getenv)
			if store := cacheStore(); store != "" {
				spec.CacheStore = cachestore.DirFor(store, g.root)
			}
		} else {
			spec.Visible = append(spec.Visible, caches...)
		}
		for _, p := range append(DefaultProtected(), c.Protect...) {
			spec.Protected = append(spec.Protected, filepath.Join(g.root, p))
		}
		// A linked worktree's git directory is elsewhere: commits write there.
		if l, ok := protect.LinkedGitDir(g.root); ok {
			linked = l
			spec.Visible = append(spec.Visible, l.Common)
			spec.Writable = append(spec.Writable, l.Writable...)
			spec.Protected = append(spec.Protected, l.Protected...)
			spec.GitDirs = l.Swept()
		}
		// What the root's and the user's git config make git run from the
		// root (core.hooksPath, an fsmonitor script, included files).
		spec.Protected = append(spec.Protected, protect.GitRunsFrom(g.root, g.home, linked)...)
		spec.Protected = append(spec.Protected, protect.OtherWorktrees(g.root)...)
		spec.Protected = append(spec.Protected, protect.BareRoot(g.root)...)
		spec.Patterns = protect.RootPatterns()
		spec.Quarantine = filepath.Join(g.root, sandbox.QuarantineDir)
		spec.QuarantineLog = quarantineLog(g.root)
		spec.StoreLinks, spec.LinkCopyMax = g.cps.storeLinks()
	}
	return spec, linked
}

// sandboxNetwork reports whether the session shares the host's network.
func (g *Gate) sandboxNetwork() bool {
	return g.cfg.Policy.Network && g.cfg.Sandbox.Profile != sandbox.ReadOnly
}

// hidden are the secrets the view never shows: the built-in ones and the
// user's ([sandbox] hide), in the commands' home and in the user's own.
func (g *Gate) hidden(childHome string) []string {
	var hidden []string
	for _, h := range protect.SecretPaths(childHome, g.cfg.Sandbox.Hide) {
		hidden = append(hidden, h)
		if g.home != "" && g.home != childHome && strings.HasPrefix(h, childHome+"/") {
			hidden = append(hidden, filepath.Join(g.home, strings.TrimPrefix(h, childHome+"/")))
		}
	}
	return hidden
}

// RefusedCaches are the tool caches the commands' environment names that the
// sandbox does not show, each with why ("DIR: lies in the secret ~/.ssh"):
// what `shellgate doctor --plan` lists after the plan.
func (g *Gate) RefusedCaches() []string {
	childHome := g.childHome()
	_, refused := home.Caches(childHome, g.hidden(childHome), g.getenv)
	return refused
}

// SandboxPlan is the view the Linux sandbox builds for this Gate's commands,
// step by step (see sandbox.Plan): what `shellgate doctor --plan` prints.
func (g *Gate) SandboxPlan() []SandboxStep {
	spec, _ := g.sandboxSpec()
	return sandbox.Plan(spec, sandbox.SessionFacts(spec))
}

// getenv is a variable of the commands' environment: the configured one, else
// shellgate's own.
func (g *Gate) getenv(k string) string {
	if v, ok := g.cfg.Env[k]; ok {
		return v
	}
	return os.Getenv(k)
}

// childHome is $HOME as commands see it.
func (g *Gate) childHome() string {
	if h := g.cfg.Env["HOME"]; h != "" {
		return h
	}
	return g.home
}

// keepCreated marks the environment of a command the user approved, for the
// sandbox: the protected paths the approval named (keep) stay where they are
// (read-only) if it creates them; others it creates go to the quarantine.
// Only shellgate sets it: one inherited from its own environment goes.
func (g *Gate) keepCreated(keep []string, childEnv []string) []string {
	childEnv = slices.DeleteFunc(slices.Clone(childEnv), sandbox.IsKeepCreated)
	if len(keep) > 0 && g.sandboxed() {
		return append(childEnv, sandbox.KeepCreated(keep))
	}
	return childEnv
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
	if sess != nil {
		for _, n := range sess.TakeNotes() {
			env.Note(n)
		}
		sess.OnStopped(g.auditStopped)
	}
	return sess, nil
}

// auditStopped writes that the sandbox ended every process of its session
// because one of them made paths (protected, absolute) again after their
// move aside (sandbox.Session.OnStopped).
func (g *Gate) auditStopped(paths []string) {
	if g.auditLog == nil {
		return
	}
	rel := make([]string, len(paths))
	for i, p := range paths {
		rel[i] = p
		if r, err := filepath.Rel(g.root, p); err == nil && filepath.IsLocal(r) {
			rel[i] = r
		}
	}
	g.auditLog.Write(audit.Entry{Event: audit.EventStopped, Time: time.Now().UTC(), Root: g.root, Moved: rel})
}
