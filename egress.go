package shellgate

import (
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shellgate/shellgate/envelope"
	"github.com/shellgate/shellgate/internal/audit"
	"github.com/shellgate/shellgate/internal/egress"
	"github.com/shellgate/shellgate/internal/hint"
	"github.com/shellgate/shellgate/internal/sandbox"
	"github.com/shellgate/shellgate/policy"
)

// NetworkConfig is the network between off and on: allow-listed egress.
type NetworkConfig struct {
	// Allow, with the network off, turns on allow-listed egress: the session
	// keeps only its loopback, and commands reach the domains listed here
	// through shellgate's proxy, bridged into the session as a loopback port;
	// nothing else. Entries: "registry.npmjs.org", "*.example.com" (the
	// subdomains), an address or prefix ("10.1.2.3", "10.0.0.0/8": also
	// allows names resolving there), or the preset "registries" (the package
	// registries the tools on this machine are configured with). It needs
	// the Linux sandbox; elsewhere the network stays off.
	Allow []string
}

// Network modes, as context.sandbox and Info report them.
const (
	NetworkOff       = "off"
	NetworkOn        = "on"
	NetworkAllowList = "allow-list"
)

// egressPort is where commands find the proxy on their loopback, unless a
// forwarded host port takes it.
const egressPort = 3128

// egressGate is a Gate's allow-listing proxy, made when its first sandbox
// session starts (the preset runs the tools, which takes a moment).
type egressGate struct {
	once    sync.Once
	proxy   *egress.Proxy
	sources []egress.Source // what the presets resolved to
	err     error

	refused egress.Refusals // the latest refusals, for the envelopes' notes
}

// checkNetwork checks the allow-list's entries in New.
func checkNetwork(c NetworkConfig) error {
	var plain []string
	for _, e := range c.Allow {
		if !egress.IsPreset(e) {
			plain = append(plain, e)
		}
	}
	_, err := egress.ParseAllow(plain)
	return err
}

// NetworkMode is how commands reach the network: off, on, or allow-list
// (allow-listed egress, which needs the Linux sandbox).
func (g *Gate) NetworkMode() string {
	switch {
	case g.cfg.Policy.Network && g.cfg.Sandbox.Profile != sandbox.ReadOnly:
		return NetworkOn
	case g.egressOn():
		return NetworkAllowList
	}
	return NetworkOff
}

// egressOn reports allow-listed egress: an allow-list, the network off, and a
// session that can enforce it (a network of its own on Linux, a Seatbelt
// profile that lets commands reach only the proxy's port on macOS).
func (g *Gate) egressOn() bool { return egressWanted(g.cfg, g.sandboxed()) }

// egressWanted reports whether cfg's commands, sandboxed or not, go out
// through the egress proxy.
func egressWanted(cfg Config, sandboxed bool) bool {
	return len(cfg.Network.Allow) > 0 && !cfg.Policy.Network && sandboxed &&
		(runtime.GOOS == "linux" || runtime.GOOS == "darwin") && cfg.Sandbox.Profile != sandbox.ReadOnly
}

// egressNotEnforced says why an allow-list configured with the network off
// is not in force.
func (g *Gate) egressNotEnforced() string {
	switch {
	case g.cfg.Sandbox.Profile == sandbox.ReadOnly:
		return "the read-only profile has no network: the allow-list is not used"
	case runtime.GOOS == "windows":
		return "Windows cannot confine a command's network (a job object does not): the allow-list is not enforced, and only the policy's network rule, which refuses network clients by name, stands between commands and the network"
	}
	return "allow-listed egress needs the sandbox's network namespace: the network stays off"
}

// egressPort is the proxy's port in the session: egressPort, or the next
// one no host port takes.
func (g *Gate) egressPort() int {
	p := egressPort
	for slices.Contains(g.cfg.Sandbox.HostPorts, p) {
		p++
	}
	return p
}

// ResolveNetworkAllow expands the presets of an allow-list ("registries")
// into what they name on this machine for the project at root, running the
// tools in env (nil: this process's): the entries, and the sources of the
// preset's.
func ResolveNetworkAllow(ctx context.Context, allow []string, root string, env []string) ([]string, []egress.Source) {
	var out []string
	var sources []egress.Source
	for _, e := range allow {
		if !egress.IsPreset(e) {
			out = append(out, e)
			continue
		}
		if sources == nil {
			sources = egress.Registries(ctx, egress.Machine{Run: egress.Command(env), Dir: root, Env: env})
		}
	}
	for _, s := range sources {
		out = append(out, s.Hosts...)
	}
	return out, sources
}

// egressProxy makes the proxy on first use.
func (g *Gate) egressProxy() (*egress.Proxy, error) {
	e := &g.egress
	e.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		var entries []string
		entries, e.sources = ResolveNetworkAllow(ctx, g.cfg.Network.Allow, g.root, nil)
		list, err := egress.ParseAllow(entries)
		if err != nil {
			e.err = err
			return
		}
		e.proxy = &egress.Proxy{Allow: list}
	})
	return e.proxy, e.err
}

// egressSpec is what the session needs for allow-listed egress: the
// proxy's port in it and the handler of its connections (for the Gate's
// own sandbox session; egressHandler makes another's).
func (g *Gate) egressSpec() (int, func(context.Context, net.Conn)) {
	h := g.egressHandler(g.box)
	if h == nil {
		return 0, nil // Report says egress is missing; the network stays off
	}
	return g.egressPort(), h
}

// egressHandler serves the proxy's connections from b's sandbox session:
// it asks b's commands' approver about a domain not on the list, and names
// b's command in the audit log.
func (g *Gate) egressHandler(b *box) func(context.Context, net.Conn) {
	if !g.egressOn() {
		return nil
	}
	p, err := g.egressProxy()
	if err != nil {
		return nil
	}
	q := *p
	q.Ask = func(ctx context.Context, host string, port int) error { return g.askEgress(ctx, b, host, port) }
	q.Audit = func(ev egress.Event) { g.auditEgress(b, ev) }
	return func(ctx context.Context, c net.Conn) {
		q.ServeConn(context.WithValue(ctx, egressConnKey{}, c), c)
	}
}

// egressConnKey is the context key of the connection a question is about.
type egressConnKey struct{}

// connCommand is the PID of the command of b's session whose process made the
// connection ctx is about; 0 if not known.
func connCommand(ctx context.Context, b *box) int {
	c, _ := ctx.Value(egressConnKey{}).(net.Conn)
	b.mu.Lock()
	s := b.session
	b.mu.Unlock()
	if c == nil || s == nil {
		return 0
	}
	return s.ConnCommand(c)
}

// egressRule is the Question.Rule of a domain not on the allow-list.
const egressRule = "egress"

// egressCalls are the commands running in one sandbox session (a box), for
// its proxy: whose approver is asked about a domain not on the allow-list,
// and which command the audit log names for a connection.
type egressCalls struct {
	mu      sync.Mutex
	session string          // the Session's id
	running []*egressCall   // in the order they started
	ended   []*egressCall   // the latest ended, for connections reported after
	allowed map[string]bool // domains allowed for the session
	turn    chan struct{}   // one question at a time: a person answers them
	// told is closed, and replaced, as a running command is told its PID
	// (egressCall's started): a question about a connection of a command
	// not yet told waits for it.
	told chan struct{}
	// left are the commands that returned leaving processes running (cmd
	// &), which may connect while a later command runs: named in its
	// questions. Kept for the session, the latest maxLeft.
	left []string
}

// maxLeft bounds the commands kept in egressCalls.left.
const maxLeft = 8

// egressLeft notes that command returned leaving processes running in b's
// session: a later command's question about a domain names it as one that
// may be connecting.
func (g *Gate) egressLeft(b *box, command string) {
	if !g.egressOn() {
		return
	}
	e := &b.egress
	e.mu.Lock()
	defer e.mu.Unlock()
	e.left = append(slices.DeleteFunc(e.left, func(c string) bool { return c == command }), command)
	if len(e.left) > maxLeft {
		e.left = e.left[len(e.left)-maxLeft:]
	}
}

// egressCall is one command, from before it starts to its end.
type egressCall struct {
	id, command string // the audit log's call id, and the command line
	approver    Approver
	start, end  time.Time
	answered    map[string]bool // domains allowed (true) or declined for this command
	// shared: domains allowed or declined by an answer to a question where
	// the process that connects was not found (Question.Others): they
	// alone count for another such connection, whose process may be any.
	shared map[string]bool
	pid    atomic.Int64 // once started: its PID, by which ConnCommand names it
}

// byPID is the running or recently ended call whose command has PID pid.
// Locked by mu.
func (e *egressCalls) byPID(pid int) *egressCall {
	if pid <= 0 {
		return nil
	}
	for _, c := range slices.Concat(e.running, e.ended) {
		if c.pid.Load() == int64(pid) {
			return c
		}
	}
	return nil
}

// waitPID is byPID, where a running command not yet told its PID (the
// runner tells it once its launch returns, which a quick connect may beat)
// may be pid's: then once it is told, or none is left untold. Locked by
// mu, which it unlocks while it waits.
func (e *egressCalls) waitPID(ctx context.Context, pid int) (*egressCall, error) {
	for {
		c := e.byPID(pid)
		if c != nil || pid <= 0 || !slices.ContainsFunc(e.running, func(c *egressCall) bool { return c.pid.Load() == 0 }) {
			return c, nil
		}
		if e.told == nil {
			e.told = make(chan struct{})
		}
		told := e.told
		e.mu.Unlock()
		select {
		case <-told:
		case <-ctx.Done():
			e.mu.Lock()
			return nil, ctx.Err()
		}
		e.mu.Lock()
	}
}

// maxEnded bounds the ended calls kept for connections reported late.
const maxEnded = 16

// egressCall notes command, admitted as a, as running in b's sandbox session
// until the returned func is called: its connections through the proxy are
// its own, and its approver (if any) is asked about domains not on the list.
func (g *Gate) egressCall(b *box, a *admitted, o runOptions, command, session string) (ended func()) {
	if !g.egressOn() {
		return func() {}
	}
	c := &egressCall{command: command, approver: o.approver, start: time.Now(), answered: map[string]bool{}, shared: map[string]bool{}}
	e := &b.egress
	a.started = func(pid int) {
		e.mu.Lock()
		defer e.mu.Unlock()
		c.pid.Store(int64(pid))
		if e.told != nil {
			close(e.told)
			e.told = nil
		}
	}
	if o.audit != nil {
		c.id = o.audit.id
	}
	e.mu.Lock()
	e.session = session
	e.running = append(e.running, c)
	e.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			e.mu.Lock()
			defer e.mu.Unlock()
			c.end = time.Now()
			e.running = slices.DeleteFunc(e.running, func(x *egressCall) bool { return x == c })
			e.ended = append(e.ended, c)
			if len(e.ended) > maxEnded {
				e.ended = e.ended[len(e.ended)-maxEnded:]
			}
			if e.told != nil { // one waiting for it untold (waitPID)
				close(e.told)
				e.told = nil
			}
		})
	}
}

// afterJob calls ended when the job done says ends, or now if there is none.
func afterJob(done <-chan struct{}, ended func()) {
	if done == nil {
		ended()
		return
	}
	go func() {
		<-done
		ended()
	}()
}

// at returns the calls that were running at t. Locked by mu.
func (e *egressCalls) at(t time.Time) []*egressCall {
	var out []*egressCall
	for _, c := range slices.Concat(e.ended, e.running) {
		if !c.start.After(t) && (c.end.IsZero() || !c.end.Before(t)) {
			out = append(out, c)
		}
	}
	return out
}

// askEgress decides about a domain not on the allow-list for b's proxy: an
// earlier answer of the session or of a running command, else the approver
// of the latest command that has one; in approval mode never, no one is
// asked. The proxy holds the connection meanwhile, until ctx ends.
func (g *Gate) askEgress(ctx context.Context, b *box, host string, port int) error {
	if g.cfg.Policy.Mode == policy.ModeNever {
		return egress.ErrNotAsked
	}
	e := &b.egress
	e.mu.Lock()
	if e.allowed[host] {
		// Allowed for the session: whoever connects, without the look for
		// its process (ConnCommand: a read of each descriptor of the
		// session's commands, 58 ms at 10 000) or a turn behind a question.
		e.mu.Unlock()
		return nil
	}
	if e.turn == nil {
		e.turn = make(chan struct{}, 1)
	}
	turn := e.turn
	e.mu.Unlock()
	select {
	case turn <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-turn }()

	owner := connCommand(ctx, b)
	e.mu.Lock()
	// subject: the command whose process connects, found by its cgroup;
	// its own answers alone count, "only this command" is its processes.
	// nil where it cannot be found: then the answers given where it could
	// not be found either (shared) count, any running command's.
	subject, err := e.waitPID(ctx, owner)
	if err != nil {
		e.mu.Unlock()
		return err
	}
	// A stranger: a command of the session's whose process connects, but
	// none of those known here (it ended more than maxEnded commands ago):
	// no command's answer is its own, nor is its answer any command's.
	stranger := owner != 0 && subject == nil
	var asker *egressCall
	allowed, known := e.allowed[host], e.allowed[host]
	for _, c := range e.running {
		if ok, was := c.shared[host]; was && owner == 0 {
			allowed, known = allowed || ok, true
		}
		if c.approver != nil {
			asker = c
		}
	}
	if subject != nil {
		for _, m := range []map[string]bool{subject.answered, subject.shared} {
			if ok, was := m[host]; was {
				allowed, known = allowed || ok, true
			}
		}
		if subject.approver != nil && subject.end.IsZero() {
			asker = subject
		}
	}
	left := subject != nil && !subject.end.IsZero() // it has returned
	var others []string
	if subject == nil {
		// Not known which process connects: the question names every
		// other command that may be it.
		for _, c := range e.running {
			if c != asker && !slices.Contains(others, c.command) {
				others = append(others, c.command)
			}
		}
		for _, c := range e.left {
			if (asker == nil || c != asker.command) && !slices.Contains(others, c) {
				others = append(others, c)
			}
		}
	}
	e.mu.Unlock()
	switch {
	case allowed:
		return nil
	case known:
		return errors.New("the user declined it earlier in this command")
	case asker == nil:
		return egress.ErrNotAsked
	}
	q := Question{Command: asker.command, Rule: egressRule, SessionKey: "network " + host, Domain: host, Port: port, Others: others,
		Reason: fmt.Sprintf("It connects to %s (port %d), which is not on the network allow-list.", host, port)}
	answers := asker.shared // where the process was not found
	if stranger {
		answers = map[string]bool{} // this connection's alone
	} else if subject != nil {
		answers = subject.answered
		q.Command = subject.command
	}
	if left {
		q.Left = true
		q.Reason = fmt.Sprintf("A process it left running connects to %s (port %d), which is not on the network allow-list.", host, port)
	}
	answer := asker.approver(ctx, q)
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case answer == AllowSession:
		if e.allowed == nil {
			e.allowed = map[string]bool{}
		}
		e.allowed[host] = true
		return nil
	case answer == AllowOnce:
		answers[host] = true
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	case answer == NotAsked:
		return egress.ErrNotAsked
	}
	answers[host] = false
	return errors.New("the user declined it")
}

// egressEnv points commands at the proxy, when the network is allow-listed.
func (g *Gate) egressEnv(env []string) []string {
	if !g.egressOn() {
		return env
	}
	return egress.ClientEnv(env, g.egressPort())
}

// egressReport adds the network mode and the allow-list to context.sandbox.
func (g *Gate) egressReport(m map[string]any) {
	mode := g.NetworkMode()
	m["network"] = mode
	if mode == NetworkOff && len(g.cfg.Network.Allow) > 0 {
		m["allow_not_enforced"] = g.egressNotEnforced()
	}
	if mode != NetworkAllowList {
		return
	}
	if p, err := g.egressProxy(); err == nil {
		m["allow"] = p.Allow.Entries()
	}
}

// auditEgress records one connection through b's proxy, with the command
// that made it.
func (g *Gate) auditEgress(b *box, ev egress.Event) {
	if !ev.Allowed {
		g.egress.refused.Note(ev)
	}
	if g.auditLog == nil {
		return
	}
	e := audit.Entry{
		Event: audit.EventEgress, Time: ev.Start, Root: g.root, Action: "egress", Decision: "allow", Rule: "network",
		Egress: &audit.Egress{Proto: ev.Proto, Domain: ev.Domain, Port: ev.Port, Reason: ev.Reason, SentBytes: ev.Sent, ReceivedBytes: ev.Received},
	}
	if !ev.Allowed {
		e.Decision = "deny"
	}
	calls := &b.egress
	calls.mu.Lock()
	e.Session = calls.session
	at := calls.at(ev.Start)
	if ev.Approved {
		e.Approved = "once"
		if calls.allowed[ev.Domain] {
			e.Approved = "session"
		}
	}
	calls.mu.Unlock()
	switch {
	case len(at) == 1:
		e.Call, e.Command = at[0].id, at[0].command
	case len(at) > 1:
		for _, c := range at {
			e.Egress.Calls = append(e.Egress.Calls, c.id)
		}
	}
	g.auditLog.Write(e)
}

// NetworkAllow is the allow-list in force, presets resolved (resolving them
// if no session has yet).
func (g *Gate) NetworkAllow() ([]string, error) {
	p, err := g.egressProxy()
	if err != nil {
		return nil, err
	}
	return p.Allow.Entries(), nil
}

// networkHint explains a failure that looks like the sandbox's doing: with
// allow-listed egress, the proxy's refusals since the command started, or a
// client that ignored the proxy.
func (g *Gate) networkHint(d *envelope.Data, started time.Time) string {
	if !g.egressOn() {
		return hint.Sandbox(d, g.cfg.Policy.Network, g.cfg.Sandbox.HostPorts...)
	}
	return hint.Egress(d, g.egress.refused.Since(started), g.cfg.Sandbox.HostPorts...)
}

// networkAllowInfo is the allow-list for Info: as configured, the preset
// named for what it stands for.
func (g *Gate) networkAllowInfo() []string {
	if !g.egressOn() {
		return nil
	}
	out := make([]string, len(g.cfg.Network.Allow))
	for i, e := range g.cfg.Network.Allow {
		out[i] = e
		if egress.IsPreset(e) {
			out[i] = "the package registries configured on this machine (" + e + ")"
		}
	}
	return out
}

// egressHeld reports whether allow-listed egress, if configured, is in
// force in b's session: without its proxy port (no network namespace, a
// preset that failed) the policy must not leave the network to the proxy.
func (g *Gate) egressHeld(b *box) bool {
	if !g.egressOn() {
		return true
	}
	_, r, err := g.session(b, b.sup)
	return err == nil && r.Layers[sandbox.LayerEgress] != ""
}
