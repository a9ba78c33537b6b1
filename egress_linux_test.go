package shellgate_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shellgate/shellgate/internal/lane"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/envelope"
	"github.com/shellgate/shellgate/internal/sandbox"
)

// Allow-listed egress (issue 19) against the registries this machine
// reaches, and the refusals. Traffic goes only to those registries and to
// this machine: a connection to an outside address is tried only once the
// session is seen to have no interface but lo, and only to 192.0.2.1.

// registry is a registry a toolchain on this machine is configured with.
type registry struct{ url, host string }

// reachable checks from the host that the registry answers at all.
func reachable(t testing.TB, r registry, path string) {
	t.Helper()
	tr := &http.Transport{Proxy: http.ProxyFromEnvironment}
	defer tr.CloseIdleConnections() // no goroutine outlives the check
	c := &http.Client{Timeout: 15 * time.Second, Transport: tr}
	resp, err := c.Get(strings.TrimSuffix(r.url, "/") + path)
	if err != nil {
		t.Skipf("the registry %s is not reachable from this machine, so this is not run: %v", r.url, err)
	}
	resp.Body.Close()
}

// npmRegistry is npm's registry (npm config get registry).
func npmRegistry(t testing.TB) registry {
	t.Helper()
	out, err := exec.Command("npm", "config", "get", "registry").Output()
	if err != nil {
		t.Skipf("npm is not installed or does not answer, so this is not run: %v", err)
	}
	u, err := url.Parse(strings.TrimSpace(string(out)))
	if err != nil || u.Hostname() == "" {
		t.Skipf("npm's registry %q is not a URL", out)
	}
	r := registry{u.String(), u.Hostname()}
	reachable(t, r, "/is-number")
	return r
}

// goProxy is the first proxy of go env GOPROXY, and the hosts to allow for
// it: its own, and the checksum database's (go asks the proxy for it first).
func goProxy(t *testing.T) (registry, []string) {
	t.Helper()
	out, err := exec.Command("go", "env", "GOPROXY", "GOSUMDB").Output()
	if err != nil {
		t.Skipf("go env: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	first, _, _ := strings.Cut(strings.FieldsFunc(lines[0], func(r rune) bool { return r == ',' || r == '|' })[0], ",")
	u, err := url.Parse(first)
	if err != nil || u.Hostname() == "" {
		t.Skipf("GOPROXY %q names no proxy", lines[0])
	}
	r := registry{u.String(), u.Hostname()}
	reachable(t, r, "/rsc.io/quote/@v/list")
	hosts := []string{r.host}
	if len(lines) > 1 {
		if f := strings.Fields(lines[1]); len(f) > 0 && f[0] != "off" {
			name, _, _ := strings.Cut(f[0], "+")
			hosts = append(hosts, name)
		}
	}
	return r, hosts
}

func egressGate(t *testing.T, root string, allow ...string) *shellgate.Gate {
	t.Helper()
	return gate(t, shellgate.Config{Root: root, MaxTimeout: 5 * time.Minute, Network: shellgate.NetworkConfig{Allow: allow}})
}

func runFor(t *testing.T, g *shellgate.Gate, command string) envelope.Envelope {
	t.Helper()
	return run(t, g, shellgate.Request{Command: command, Timeout: 4 * time.Minute})
}

// npmInstall installs a small package with a cache of the project's own, so
// that it is fetched.
const npmInstall = "npm install --no-audit --no-fund --no-update-notifier --fetch-retries=0 --cache ./.npm-cache is-number@7.0.0"

func TestEgressNpmInstall(t *testing.T) {
	lane.Live(t)
	requireSandbox(t)
	reg := npmRegistry(t)

	l := newLab(t)
	g := egressGate(t, l.root, reg.host)
	env := runFor(t, g, npmInstall+" && test -f node_modules/is-number/package.json")
	if env.Status != envelope.Success {
		t.Fatalf("npm install with %s allowed: %s\n%s", reg.host, env.Status, env.Text)
	}
	sb, _ := env.Context.Sandbox.(map[string]any)
	if sb["network"] != shellgate.NetworkAllowList || !slices.Contains(sb["allow"].([]string), reg.host) || sb["egress"] == nil {
		t.Errorf("context.sandbox %v: want network allow-list, %s allowed, an egress port", sb, reg.host)
	}

	g = egressGate(t, newLab(t).root, "x.invalid")
	env = runFor(t, g, npmInstall)
	if env.Status == envelope.Success {
		t.Fatalf("npm install with %s not allowed succeeded", reg.host)
	}
	for _, want := range []string{reg.host + " is not on the network allow-list", "--allow-domain " + reg.host} {
		if !strings.Contains(env.Text, want) {
			t.Errorf("npm's failure does not say %q:\n%s", want, env.Text)
		}
	}
}

func TestEgressGoModDownload(t *testing.T) {
	lane.Live(t)
	requireSandbox(t)
	reg, hosts := goProxy(t)
	download := "GOTOOLCHAIN=local GOFLAGS=-modcacherw GOMODCACHE=$PWD/modcache GOPROXY=" + reg.url + " go mod download -x rsc.io/quote@v1.5.2"

	l := newLab(t)
	g := egressGate(t, l.root, hosts...)
	env := runFor(t, g, download+" && test -f modcache/cache/download/rsc.io/quote/@v/v1.5.2.zip")
	if env.Status != envelope.Success {
		t.Fatalf("go mod download with %v allowed: %s\n%s", hosts, env.Status, env.Text)
	}

	g = egressGate(t, newLab(t).root, "x.invalid")
	env = runFor(t, g, download)
	if env.Status == envelope.Success {
		t.Fatalf("go mod download with %s not allowed succeeded", reg.host)
	}
	if want := reg.host + " is not on the network allow-list"; !strings.Contains(env.Text, want) {
		t.Errorf("go's failure does not say %q:\n%s", want, env.Text)
	}
}

// TestEgressRefusals: what the allow-list does not let out. Nothing here
// leaves this machine: the proxy refuses before it dials, and the session
// has no route.
func TestEgressRefusals(t *testing.T) {
	lane.Live(t)
	requireSandbox(t)
	var hits atomic.Int32
	host := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, "hello from the host")
	}))
	defer host.Close()
	port := strconv.Itoa(host.Listener.Addr().(*net.TCPAddr).Port)

	l := newLab(t)
	g := egressGate(t, l.root, "localhost", "x.example")
	// The session must have no interface but lo before anything is sent
	// towards an outside address.
	env := runFor(t, g, "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '")
	if env.Status != envelope.Success || strings.TrimSpace(env.Data.Stdout) != "lo" {
		t.Fatalf("the session's interfaces: %q (%s), want only lo; not going on", env.Data.Stdout, env.Status)
	}
	viaProxy := "curl -sS -v --max-time 20 --noproxy '' -x \"$HTTP_PROXY\" "
	for _, tc := range []struct{ name, command, want string }{
		{"another domain over HTTPS", "curl -sS -v --max-time 20 https://x.invalid/ 2>&1", "< HTTP/1.1 403 shellgate: x.invalid is not on the network allow-list; the user can allow it with --allow-domain x.invalid"},
		{"another domain over HTTP", "curl -sS --max-time 20 http://x.invalid/", "shellgate: x.invalid is not on the network allow-list"},
		{"SOCKS5 to another domain", "curl -sS --max-time 20 -x \"$ALL_PROXY\" https://x.invalid/ 2>&1", "SOCKS5 connection to x.invalid"},
		{"a DNS query", "getent hosts " + "example.com" + " || echo no-dns", "no-dns"},
		{"UDP out", `python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("192.0.2.1", 53))' 2>&1`, "Network is unreachable"},
		{"a raw connection out", "exec 3<>/dev/tcp/192.0.2.1/80", "Network is unreachable"},
		{"an allowed name resolving to loopback", viaProxy + "http://localhost:" + port + "/ 2>&1", "localhost resolves to"},
		{"CONNECT to the host's 127.0.0.1", viaProxy + "-p http://127.0.0.1:" + port + "/ 2>&1", "the address 127.0.0.1 is not on the network allow-list"},
		{"CONNECT to an IP literal", viaProxy + "https://192.0.2.1/ 2>&1", "the address 192.0.2.1 is not on the network allow-list"},
		{"Host differs from the CONNECT target", viaProxy + "--proxy-header 'Host: x.invalid:443' https://x.example/ 2>&1", "the Host header x.invalid differs from the CONNECT target x.example"},
	} {
		env := runFor(t, g, tc.command)
		if !strings.Contains(env.Data.Stdout+env.Data.Stderr, tc.want) {
			t.Errorf("%s: %s, want %q in:\n%s", tc.name, env.Status, tc.want, env.Text)
		}
	}
	// curl says only "CONNECT tunnel failed, response 403": the note names
	// what the proxy refused.
	env = runFor(t, g, "curl -sS --max-time 20 https://x.invalid/")
	if want := "shellgate's proxy refused x.invalid:443 while this command ran"; !strings.Contains(env.Text, want) {
		t.Errorf("the note after a refused CONNECT lacks %q:\n%s", want, env.Text)
	}
	if n := hits.Load(); n > 0 {
		t.Errorf("the host's server got %d requests through the proxy", n)
	}
	// What stays: the session's own servers on localhost (NO_PROXY).
	env = runFor(t, g, `python3 -c 'import http.server, threading, urllib.request
s = http.server.HTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
threading.Thread(target=s.serve_forever, daemon=True).start()
print(urllib.request.urlopen("http://localhost:%d/" % s.server_port).status)'`)
	if strings.TrimSpace(env.Data.Stdout) != "200" {
		t.Errorf("a server of the session on localhost: %s\n%s", env.Status, env.Text)
	}
}

// Host ports still forward with allow-listed egress, and the proxy's port
// moves aside for one that takes it.
func TestEgressWithHostPorts(t *testing.T) {
	lane.Live(t)
	requireSandbox(t)
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "hello from the host")
	}))
	defer web.Close()
	port := web.Listener.Addr().(*net.TCPAddr).Port
	g := gate(t, shellgate.Config{Root: newLab(t).root, Sandbox: shellgate.SandboxConfig{HostPorts: []int{port, 3128}},
		Network: shellgate.NetworkConfig{Allow: []string{"x.example"}}})
	env := run(t, g, shellgate.Request{Command: "curl -sS --max-time 20 http://localhost:" + strconv.Itoa(port) + "/; echo; echo $HTTPS_PROXY"})
	if env.Status != envelope.Success || env.Data.Stdout != "hello from the host\nhttp://127.0.0.1:3129\n" {
		t.Errorf("%s %q\n%s", env.Status, env.Data.Stdout, env.Text)
	}
	if sb, _ := env.Context.Sandbox.(map[string]any); sb["egress"] != "127.0.0.1:3129" {
		t.Errorf("context.sandbox %v", sb)
	}
}

// The network stays off where allow-listed egress cannot be enforced, and
// on means on.
func TestNetworkModes(t *testing.T) {
	root := newLab(t).root
	for _, tc := range []struct {
		cfg  shellgate.Config
		want string
	}{
		{shellgate.Config{Root: root}, shellgate.NetworkOff},
		{shellgate.Config{Root: root, Network: shellgate.NetworkConfig{Allow: []string{"x.example"}}}, shellgate.NetworkAllowList},
		{shellgate.Config{Root: root, Network: shellgate.NetworkConfig{Allow: []string{"x.example"}}, Sandbox: shellgate.SandboxConfig{Mode: "off"}}, shellgate.NetworkOff},
		{shellgate.Config{Root: root, Network: shellgate.NetworkConfig{Allow: []string{"x.example"}}, Sandbox: shellgate.SandboxConfig{Profile: "read-only"}}, shellgate.NetworkOff},
	} {
		tc.cfg.Policy.Network = false
		if got := gate(t, tc.cfg).NetworkMode(); got != tc.want {
			t.Errorf("%+v: %s, want %s", tc.cfg.Network, got, tc.want)
		}
	}
	on := shellgate.Config{Root: root, Network: shellgate.NetworkConfig{Allow: []string{"x.example"}}}
	on.Policy.Network = true
	if got := gate(t, on).NetworkMode(); got != shellgate.NetworkOn {
		t.Errorf("network on with an allow-list: %s", got)
	}
	if _, err := shellgate.New(shellgate.Config{Root: root, Network: shellgate.NetworkConfig{Allow: []string{"https://x.example/"}}}); err == nil {
		t.Error("a URL in the allow-list was taken")
	}
}

// Where an allow-list is configured but not in force, context.sandbox says
// why (on Windows: that nothing confines the network).
func TestNetworkAllowNotEnforced(t *testing.T) {
	lane.Live(t)
	requireSandbox(t)
	ro := shellgate.Config{Root: newLab(t).root, Network: shellgate.NetworkConfig{Allow: []string{"x.example"}}, Sandbox: shellgate.SandboxConfig{Profile: "read-only"}}
	if sb, ok := run(t, gate(t, ro), shellgate.Request{Command: "true"}).Context.Sandbox.(map[string]any); !ok ||
		sb["network"] != shellgate.NetworkOff || !strings.Contains(fmt.Sprint(sb["allow_not_enforced"]), "read-only profile has no network") {
		t.Errorf("read-only with an allow-list: context.sandbox %v", sb)
	}
}

// BenchmarkEgressNpmInstall: npm install of the same package, from an empty
// cache each time, through the proxy (allow-listed egress) and with the
// network fully on, alternating; the median of their ratios is reported as
// proxy/direct. Target: ≤ 1.2.
func BenchmarkEgressNpmInstall(b *testing.B) {
	requireSandboxB(b)
	reg := npmRegistry(b)
	root := b.TempDir()
	newGate := func(cfg shellgate.Config) *shellgate.Gate {
		cfg.Root, cfg.SpillDir, cfg.MaxTimeout = root, b.TempDir(), 5*time.Minute
		g, err := shellgate.New(cfg)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { g.Close() })
		return g
	}
	proxied := newGate(shellgate.Config{Network: shellgate.NetworkConfig{Allow: []string{reg.host}}})
	on := shellgate.Config{}
	on.Policy.Network = true
	direct := newGate(on)
	i := 0
	install := func(g *shellgate.Gate) time.Duration {
		i++
		dir := "p" + strconv.Itoa(i)
		start := time.Now()
		env := g.Run(context.Background(), shellgate.Request{Command: "mkdir " + dir + " && cd " + dir + " && " + npmInstall, Timeout: 4 * time.Minute})
		d := time.Since(start)
		if env.Status != envelope.Success {
			b.Fatalf("%s", env.Text)
		}
		return d
	}
	install(proxied) // each session started, and npm read from disk once
	install(direct)
	var ratios, viaProxy, onNet []float64
	for b.Loop() {
		p, d := install(proxied), install(direct)
		ratios = append(ratios, float64(p)/float64(d))
		viaProxy, onNet = append(viaProxy, float64(p.Milliseconds())), append(onNet, float64(d.Milliseconds()))
	}
	b.ReportMetric(median(ratios), "proxy/direct")
	b.ReportMetric(median(viaProxy), "ms-proxy")
	b.ReportMetric(median(onNet), "ms-direct")
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	sort.Float64s(s)
	return s[len(s)/2]
}

func requireSandboxB(b *testing.B) {
	b.Helper()
	s, err := sandbox.Start(sandbox.Spec{})
	if err != nil {
		b.Skipf("no sandbox on this machine: %v", err)
	}
	s.Close()
}
