package shellgate

import (
	"context"
	"fmt"
	"net"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/shellgate/shellgate/envelope"
	"github.com/shellgate/shellgate/internal/audit"
	"github.com/shellgate/shellgate/internal/egress"
	"github.com/shellgate/shellgate/internal/sandbox"
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

	mu      sync.Mutex
	refused []refusedAt // the latest refusals, for the envelopes' notes
}

// refusedAt is a connection the proxy refused, and when.
type refusedAt struct {
	at     time.Time
	target string // "x.invalid:443"
}

// maxRefused bounds the refusals kept for notes.
const maxRefused = 16

// noteRefused keeps a refusal for the note of the command that made it.
func (e *egressGate) noteRefused(ev egress.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.refused = append(e.refused, refusedAt{time.Now(), net.JoinHostPort(ev.Domain, strconv.Itoa(ev.Port))})
	if len(e.refused) > maxRefused {
		e.refused = e.refused[len(e.refused)-maxRefused:]
	}
}

// refusedSince lists the targets refused since t, each once.
func (e *egressGate) refusedSince(t time.Time) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for _, r := range e.refused {
		if !r.at.Before(t) && !slices.Contains(out, r.target) {
			out = append(out, r.target)
		}
	}
	return out
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
// session with a network of its own to enforce it.
func (g *Gate) egressOn() bool { return egressWanted(g.cfg, g.sandboxed()) }

// egressWanted reports whether cfg's commands, sandboxed or not, go out
// through the egress proxy.
func egressWanted(cfg Config, sandboxed bool) bool {
	return len(cfg.Network.Allow) > 0 && !cfg.Policy.Network && sandboxed &&
		runtime.GOOS == "linux" && cfg.Sandbox.Profile != sandbox.ReadOnly
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
// into what they name on this machine, running the tools in env (nil: this
// process's): the entries, and the sources of the preset's.
func ResolveNetworkAllow(ctx context.Context, allow []string, env []string) ([]string, []egress.Source) {
	var out []string
	var sources []egress.Source
	for _, e := range allow {
		if !egress.IsPreset(e) {
			out = append(out, e)
			continue
		}
		if sources == nil {
			sources = egress.Registries(ctx, egress.Command(env))
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
		entries, e.sources = ResolveNetworkAllow(ctx, g.cfg.Network.Allow, nil)
		list, err := egress.ParseAllow(entries)
		if err != nil {
			e.err = err
			return
		}
		e.proxy = &egress.Proxy{Allow: list, Audit: g.auditEgress}
	})
	return e.proxy, e.err
}

// egressSpec is what the session needs for allow-listed egress: the
// proxy's port in it and the handler of its connections.
func (g *Gate) egressSpec() (int, func(context.Context, net.Conn)) {
	if !g.egressOn() {
		return 0, nil
	}
	p, err := g.egressProxy()
	if err != nil {
		return 0, nil // Report says egress is missing; the network stays off
	}
	return g.egressPort(), p.ServeConn
}

// egressEnv points commands at the proxy: the variables most clients read,
// and the settings of the tools that read their own.
func (g *Gate) egressEnv(env []string) []string {
	if !g.egressOn() {
		return env
	}
	port := strconv.Itoa(g.egressPort())
	httpProxy, socks := "http://127.0.0.1:"+port, "socks5h://127.0.0.1:"+port
	noProxy := "localhost,127.0.0.1,::1"
	set := map[string]string{
		"HTTP_PROXY": httpProxy, "HTTPS_PROXY": httpProxy, "ALL_PROXY": socks, "NO_PROXY": noProxy,
		"http_proxy": httpProxy, "https_proxy": httpProxy, "all_proxy": socks, "no_proxy": noProxy,
		// npm reads its own settings before the environment's proxies.
		"npm_config_proxy": httpProxy, "npm_config_https_proxy": httpProxy, "npm_config_noproxy": noProxy,
		"YARN_HTTP_PROXY": httpProxy, "YARN_HTTPS_PROXY": httpProxy,
		"PIP_PROXY":        httpProxy,
		"CARGO_HTTP_PROXY": httpProxy,
		// GOPROXY stays as it is: go honours HTTPS_PROXY.
	}
	out := slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		_, ok := set[k]
		return ok
	})
	for _, k := range sortedKeys(set) {
		out = append(out, k+"="+set[k])
	}
	// git: http.proxy through GIT_CONFIG_COUNT, after the ones already given.
	n := 0
	for _, kv := range out {
		if v, ok := strings.CutPrefix(kv, "GIT_CONFIG_COUNT="); ok {
			n, _ = strconv.Atoi(v)
		}
	}
	out = slices.DeleteFunc(out, func(kv string) bool { return strings.HasPrefix(kv, "GIT_CONFIG_COUNT=") })
	return append(out, fmt.Sprintf("GIT_CONFIG_KEY_%d=http.proxy", n), fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s", n, httpProxy),
		fmt.Sprintf("GIT_CONFIG_COUNT=%d", n+1))
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// egressReport adds the network mode and the allow-list to context.sandbox.
func (g *Gate) egressReport(m map[string]any) {
	mode := g.NetworkMode()
	m["network"] = mode
	if mode != NetworkAllowList {
		return
	}
	if p, err := g.egressProxy(); err == nil {
		m["allow"] = p.Allow.Entries()
	}
}

// auditEgress records one connection through the proxy.
func (g *Gate) auditEgress(ev egress.Event) {
	if !ev.Allowed {
		g.egress.noteRefused(ev)
	}
	if g.auditLog == nil || g.auditLog.off {
		return
	}
	decision := "allow"
	if !ev.Allowed {
		decision = "deny"
	}
	g.auditLog.write(audit.Entry{
		Time: time.Now(), Root: g.root, Action: "egress", Decision: decision, Rule: "network",
		Egress: &audit.Egress{Proto: ev.Proto, Domain: ev.Domain, Port: ev.Port, Reason: ev.Reason, SentBytes: ev.Sent, ReceivedBytes: ev.Received},
	})
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
		return sandboxHint(d, g.cfg.Policy.Network, g.cfg.Sandbox.HostPorts...)
	}
	if d.ExitCode != nil && *d.ExitCode == 0 {
		return ""
	}
	text := d.Stderr + d.Stdout
	refused := g.egress.refusedSince(started)
	switch {
	case len(refused) > 0 && !strings.Contains(text, "is not on the network allow-list"):
		return "The network is allow-listed, and shellgate's proxy refused " + strings.Join(refused, ", ") + " while this command ran: not on the allow-list, or an address of the host or its network. Work with what is allowed, or ask the user to allow the domain (--allow-domain HOST, or [network] allow = [\"HOST\"] in their config)."
	case strings.Contains(text, "is not on the network allow-list"):
		return "The network is allow-listed: commands reach only the listed domains, through shellgate's proxy, which refused the domain named above. Work with what is allowed, or ask the user to allow the domain (--allow-domain HOST, or [network] allow = [\"HOST\"] in their config)."
	case strings.Contains(text, "Network is unreachable") || strings.Contains(text, "Could not resolve host") ||
		strings.Contains(text, "Temporary failure in name resolution") || strings.Contains(text, "getaddrinfo") || strings.Contains(text, "ENOTFOUND"):
		return "The network is allow-listed: there is no DNS and no route out of the sandbox; clients reach the allowed domains only through shellgate's proxy, which HTTPS_PROXY, HTTP_PROXY and ALL_PROXY name. Use a client that honours them (curl, npm, pip, go, cargo, git over HTTPS do)."
	}
	return sandboxHint(d, false, g.cfg.Sandbox.HostPorts...)
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
