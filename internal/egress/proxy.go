package egress

import (
	"bufio"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shellgate/shellgate/envelope"
)

// Resolver resolves names; *net.Resolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Event is one connection a client asked for: one per CONNECT, SOCKS5
// request or plain-HTTP origin, when it ends or is refused.
type Event struct {
	Proto   string // "http" (plain, absolute-URI requests), "connect" or "socks5"
	Domain  string // the name (or address) the client asked for
	Port    int
	Allowed bool
	Reason  string // why it was refused, or why the connection failed
	// Approved: the name is not on the list, and Ask let it through.
	Approved bool
	// Start is when the client's connection came in.
	Start time.Time
	// Sent and Received count the bytes to and from the remote side.
	Sent, Received int64
}

// Proxy is the allow-listing proxy. Its zero value refuses everything. Its
// fields must not change once it serves: each connection works on a copy.
type Proxy struct {
	Allow *AllowList
	// Resolver resolves the names clients ask for; nil: net.DefaultResolver.
	Resolver Resolver
	// Dial connects to an address ("ip:port") or to an upstream proxy; nil: a
	// net.Dialer.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Upstream returns the host's own proxy for a URL's scheme and host:port,
	// or nil to connect directly; nil: FromEnvironment.
	Upstream func(scheme, hostport string) (*url.URL, error)
	// Audit is called once per Event; it must not block for long.
	Audit func(Event)
	// Ask, if set, is asked about a name the allow-list does not hold (a
	// person, through the Gate's approver) while the proxy holds the
	// client's connection: nil lets it through; ErrNotAsked refuses it as
	// if there were no Ask; another error refuses it and says why. It must
	// return when ctx ends, which it does after AskTimeout.
	Ask func(ctx context.Context, host string, port int) error
	// AskTimeout bounds one Ask; 0 means DefaultAskTimeout.
	AskTimeout time.Duration
}

// DefaultAskTimeout is how long a connection waits for the answer to Ask.
const DefaultAskTimeout = 2 * time.Minute

// ErrNotAsked is Ask's answer when there is no one to ask.
var ErrNotAsked = errors.New("no one to ask")

// HTTP statuses the proxy answers with. The package does without net/http,
// which would add its initialisation (and crypto/tls's) to every start of
// shellgate, even a hook's.
const (
	statusBadRequest   = 400
	statusForbidden    = 403
	statusHeadTooLarge = 431
	statusBadGateway   = 502
)

// Limits of a client's request head, and how long it has to send it.
const (
	maxHead     = 64 << 10
	headTimeout = 30 * time.Second
	dialTimeout = 30 * time.Second
)

// Serve serves the connections ln accepts until ln is closed or ctx ends,
// and returns when every one of them has ended.
func (p *Proxy) Serve(ctx context.Context, ln net.Listener) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.ServeConn(ctx, c)
		}()
	}
}

// ServeConn serves one client connection, HTTP or SOCKS5 by its first byte,
// and closes it. It returns when the client and the remote side are done, or
// when ctx ends.
func (p *Proxy) ServeConn(ctx context.Context, c net.Conn) {
	p = p.from(time.Now())
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	c.SetReadDeadline(time.Now().Add(headTimeout))
	br := bufio.NewReaderSize(c, maxHead)
	first, err := br.Peek(1)
	if err != nil {
		return
	}
	if first[0] == 5 {
		p.socks(ctx, c, br)
	} else {
		p.http(ctx, c, br)
	}
}

// from is p for one connection that came in at start: its Events say so.
func (p *Proxy) from(start time.Time) *Proxy {
	q := *p
	if p.Audit != nil {
		q.Audit = func(e Event) {
			e.Start = start
			p.Audit(e)
		}
	}
	return &q
}

// refusal is why a target is not let through, with how to allow it.
type refusal struct {
	status int // HTTP status: 403 refused by the list, 502 not reachable
	msg    string
}

func refusedName(host string) *refusal {
	return &refusal{statusForbidden, fmt.Sprintf("shellgate: %s is not on the network allow-list; the user can allow it with --allow-domain %s or [network] allow = [%q]", host, host, host)}
}

// target is a checked destination: the addresses to dial, or the upstream
// proxy to ask.
type target struct {
	host     string // normalised
	port     int
	addrs    []netip.Addr
	upstream *url.URL
	approved bool // not on the list: Ask let it through
}

// decide checks host:port against the allow-list and resolves it.
func (p *Proxy) decide(ctx context.Context, scheme, host string, port int) (*target, *refusal) {
	host = Normalize(strings.Trim(host, "[]"))
	t := &target{host: host, port: port}
	if ip, err := netip.ParseAddr(host); err == nil {
		if !p.Allow.AllowsAddr(ip) {
			return nil, &refusal{statusForbidden, fmt.Sprintf("shellgate: the address %s is not on the network allow-list (connect by name instead); the user can allow it with --allow-domain %s or [network] allow = [%q]", host, host, host)}
		}
		t.addrs = []netip.Addr{ip.Unmap()}
		return t, nil
	}
	if checkName(host) != nil {
		return nil, refusedName(host)
	}
	if numericName(host) {
		return nil, &refusal{statusForbidden, fmt.Sprintf("shellgate: %s is an IPv4 address written as a name (resolvers read it as one), which the allow-list does not name; connect by name, or the user can allow the address with --allow-domain ADDRESS or [network] allow = [\"ADDRESS\"]", host)}
	}
	if !p.Allow.AllowsName(host) {
		if err := p.ask(ctx, host, port); errors.Is(err, ErrNotAsked) {
			return nil, refusedName(host)
		} else if err != nil {
			return nil, &refusal{statusForbidden, fmt.Sprintf("shellgate: %s is not on the network allow-list, and %v; the user can allow it with --allow-domain %s or [network] allow = [%q]", host, err, host, host)}
		}
		t.approved = true
	}
	upstream := p.Upstream
	if upstream == nil {
		upstream = FromEnvironment
	}
	u, err := upstream(scheme, net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return nil, &refusal{statusBadGateway, fmt.Sprintf("shellgate: the host's proxy setting: %v", err)}
	}
	if u != nil {
		t.upstream = u // it resolves the name, in its own network
		return t, nil
	}
	var r Resolver = net.DefaultResolver
	if p.Resolver != nil {
		r = p.Resolver
	}
	addrs, err := r.LookupNetIP(ctx, "ip", host)
	if err != nil || len(addrs) == 0 {
		return nil, &refusal{statusBadGateway, fmt.Sprintf("shellgate: cannot resolve %s: %v", host, err)}
	}
	var own []netip.Prefix // this host's networks, listed once a name needs them
	for _, a := range addrs {
		a = a.Unmap()
		if p.Allow.AllowsAddr(a) {
			t.addrs = append(t.addrs, a)
			continue
		}
		if Local(a) {
			return nil, &refusal{statusForbidden, fmt.Sprintf("shellgate: %s resolves to %s, an address of the host or its network, which the allow-list does not name; the user can allow it with --allow-domain %s or [network] allow = [%q]", host, a, a, a.String())}
		}
		if own == nil {
			if own, err = hostAddrs(); err != nil {
				return nil, &refusal{statusBadGateway, fmt.Sprintf("shellgate: cannot list this host's addresses to check %s against them: %v", host, err)}
			}
		}
		if slices.ContainsFunc(own, func(p netip.Prefix) bool { return p.Contains(a) }) {
			return nil, &refusal{statusForbidden, fmt.Sprintf("shellgate: %s resolves to %s, an address of this host or of a network it is on, which the allow-list does not name; the user can allow it with --allow-domain %s or [network] allow = [%q]", host, a, a, a.String())}
		}
		t.addrs = append(t.addrs, a)
	}
	return t, nil
}

// numericName reports a name whose last label is a number, decimal or 0x
// hexadecimal: no domain is, and resolvers read such a name as an IPv4
// address (inet_aton's 127.1, 2130706433, 0x7f000001, 0177.0.0.1), so it is
// refused as an address is, not asked about as a name.
func numericName(host string) bool {
	last := host[strings.LastIndexByte(host, '.')+1:]
	if h, ok := strings.CutPrefix(last, "0x"); ok {
		last = strings.TrimLeft(h, "0123456789abcdef")
		return last == ""
	}
	return strings.Trim(last, "0123456789") == ""
}

// interfaceAddrs lists this host's interface addresses (net.InterfaceAddrs;
// a test gives others).
var interfaceAddrs = net.InterfaceAddrs

// hostAddrs are the networks of this host's interfaces: each address with
// its on-link prefix. A name resolving to the host's own address reaches the
// services listening on all of them (0.0.0.0, [::]) as its loopback would,
// and one resolving to another address of a network the host is on reaches
// the user's LAN (a printer, a NAS, the router), whatever range those are
// in: a public address on the host's own interface, a home LAN's global
// IPv6 /64. A prefix wider than a /16 (IPv4) or a /48 (IPv6), which no LAN
// has (a VPN's catch-all), counts as the address alone. Listed anew for
// each name that needs it, so an interface that came up since counts.
func hostAddrs() ([]netip.Prefix, error) {
	ifas, err := interfaceAddrs()
	if err != nil {
		return nil, err
	}
	own := []netip.Prefix{} // non-nil: listed
	for _, ifa := range ifas {
		p, err := netip.ParsePrefix(ifa.String())
		if err != nil {
			continue
		}
		a, bits := p.Addr().WithZone(""), p.Bits()
		if a.Is4In6() {
			a, bits = a.Unmap(), bits-96
		}
		if bits < 0 || a.Is4() && bits < 16 || a.Is6() && bits < 48 {
			bits = a.BitLen()
		}
		own = append(own, netip.PrefixFrom(a, bits).Masked()) // the host's own address included
	}
	return own, nil
}

// ask asks p.Ask about host, for at most AskTimeout, holding the client.
func (p *Proxy) ask(ctx context.Context, host string, port int) error {
	if p.Ask == nil {
		return ErrNotAsked
	}
	timeout := p.AskTimeout
	if timeout <= 0 {
		timeout = DefaultAskTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := p.Ask(ctx, host, port)
	if err != nil && !errors.Is(err, ErrNotAsked) && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("no one answered the question whether to allow it within %s", envelope.Duration(timeout))
	}
	return err
}

func (p *Proxy) dialer() func(ctx context.Context, network, addr string) (net.Conn, error) {
	if p.Dial != nil {
		return p.Dial
	}
	d := &net.Dialer{Timeout: dialTimeout}
	return d.DialContext
}

// dial connects to t: its addresses in turn, or a tunnel through the
// upstream proxy (tunnel), or the upstream proxy itself for plain requests.
func (p *Proxy) dial(ctx context.Context, t *target, tunnel bool) (net.Conn, error) {
	dial := p.dialer()
	hostport := net.JoinHostPort(t.host, strconv.Itoa(t.port))
	if t.upstream != nil {
		if t.upstream.Scheme != "http" {
			return nil, fmt.Errorf("the host's proxy %s: only http:// proxies are supported", t.upstream.Redacted())
		}
		addr := t.upstream.Host
		if t.upstream.Port() == "" {
			addr = net.JoinHostPort(t.upstream.Hostname(), "80")
		}
		c, err := dial(ctx, "tcp", addr)
		if err != nil || !tunnel {
			return c, err
		}
		return connectVia(c, t.upstream, hostport)
	}
	var first error
	for _, a := range t.addrs {
		c, err := dial(ctx, "tcp", netip.AddrPortFrom(a, uint16(t.port)).String())
		if err == nil {
			return c, nil
		}
		if first == nil {
			first = err
		}
	}
	return nil, first
}

// connectVia asks the upstream proxy on c for a tunnel to hostport.
func connectVia(c net.Conn, u *url.URL, hostport string) (net.Conn, error) {
	c.SetDeadline(time.Now().Add(dialTimeout))
	req := "CONNECT " + hostport + " HTTP/1.1\r\nHost: " + hostport + "\r\n" + proxyAuth(u)
	if _, err := io.WriteString(c, req+"\r\n"); err != nil {
		c.Close()
		return nil, err
	}
	br := bufio.NewReader(c)
	head, err := readHead(br)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("the host's proxy: %w", err)
	}
	status, _, _ := strings.Cut(string(head), "\n")
	status = strings.TrimSpace(status)
	if f := strings.Fields(status); len(f) < 2 || !strings.HasPrefix(f[0], "HTTP/1.") || f[1] != "200" {
		c.Close()
		return nil, fmt.Errorf("the host's proxy %s answered %q", u.Redacted(), status)
	}
	br.Discard(len(head))
	c.SetDeadline(time.Time{})
	if br.Buffered() > 0 {
		return &bufConn{Conn: c, r: br}, nil
	}
	return c, nil
}

// proxyAuth is the Proxy-Authorization header line for u's user, if any.
func proxyAuth(u *url.URL) string {
	if u.User == nil {
		return ""
	}
	pw, _ := u.User.Password()
	return "Proxy-Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte(u.User.Username()+":"+pw)) + "\r\n"
}

// bufConn reads what a bufio.Reader holds before the connection itself.
type bufConn struct {
	net.Conn
	r *bufio.Reader
}

func (b *bufConn) Read(p []byte) (int, error) { return b.r.Read(p) }

func (b *bufConn) CloseWrite() error { return closeWrite(b.Conn) }

// counted counts the bytes to (Sent) and from (Received) the remote side.
type counted struct {
	net.Conn
	sent, received atomic.Int64
}

func (c *counted) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.received.Add(int64(n))
	return n, err
}

func (c *counted) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.sent.Add(int64(n))
	return n, err
}

func (c *counted) CloseWrite() error { return closeWrite(c.Conn) }

func closeWrite(c net.Conn) error {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return c.Close()
}

func (p *Proxy) audit(e Event) {
	if p.Audit != nil {
		p.Audit(e)
	}
}

// open dials t for a client and arranges for ctx to close the connection.
// The Event is reported when done is called: refused says why the proxy cut
// the connection, "" when it ended by itself.
func (p *Proxy) open(ctx context.Context, proto string, t *target, tunnel bool) (rc *counted, done func(refused string), err error) {
	c, err := p.dial(ctx, t, tunnel)
	if err != nil {
		return nil, nil, err
	}
	rc = &counted{Conn: c}
	stop := context.AfterFunc(ctx, func() { c.Close() })
	var once sync.Once
	return rc, func(refused string) {
		once.Do(func() {
			stop()
			c.Close()
			p.audit(Event{Proto: proto, Domain: t.host, Port: t.port, Allowed: refused == "", Approved: t.approved, Reason: refused, Sent: rc.sent.Load(), Received: rc.received.Load()})
		})
	}, nil
}

// relay copies client (read through br) to remote and remote to client
// until both directions end; an end of one direction is passed on as a
// half-close, an error closes both.
func relay(client net.Conn, br *bufio.Reader, remote net.Conn) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if _, err := io.Copy(client, remote); err == nil {
			closeWrite(client)
		} else {
			client.Close()
			remote.Close()
		}
	}()
	if _, err := io.Copy(remote, br); err == nil {
		closeWrite(remote)
	} else {
		client.Close()
		remote.Close()
	}
	wg.Wait()
}

// tunnel relays a CONNECT or SOCKS5 connection to host once the client has
// spoken: TLS whose server name (SNI) is another host than the one asked
// for is refused; plain HTTP is served request by request, each of which
// must name host; anything else is relayed as it is. A protocol whose server
// speaks first waits for the client.
func (p *Proxy) tunnel(ctx context.Context, client net.Conn, br *bufio.Reader, remote *counted, host string, done func(string)) {
	client.SetReadDeadline(time.Time{})
	first, err := br.Peek(1)
	if err != nil {
		done("")
		return
	}
	switch {
	case first[0] == 0x16: // a TLS handshake record
		sni, ok := peekSNI(br)
		if !ok {
			done(fmt.Sprintf("the TLS ClientHello to %s cannot be read, so its server name cannot be checked", host))
			return
		}
		if sni != "" && !sameHost(sni, host) {
			done(fmt.Sprintf("the TLS server name %s differs from the target %s", sni, host))
			return
		}
	default:
		skip, isHTTP, err := httpStart(br)
		if errors.Is(err, errTooManyEmpty) {
			done(err.Error())
			return
		}
		if isHTTP {
			br.Discard(skip)
			p.forward(ctx, client, br, host, remote, done)
			return
		}
	}
	relay(client, br, remote)
	done("")
}

// sameHost compares host names as the allow-list does.
func sameHost(a, b string) bool {
	return Normalize(strings.Trim(a, "[]")) == Normalize(strings.Trim(b, "[]"))
}

// httpStart reports whether the client's first bytes are an HTTP request:
// empty lines, which servers skip before a request line (RFC 9112, section
// 2.2; nginx skips any number), then a method and a space. skip is the
// number of empty-line bytes. A method is any token (RFC 9110, section 9.1:
// "get", "PROPFIND" and "M-SEARCH" are methods to Go's server, which routes
// them by their Host as any other), so a line that starts with one and a
// space is read to its end, and is a request when it names an HTTP version
// after that. It decides at the first byte of another shape, so a short
// first message of another protocol ("PING\r\n") is not held waiting for
// more. errTooManyEmpty: more empty lines, or a longer first line, than it
// can hold, which an origin could read as a request it has not seen.
func httpStart(br *bufio.Reader) (skip int, isHTTP bool, err error) {
	at := func(i int) (byte, error) {
		b, err := br.Peek(i + 1)
		if errors.Is(err, bufio.ErrBufferFull) {
			return 0, errTooManyEmpty
		}
		if err != nil {
			return 0, err
		}
		return b[i], nil
	}
	for ; ; skip++ {
		c, err := at(skip)
		if err != nil {
			return skip, false, err
		}
		if c != '\r' && c != '\n' {
			break
		}
	}
	i := skip
	for ; ; i++ {
		c, err := at(i)
		if err != nil {
			return skip, false, err
		}
		if c == ' ' || c == '\t' {
			break
		}
		if !tchar(c) {
			return skip, false, nil
		}
	}
	if i == skip {
		return skip, false, nil
	}
	for j := i; ; j++ {
		c, err := at(j)
		if err != nil {
			return skip, false, err
		}
		if c == '\n' {
			b, _ := br.Peek(j)
			return skip, strings.Contains(strings.ToUpper(string(b[i:])), "HTTP/"), nil
		}
	}
}

// tchar reports whether c may be in a token (RFC 9110, section 5.6.2).
func tchar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

var errTooManyEmpty = errors.New("more empty lines before a request, or a longer request line, than the proxy reads")

// peekSNI reads the server name of the TLS ClientHello at the head of br,
// without consuming it, however the client split the hello into records
// (servers put them together again). ok is false when the records cannot be
// read as one: the caller refuses what it cannot check.
func peekSNI(br *bufio.Reader) (string, bool) {
	var b []byte // the handshake message, put together
	for off := 0; ; {
		hdr, err := br.Peek(off + 5)
		if err != nil || hdr[off] != 0x16 {
			return "", false
		}
		n := int(hdr[off+3])<<8 | int(hdr[off+4])
		rec, err := br.Peek(off + 5 + n)
		if err != nil || n == 0 {
			return "", false
		}
		b = append(b, rec[off+5:]...)
		off += 5 + n
		if len(b) >= 4 {
			if need := 4 + (int(b[1])<<16 | int(b[2])<<8 | int(b[3])); len(b) >= need {
				b = b[:need]
				break
			}
		}
	}
	// Handshake: type 1 (ClientHello), length (3), version (2), random (32).
	if len(b) < 38 || b[0] != 1 {
		return "", false
	}
	b = b[38:]
	skip := func(lenBytes int) bool {
		if len(b) < lenBytes {
			return false
		}
		l := 0
		for _, x := range b[:lenBytes] {
			l = l<<8 | int(x)
		}
		if len(b) < lenBytes+l {
			return false
		}
		b = b[lenBytes+l:]
		return true
	}
	if !skip(1) || !skip(2) || !skip(1) { // session id, cipher suites, compression
		return "", false
	}
	if len(b) < 2 {
		return "", true // no extensions
	}
	b = b[2:]
	for len(b) >= 4 {
		typ, l := int(b[0])<<8|int(b[1]), int(b[2])<<8|int(b[3])
		if len(b) < 4+l {
			return "", false
		}
		data := b[4 : 4+l]
		b = b[4+l:]
		if typ != 0 { // server_name
			continue
		}
		if len(data) < 2 {
			return "", false
		}
		data = data[2:]
		for len(data) >= 3 {
			nt, nl := data[0], int(data[1])<<8|int(data[2])
			if len(data) < 3+nl {
				return "", false
			}
			if nt == 0 {
				return string(data[3 : 3+nl]), true
			}
			data = data[3+nl:]
		}
		return "", false
	}
	return "", true
}
