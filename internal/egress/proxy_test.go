package egress

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeNet resolves the names the tests use to addresses that look public
// (TEST-NET-3) or private, and dials those only, to servers on 127.0.0.1:
// no test connects anywhere else.
type fakeNet struct {
	names map[string][]netip.Addr // name → what it "resolves" to
	route map[string]string       // "ip:port" dialled → the real 127.0.0.1 address

	mu     sync.Mutex
	dialed []string
}

func (f *fakeNet) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := f.names[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func (f *fakeNet) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	f.mu.Lock()
	f.dialed = append(f.dialed, addr)
	real, ok := f.route[addr]
	f.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("test network: %s is not routed", addr)
	}
	var d net.Dialer
	return d.DialContext(ctx, network, real)
}

func (f *fakeNet) dials() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.dialed...)
}

// env is a proxy on 127.0.0.1 in front of an HTTPS and an HTTP origin that
// the fake network calls example.com (203.0.113.7:443 and :80).
type env struct {
	proxy   *Proxy
	addr    string // the proxy's
	net     *fakeNet
	tlsSrv  *httptest.Server
	httpSrv *httptest.Server

	mu       sync.Mutex
	changed  *sync.Cond // signalled on each event
	events   []Event
	upstream *url.URL // the host's proxy, if any
}

func newEnv(t *testing.T, allow ...string) *env {
	t.Helper()
	return newEnvWith(t, nil, allow...)
}

// newEnvWith is newEnv whose proxy set changes before it serves.
func newEnvWith(t *testing.T, set func(*Proxy), allow ...string) *env {
	t.Helper()
	a, err := ParseAllow(allow)
	if err != nil {
		t.Fatal(err)
	}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "origin: %s %s host=%s body=%q", r.Method, r.URL.Path, r.Host, body)
	})
	e := &env{tlsSrv: httptest.NewTLSServer(handler), httpSrv: httptest.NewServer(handler)}
	e.changed = sync.NewCond(&e.mu)
	t.Cleanup(e.tlsSrv.Close)
	t.Cleanup(e.httpSrv.Close)
	pub := netip.MustParseAddr("203.0.113.7")
	e.net = &fakeNet{
		names: map[string][]netip.Addr{
			"example.com":     {pub},
			"www.example.com": {pub},
			"lan.example.com": {netip.MustParseAddr("192.168.1.20")},
			"lo.example.com":  {netip.MustParseAddr("127.0.0.1")},
			"mixed.example":   {pub, netip.MustParseAddr("10.0.0.9")},
		},
		route: map[string]string{
			"203.0.113.7:443":  e.tlsSrv.Listener.Addr().String(),
			"203.0.113.7:80":   e.httpSrv.Listener.Addr().String(),
			"192.168.1.20:443": e.tlsSrv.Listener.Addr().String(),
		},
	}
	e.proxy = &Proxy{
		Allow:    a,
		Resolver: e.net,
		Dial:     e.net.Dial,
		Upstream: func(string, string) (*url.URL, error) {
			e.mu.Lock()
			defer e.mu.Unlock()
			return e.upstream, nil
		},
		Audit: func(ev Event) {
			e.mu.Lock()
			e.events = append(e.events, ev)
			e.changed.Broadcast()
			e.mu.Unlock()
		},
	}
	if set != nil {
		set(e.proxy)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	e.addr = ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- e.proxy.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return e
}

// client is an HTTP client that uses the proxy (scheme "http" or "socks5")
// and trusts the TLS origin, whose certificate names example.com.
func (e *env) client(t *testing.T, scheme string) *http.Client {
	pool := e.tlsSrv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	tr := &http.Transport{
		Proxy:           http.ProxyURL(&url.URL{Scheme: scheme, Host: e.addr}),
		TLSClientConfig: &tls.Config{RootCAs: pool},
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

func (e *env) audited() []Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]Event(nil), e.events...)
}

// waitEvents waits until the events reported so far satisfy done (the
// proxy reports a connection once both of its sides have closed).
func (e *env) waitEvents(done func([]Event) bool) []Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	for !done(e.events) {
		e.changed.Wait()
	}
	return append([]Event(nil), e.events...)
}

func get(t *testing.T, c *http.Client, u string) (string, error) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return "", fmt.Errorf("%s: %s", resp.Status, b)
	}
	return string(b), err
}

func TestAllowedThroughEveryFrontEnd(t *testing.T) {
	e := newEnv(t, "example.com")
	for _, tc := range []struct{ scheme, url, want string }{
		{"http", "https://example.com/a", "origin: GET /a host=example.com"},
		{"http", "http://example.com/b", "origin: GET /b host=example.com"},
		{"socks5", "https://EXAMPLE.com./c", "origin: GET /c host="},
		{"socks5", "http://example.com/d", "origin: GET /d host=example.com"},
	} {
		got, err := get(t, e.client(t, tc.scheme), tc.url)
		if err != nil || !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s via %s: %q, %v; want %q", tc.url, tc.scheme, got, err, tc.want)
		}
	}
	// One event per connection; the close of the client's idle connections
	// ends them, and Serve's return waits for them (the cleanup checks).
}

func TestAuditCountsBytes(t *testing.T) {
	e := newEnv(t, "example.com")
	c := e.client(t, "http")
	resp, err := c.Post("http://example.com/up", "text/plain", strings.NewReader("twelve bytes"))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	c.CloseIdleConnections()
	ev := e.waitEvents(func(ev []Event) bool { return len(ev) > 0 })
	if len(ev) != 1 {
		t.Fatalf("events: %+v", ev)
	}
	got := ev[0]
	if got.Proto != "http" || got.Domain != "example.com" || got.Port != 80 || !got.Allowed || got.Reason != "" {
		t.Errorf("event %+v", got)
	}
	if got.Sent < int64(len("twelve bytes")) || got.Received < int64(len(`origin: POST /up host=example.com body="twelve bytes"`)) {
		t.Errorf("bytes sent %d, received %d", got.Sent, got.Received)
	}
}

func TestRefusedName(t *testing.T) {
	e := newEnv(t, "example.com", "*.pkg.example")
	for _, tc := range []struct{ scheme, url, domain string }{
		{"http", "https://x.invalid/", "x.invalid"},
		{"http", "http://x.invalid/", "x.invalid"},
		{"http", "https://www.example.com/", "www.example.com"}, // exact means exact
		{"http", "https://pkg.example/", "pkg.example"},         // *. is the subdomains
		{"socks5", "https://x.invalid/", "x.invalid"},
	} {
		_, err := get(t, e.client(t, tc.scheme), tc.url)
		if err == nil {
			t.Errorf("%s via %s: allowed", tc.url, tc.scheme)
			continue
		}
		if tc.scheme == "http" && (!strings.Contains(err.Error(), tc.domain+" is not on the network allow-list") || !strings.Contains(err.Error(), "--allow-domain "+tc.domain)) {
			t.Errorf("%s: the error does not name the domain and how to allow it: %v", tc.url, err)
		}
	}
	if d := e.net.dials(); len(d) > 0 {
		t.Errorf("dialed %v for refused names", d)
	}
	ev := e.audited()
	if len(ev) != 5 {
		t.Fatalf("want 5 events, got %+v", ev)
	}
	for _, x := range ev {
		if x.Allowed || x.Reason == "" || x.Sent != 0 || x.Received != 0 {
			t.Errorf("event %+v", x)
		}
	}
}

// raw sends a request to the proxy and returns the status line and the body
// of its answer.
func raw(t *testing.T, addr, request string) (status, body string) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, request); err != nil {
		t.Fatal(err)
	}
	method, _, _ := strings.Cut(request, " ")
	resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: method})
	if err != nil {
		t.Fatalf("%q: %v", request, err)
	}
	if method == http.MethodConnect && resp.StatusCode == http.StatusOK {
		return resp.Status, "" // a tunnel: what follows is the remote's
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.Status, string(b)
}

func TestRefusedAddresses(t *testing.T) {
	e := newEnv(t, "example.com", "lan.example.com", "lo.example.com", "mixed.example")
	// The proxy's own listener is a real address on this host.
	_, port, _ := net.SplitHostPort(e.addr)
	for _, tc := range []struct{ name, req, want string }{
		{"name resolving to a private address", "CONNECT lan.example.com:443 HTTP/1.1\r\nHost: lan.example.com:443\r\n\r\n", "lan.example.com resolves to 192.168.1.20"},
		{"name resolving to loopback", "CONNECT lo.example.com:" + port + " HTTP/1.1\r\n\r\n", "lo.example.com resolves to 127.0.0.1"},
		{"one private address among public ones", "CONNECT mixed.example:443 HTTP/1.1\r\n\r\n", "mixed.example resolves to 10.0.0.9"},
		{"the host's loopback", "CONNECT 127.0.0.1:" + port + " HTTP/1.1\r\n\r\n", "the address 127.0.0.1 is not on the network allow-list"},
		{"an IP literal", "CONNECT 203.0.113.7:443 HTTP/1.1\r\n\r\n", "the address 203.0.113.7 is not on the network allow-list"},
		{"an IPv6 literal", "CONNECT [::1]:" + port + " HTTP/1.1\r\n\r\n", "the address ::1 is not on the network allow-list"},
		{"a plain request to an IP literal", "GET http://127.0.0.1:" + port + "/ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", "the address 127.0.0.1 is not"},
		{"Host differs from the CONNECT target", "CONNECT example.com:443 HTTP/1.1\r\nHost: x.invalid:443\r\n\r\n", "the Host header x.invalid differs from the CONNECT target example.com"},
		{"Host differs from the URL", "GET http://example.com/ HTTP/1.1\r\nHost: x.invalid\r\n\r\n", "the Host header x.invalid differs from the URL's host example.com"},
		{"origin-form request", "GET / HTTP/1.1\r\nHost: example.com\r\n\r\n", "this is a proxy"},
	} {
		status, body := raw(t, e.addr, tc.req)
		if !strings.Contains(body, tc.want) || !strings.Contains(status, tc.want) {
			t.Errorf("%s: %s / %q, want %q", tc.name, status, body, tc.want)
		}
		if strings.HasPrefix(status, "200") {
			t.Errorf("%s: allowed", tc.name)
		}
	}
	if d := e.net.dials(); len(d) > 0 {
		t.Errorf("dialed %v", d)
	}
}

func TestAllowedByAddress(t *testing.T) {
	e := newEnv(t, "203.0.113.7", "lan.example.com", "192.168.1.0/24")
	status, _ := raw(t, e.addr, "CONNECT 203.0.113.7:443 HTTP/1.1\r\n\r\n")
	if !strings.HasPrefix(status, "200") {
		t.Errorf("CONNECT to an allowed address: %s", status)
	}
	status, _ = raw(t, e.addr, "CONNECT lan.example.com:443 HTTP/1.1\r\n\r\n")
	if !strings.HasPrefix(status, "200") {
		t.Errorf("CONNECT to a name whose private address is allowed: %s", status)
	}
	if _, err := get(t, e.client(t, "http"), "https://example.com/"); err == nil {
		t.Error("an allowed address allows the names resolving to it")
	}
}

func TestTunnelChecksWhatFollows(t *testing.T) {
	e := newEnv(t, "example.com")
	// TLS whose server name is another host than the CONNECT target.
	c, err := net.Dial("tcp", e.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n")
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %v %v", resp, err)
	}
	tc := tls.Client(&readerConn{c, br}, &tls.Config{ServerName: "x.invalid", InsecureSkipVerify: true})
	if err := tc.Handshake(); err == nil {
		t.Error("TLS to another server name went through")
	}
	c.Close()
	// Plain HTTP in a tunnel: the request must be for the target.
	for _, tc := range []struct{ host, want string }{
		{"example.com", "200 OK"},
		{"x.invalid", "403 shellgate: the request's Host x.invalid differs from the CONNECT target example.com"},
	} {
		c2, err := net.Dial("tcp", e.addr)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(c2, "CONNECT example.com:80 HTTP/1.1\r\n\r\nGET /in HTTP/1.1\r\nHost: "+tc.host+"\r\n\r\n")
		br2 := bufio.NewReader(c2)
		if resp, err := http.ReadResponse(br2, &http.Request{Method: "CONNECT"}); err != nil || resp.StatusCode != 200 {
			t.Fatalf("CONNECT: %v %v", resp, err)
		}
		resp, err := http.ReadResponse(br2, &http.Request{Method: "GET"})
		if err != nil {
			t.Fatalf("Host %s: %v", tc.host, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		c2.Close()
		if resp.Status != tc.want {
			t.Errorf("Host %s in the tunnel: %s %q, want %s", tc.host, resp.Status, b, tc.want)
		}
	}
	refusals := func(evs []Event) (r []Event) {
		for _, ev := range evs {
			if !ev.Allowed {
				r = append(r, ev)
			}
		}
		return r
	}
	refused := refusals(e.waitEvents(func(evs []Event) bool { return len(refusals(evs)) >= 2 }))
	for _, ev := range refused {
		if !strings.Contains(ev.Reason, "x.invalid") || ev.Domain != "example.com" {
			t.Errorf("event %+v", ev)
		}
	}
}

type readerConn struct {
	net.Conn
	r io.Reader
}

func (c *readerConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// socks does a SOCKS5 handshake and request by hand; it returns the reply code.
func socks(t *testing.T, addr string, cmd byte, host string, port int) byte {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	req := []byte{5, 1, 0, 5, cmd, 0, 3, byte(len(host))}
	req = append(append(req, host...), byte(port>>8), byte(port))
	if _, err := c.Write(req); err != nil {
		t.Fatal(err)
	}
	var b [12]byte
	if _, err := io.ReadFull(c, b[:12]); err != nil {
		t.Fatalf("SOCKS5 %d %s: %v", cmd, host, err)
	}
	if b[0] != 5 || b[1] != 0 || b[2] != 5 {
		t.Fatalf("SOCKS5 answer % x", b)
	}
	return b[3]
}

func TestSOCKS(t *testing.T) {
	e := newEnv(t, "example.com", "lan.example.com")
	for _, tc := range []struct {
		name string
		cmd  byte
		host string
		want byte
	}{
		{"CONNECT", 1, "example.com", socksOK},
		{"BIND", 2, "example.com", socksNoCommand},
		{"UDP ASSOCIATE", 3, "example.com", socksNoCommand},
		{"a name not allowed", 1, "x.invalid", socksNotAllowed},
		{"an allowed name resolving to a private address", 1, "lan.example.com", socksNotAllowed},
	} {
		if got := socks(t, e.addr, tc.cmd, tc.host, 443); got != tc.want {
			t.Errorf("%s: reply %d, want %d", tc.name, got, tc.want)
		}
	}
	// Authentication methods only: nothing acceptable.
	c, err := net.Dial("tcp", e.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte{5, 1, 2})
	var b [2]byte
	if _, err := io.ReadFull(c, b[:]); err != nil || b != [2]byte{5, 0xff} {
		t.Errorf("username/password only: % x %v", b, err)
	}
}

// Plain HTTP bodies, by length and chunked, go through whole; a client that
// keeps its connection gets the next request through on a new one.
func TestPlainBodies(t *testing.T) {
	e := newEnv(t, "example.com")
	c := e.client(t, "http")
	for i, body := range []io.Reader{
		strings.NewReader("by length"),
		io.MultiReader(strings.NewReader("chunked, "), strings.NewReader("in two")), // no length: chunked
	} {
		resp, err := c.Post("http://example.com/p", "text/plain", body)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		want := map[int]string{0: `body="by length"`, 1: `body="chunked, in two"`}[i]
		if !strings.HasSuffix(string(b), want) {
			t.Errorf("%d: %q, want %s", i, b, want)
		}
	}
}

func TestUpstreamFromEnvironment(t *testing.T) {
	env := map[string]string{"HTTPS_PROXY": "http://corp:3128", "http_proxy": "corp:8080", "NO_PROXY": ".internal.example, 10.0.0.0/8,db:5432,*.lan"}
	getenv := func(k string) string { return env[k] }
	for _, tc := range []struct{ scheme, hostport, want string }{
		{"https", "registry.npmjs.org:443", "http://corp:3128"},
		{"http", "deb.debian.org:80", "http://corp:8080"},
		{"https", "a.internal.example:443", ""},
		{"https", "internal.example:443", ""},
		{"https", "10.1.2.3:443", ""},
		{"https", "11.1.2.3:443", "http://corp:3128"},
		{"https", "db:5432", ""},
		{"https", "db:5433", "http://corp:3128"},
		{"https", "x.lan:443", ""},
		{"https", "localhost:443", ""},
		{"https", "[::1]:443", ""},
	} {
		u, err := proxyFor(getenv, tc.scheme, tc.hostport)
		got := ""
		if u != nil {
			got = u.String()
		}
		if err != nil || got != tc.want {
			t.Errorf("%s %s: %q %v, want %q", tc.scheme, tc.hostport, got, err, tc.want)
		}
	}
	env = map[string]string{}
	if u, err := proxyFor(getenv, "https", "x.example:443"); u != nil || err != nil {
		t.Errorf("no proxy set: %v %v", u, err)
	}
}

func TestUpstreamProxy(t *testing.T) {
	e := newEnv(t, "example.com")
	// The host's proxy: it accepts a CONNECT and relays to the TLS origin,
	// whatever was asked, and remembers what was.
	up, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	asked := make(chan string, 1)
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Add(1)
	go func() {
		defer wg.Done()
		c, err := up.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		br := bufio.NewReader(c)
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		asked <- req.Method + " " + req.Host + " " + req.Header.Get("Proxy-Authorization")
		o, err := net.Dial("tcp", e.tlsSrv.Listener.Addr().String())
		if err != nil {
			return
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\n\r\n")
		relay(c, br, o)
	}()
	e.net.mu.Lock()
	e.net.route[up.Addr().String()] = up.Addr().String()
	e.net.mu.Unlock()
	e.mu.Lock()
	e.upstream = &url.URL{Scheme: "http", Host: up.Addr().String(), User: url.UserPassword("u", "p")}
	e.mu.Unlock()
	c := e.client(t, "http")
	if got, err := get(t, c, "https://example.com/up"); err != nil || !strings.HasPrefix(got, "origin: GET /up") {
		t.Errorf("through the host's proxy: %q %v", got, err)
	}
	c.CloseIdleConnections()
	if got := <-asked; got != "CONNECT example.com:443 Basic dTpw" {
		t.Errorf("the host's proxy was asked %q", got)
	}
	// The allow-list still applies.
	if _, err := get(t, c, "https://x.invalid/"); err == nil || !strings.Contains(err.Error(), "x.invalid is not on the network allow-list") {
		t.Errorf("x.invalid through the host's proxy: %v", err)
	}
}

func TestServeEndsConnections(t *testing.T) {
	a, _ := ParseAllow([]string{"example.com"})
	p := &Proxy{Allow: a, Upstream: func(string, string) (*url.URL, error) { return nil, nil }}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- p.Serve(ctx, ln) }()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "CONNECT exa") // half a request: the proxy waits for the rest
	cancel()
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Errorf("the client's connection after Serve returned: %v", err)
	}
}

// An allowed name that resolves to an address of this host's own interfaces
// reaches whatever listens on all of them (a dev database on 0.0.0.0), even
// when the address is in no private range: a public IPv4 address on eth0, a
// home machine's global IPv6 address. Each of this host's addresses is
// refused as such, and routed here to an origin that would answer.
func TestRefusedHostAddresses(t *testing.T) {
	ifas, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	var own []netip.Addr
	for _, ifa := range ifas {
		if p, err := netip.ParsePrefix(ifa.String()); err == nil && !p.Addr().IsLinkLocalUnicast() {
			own = append(own, p.Addr())
		}
	}
	nonLocal := 0
	e := newEnv(t, "*.host.example")
	for i, a := range own {
		if !Local(a) {
			nonLocal++
		}
		name := fmt.Sprintf("a%d.host.example", i)
		e.net.mu.Lock()
		e.net.names[name] = []netip.Addr{a}
		e.net.route[netip.AddrPortFrom(a, 443).String()] = e.tlsSrv.Listener.Addr().String()
		e.net.mu.Unlock()
		for _, tc := range []struct{ proto, req string }{
			{"CONNECT", "CONNECT " + name + ":443 HTTP/1.1\r\n\r\n"},
			{"GET", "GET http://" + name + ":443/ HTTP/1.1\r\n\r\n"},
		} {
			status, body := raw(t, e.addr, tc.req)
			if !strings.HasPrefix(status, "403") || !strings.Contains(body, name+" resolves to "+a.String()) {
				t.Errorf("%s %s resolving to this host's %s: %s %q", tc.proto, name, a, status, body)
			}
		}
		if got := socks(t, e.addr, 1, name, 443); got != socksNotAllowed {
			t.Errorf("SOCKS5 %s resolving to this host's %s: reply %d", name, a, got)
		}
	}
	if nonLocal == 0 {
		t.Logf("every address of this host is in a range refused anyway (%v): the check of the host's own is not exercised", own)
	}
	// Allowed by address, it is let through: the user named it.
	if len(own) > 0 {
		e := newEnv(t, "*.host.example", own[0].String())
		e.net.names["a.host.example"] = own[:1]
		e.net.route[netip.AddrPortFrom(own[0], 443).String()] = e.tlsSrv.Listener.Addr().String()
		if status, _ := raw(t, e.addr, "CONNECT a.host.example:443 HTTP/1.1\r\n\r\n"); !strings.HasPrefix(status, "200") {
			t.Errorf("this host's %s, allowed by address: %s", own[0], status)
		}
	}
}

// The same, where this host's addresses are global ones (a public IPv4
// address on eth0, a home LAN's IPv6 /64), whatever this machine has: the
// host's own address is refused, and so is every other address of the
// network it is on (the printer, the NAS, the router of a home LAN, whose
// IPv6 addresses are as global as the host's), which no private range
// names; an address beyond it goes through.
func TestRefusedHostNetworks(t *testing.T) {
	saved := interfaceAddrs
	t.Cleanup(func() { interfaceAddrs = saved })
	interfaceAddrs = func() ([]net.Addr, error) {
		var out []net.Addr
		for _, s := range []string{"127.0.0.1/8", "93.184.216.34/24", "2a00:1450:4001:81a::5/64", "0.0.0.0/0"} {
			ip, n, err := net.ParseCIDR(s)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, &net.IPNet{IP: ip, Mask: n.Mask})
		}
		return out, nil
	}
	e := newEnv(t, "*.host.example")
	for _, tc := range []struct {
		addr    string
		refused bool
	}{
		{"93.184.216.34", true},          // the host's own
		{"93.184.216.50", true},          // its network's
		{"2a00:1450:4001:81a::5", true},  // the host's own
		{"2a00:1450:4001:81a::99", true}, // its LAN's
		{"93.184.217.1", false},          // beyond them
		{"2a00:1450:4001:81b::1", false}, // beyond them
	} {
		a := netip.MustParseAddr(tc.addr)
		name := "n" + strings.NewReplacer(".", "-", ":", "-").Replace(tc.addr) + ".host.example"
		e.net.mu.Lock()
		e.net.names[name] = []netip.Addr{a}
		e.net.route[netip.AddrPortFrom(a, 443).String()] = e.tlsSrv.Listener.Addr().String()
		e.net.mu.Unlock()
		status, body := raw(t, e.addr, "CONNECT "+name+":443 HTTP/1.1\r\n\r\n")
		if refused := strings.HasPrefix(status, "403"); refused != tc.refused || refused && !strings.Contains(body, name+" resolves to "+a.String()) {
			t.Errorf("%s resolving to %s: %s %q, want refused %v", name, a, status, body, tc.refused)
		}
	}
}

// A plain request through the host's proxy names its origin as the proxy
// checked it: the upstream parses the URL itself, and a URL that parses to
// one host here and another there (userinfo, a fragment before an '@', as
// lenient parsers read "http://allowed#@evil/") would take the request where
// the allow-list does not reach.
func TestUpstreamPlainTarget(t *testing.T) {
	e := newEnv(t, "example.com")
	up, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	asked := make(chan string, 8)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer up.Close() // before the wait: it ends the accepting
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := up.Accept()
			if err != nil {
				return
			}
			line, _ := bufio.NewReader(c).ReadString('\n')
			asked <- strings.TrimSpace(line)
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
			c.Close()
		}
	}()
	e.net.mu.Lock()
	e.net.route[up.Addr().String()] = up.Addr().String()
	e.net.mu.Unlock()
	e.mu.Lock()
	e.upstream = &url.URL{Scheme: "http", Host: up.Addr().String()}
	e.mu.Unlock()
	for _, tc := range []struct{ url, want string }{
		{"http://example.com/p?q=1", "GET http://example.com/p?q=1 HTTP/1.1"},
		{"http://example.com#@x.invalid/", "GET http://example.com/ HTTP/1.1"},
		{"http://u:p@example.com/a", "GET http://example.com/a HTTP/1.1"},
		{"http://EXAMPLE.com.:8080/a", "GET http://example.com:8080/a HTTP/1.1"},
	} {
		status, _ := raw(t, e.addr, "GET "+tc.url+" HTTP/1.1\r\n\r\n")
		if !strings.HasPrefix(status, "200") {
			t.Errorf("%s: %s", tc.url, status)
			continue
		}
		if got := <-asked; got != tc.want {
			t.Errorf("%s: the host's proxy was asked %q, want %q", tc.url, got, tc.want)
		}
	}
}

// A TLS ClientHello is checked however the client splits it into records:
// one whose server name is another host than the CONNECT target, split in
// two records (which servers reassemble), does not get past the check that
// the same hello in one record meets.
func TestTunnelFragmentedClientHello(t *testing.T) {
	e := newEnv(t, "example.com")
	hello := clientHello(t, "x.invalid")
	body := hello[5:]
	at := bytes.Index(body, []byte("x.invalid"))
	split := func(parts ...[]byte) []byte {
		var out []byte
		for _, p := range parts {
			out = append(out, 0x16, hello[1], hello[2], byte(len(p)>>8), byte(len(p)))
			out = append(out, p...)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		recs []byte
	}{
		{"one record", hello},
		{"split after the type", split(body[:1], body[1:])},
		{"split before the extensions", split(body[:40], body[40:])},
		{"split in the server name", split(body[:at+3], body[at+3:])},
	} {
		c, err := net.Dial("tcp", e.addr)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(c, "CONNECT example.com:443 HTTP/1.1\r\n\r\n")
		br := bufio.NewReader(c)
		if resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect}); err != nil || resp.StatusCode != 200 {
			t.Fatalf("CONNECT: %v %v", resp, err)
		}
		c.Write(tc.recs)
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		b, err := br.ReadByte()
		c.Close()
		if err == nil {
			t.Errorf("%s: a ClientHello for x.invalid in a tunnel to example.com got an answer from the origin (%#x)", tc.name, b)
		}
	}
}

// clientHello is the first TLS record a client for server name sends.
func clientHello(t *testing.T, name string) []byte {
	t.Helper()
	a, b := net.Pipe()
	defer a.Close()
	go tls.Client(a, &tls.Config{ServerName: name, InsecureSkipVerify: true}).Handshake()
	hdr := make([]byte, 5)
	if _, err := io.ReadFull(b, hdr); err != nil {
		t.Fatal(err)
	}
	rec := make([]byte, int(hdr[3])<<8|int(hdr[4]))
	if _, err := io.ReadFull(b, rec); err != nil {
		t.Fatal(err)
	}
	b.Close()
	return append(hdr, rec...)
}

// Plain HTTP in a tunnel is checked however it starts: servers ignore empty
// lines before a request line (RFC 9112, section 2.2; nginx skips any
// number), so a request for another host behind "\r\n" must meet the same
// check as one without. A protocol that is not HTTP still goes through.
func TestTunnelHTTPAfterEmptyLines(t *testing.T) {
	e := newEnv(t, "example.com")
	// The origin reads as nginx does: empty lines skipped, then a request
	// line and its Host, which it echoes; anything else is echoed as it came.
	origin, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	defer origin.Close()
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := origin.Accept()
			if err != nil {
				return
			}
			br := bufio.NewReader(c)
			line := ""
			for line == "" {
				if line, err = br.ReadString('\n'); err != nil {
					break
				}
				line = strings.TrimRight(line, "\r\n")
			}
			host := ""
			for l := line; err == nil && l != "" && strings.HasSuffix(line, "HTTP/1.1"); {
				l, err = br.ReadString('\n')
				l = strings.TrimRight(l, "\r\n")
				if k, v, ok := strings.Cut(l, ":"); ok && strings.EqualFold(k, "Host") {
					host = strings.TrimSpace(v)
				}
			}
			if strings.HasSuffix(line, "HTTP/1.1") {
				fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\nhost=%s", len("host=")+len(host), host)
			} else {
				io.WriteString(c, "echo "+line)
			}
			c.Close()
		}
	}()
	e.net.mu.Lock()
	e.net.route["203.0.113.7:8080"] = origin.Addr().String()
	e.net.mu.Unlock()
	for _, tc := range []struct{ name, send, want string }{
		{"a request for the target", "GET / HTTP/1.1\r\nHost: example.com\r\n\r\n", "host=example.com"},
		{"a request for another host", "GET / HTTP/1.1\r\nHost: x.invalid\r\n\r\n", "403 shellgate: the request's Host x.invalid differs"},
		{"after an empty line", "\r\nGET / HTTP/1.1\r\nHost: x.invalid\r\n\r\n", "403 shellgate: the request's Host x.invalid differs"},
		{"after bare line feeds", "\n\n\nGET / HTTP/1.1\r\nHost: x.invalid\r\n\r\n", "403 shellgate: the request's Host x.invalid differs"},
		{"after many empty lines", strings.Repeat("\r\n", 5000) + "GET / HTTP/1.1\r\nHost: x.invalid\r\n\r\n", "403 shellgate: the request's Host x.invalid differs"},
		{"after more empty lines than the proxy reads", strings.Repeat("\r\n", 40000) + "GET / HTTP/1.1\r\nHost: x.invalid\r\n\r\n", ""},
		{"the target after an empty line", "\r\nGET / HTTP/1.1\r\nHost: example.com\r\n\r\n", "host=example.com"},
		{"not HTTP", "PING\r\n", "echo PING"},
		// Methods are tokens of any length and case (RFC 9110, section 9.1;
		// Go's server takes "get" and "PROPFIND"): each is a request whose
		// Host is checked, not bytes relayed as they came.
		{"a method of eight letters", "PROPFIND / HTTP/1.1\r\nHost: x.invalid\r\n\r\n", "403 shellgate: the request's Host x.invalid differs"},
		{"a lower-case method", "get / HTTP/1.1\r\nHost: x.invalid\r\n\r\n", "403 shellgate: the request's Host x.invalid differs"},
		{"a method with a hyphen", "M-SEARCH / HTTP/1.1\r\nHost: x.invalid\r\n\r\n", "403 shellgate: the request's Host x.invalid differs"},
		{"a long method", "VERSION-CONTROL / HTTP/1.1\r\nHost: x.invalid\r\n\r\n", "403 shellgate: the request's Host x.invalid differs"},
		{"a lower-case line of another protocol", "get key\r\n", "echo get key"},
	} {
		c, err := net.Dial("tcp", e.addr)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(c, "CONNECT example.com:8080 HTTP/1.1\r\n\r\n")
		br := bufio.NewReader(c)
		if resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect}); err != nil || resp.StatusCode != 200 {
			t.Fatalf("CONNECT: %v %v", resp, err)
		}
		io.WriteString(c, tc.send)
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		got, _ := io.ReadAll(br)
		c.Close()
		if !strings.Contains(string(got), tc.want) || strings.Contains(string(got), "host=x.invalid") {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

// The body the proxy forwards is the body the origin reads: a request
// whose length is told two ways (Transfer-Encoding and Content-Length, or
// two Content-Lengths) is refused, since an origin that reads the other one
// takes the rest for a second request, unchecked (request smuggling; the
// proxy's Connection: close stops only origins that honour it).
func TestPlainBodySmuggling(t *testing.T) {
	e := newEnv(t, "example.com")
	// The origin reads requests one after another, each body by its last
	// Content-Length, and echoes each request's Host; it ignores
	// Connection: close.
	origin, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	defer origin.Close()
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := origin.Accept()
			if err != nil {
				return
			}
			// It keeps the connection for more requests, a while.
			c.SetDeadline(time.Now().Add(2 * time.Second))
			br := bufio.NewReader(c)
			for {
				host, length := "", 0
				l, err := br.ReadString('\n')
				for err == nil && strings.TrimSpace(l) != "" {
					if l, err = br.ReadString('\n'); err != nil {
						break
					}
					if k, v, ok := strings.Cut(l, ":"); ok {
						switch strings.ToLower(k) {
						case "host":
							host = strings.TrimSpace(v)
						case "content-length":
							fmt.Sscan(strings.TrimSpace(v), &length)
						}
					}
				}
				if err != nil {
					break
				}
				io.CopyN(io.Discard, br, int64(length))
				fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\nhost=%s", len("host=")+len(host), host)
			}
			c.Close()
		}
	}()
	e.net.mu.Lock()
	e.net.route["203.0.113.7:8080"] = origin.Addr().String()
	e.net.mu.Unlock()
	smuggled := "GET / HTTP/1.1\r\nHost: x.invalid\r\n\r\n"
	for _, tc := range []struct{ name, head, body string }{
		{"chunked and a length", "Transfer-Encoding: chunked\r\nContent-Length: 4\r\n", fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(smuggled), smuggled)},
		{"two lengths", fmt.Sprintf("Content-Length: %d\r\nContent-Length: 0\r\n", len(smuggled)), smuggled},
		{"two lengths, the longer last", fmt.Sprintf("Content-Length: 0\r\nContent-Length: %d\r\n", len(smuggled)), smuggled},
		{"a signed length", "Content-Length: +0\r\n", smuggled},
		// A field name that is no token (RFC 9112, section 5.1: a space
		// before the colon is a 400), which an origin that ignores such
		// lines (as this one does) reads as no length at all.
		{"a length with a space before its colon", fmt.Sprintf("Content-Length : %d\r\n", len(smuggled)), smuggled},
		{"a length with a tab before its colon", fmt.Sprintf("Content-Length\t: %d\r\n", len(smuggled)), smuggled},
	} {
		for _, via := range []string{"CONNECT", "GET"} {
			c, err := net.Dial("tcp", e.addr)
			if err != nil {
				t.Fatal(err)
			}
			br := bufio.NewReader(c)
			target := "/"
			if via == "CONNECT" {
				io.WriteString(c, "CONNECT example.com:8080 HTTP/1.1\r\n\r\n")
				if resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect}); err != nil || resp.StatusCode != 200 {
					t.Fatalf("CONNECT: %v %v", resp, err)
				}
			} else {
				target = "http://example.com:8080/"
			}
			io.WriteString(c, "POST "+target+" HTTP/1.1\r\nHost: example.com:8080\r\n"+tc.head+"\r\n"+tc.body)
			c.SetReadDeadline(time.Now().Add(10 * time.Second))
			got, _ := io.ReadAll(br)
			c.Close()
			if strings.Contains(string(got), "x.invalid") || !strings.Contains(string(got), "400 shellgate:") {
				t.Errorf("%s, %s: got %q, want a 400", tc.name, via, got)
			}
		}
	}
}
