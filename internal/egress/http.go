package egress

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

var errHeadTooLarge = errors.New("request head too large")

// readHead returns the request head at the start of br (through the empty
// line) without consuming it.
func readHead(br *bufio.Reader) ([]byte, error) {
	for n := 1; ; {
		_, err := br.Peek(n)
		b, _ := br.Peek(br.Buffered()) // all there is so far
		if i := bytes.Index(b, []byte("\r\n\r\n")); i >= 0 {
			return b[:i+4], nil
		}
		if i := bytes.Index(b, []byte("\n\n")); i >= 0 {
			return b[:i+2], nil
		}
		if err != nil {
			if errors.Is(err, bufio.ErrBufferFull) {
				return nil, errHeadTooLarge
			}
			return nil, err
		}
		if n >= maxHead {
			return nil, errHeadTooLarge
		}
		n = min(len(b)+1, maxHead)
	}
}

// head is what the proxy reads of a request before deciding on it.
type head struct {
	method, target, proto string
	host                  string   // the Host header, "" if none
	fields                []string // the header lines, "Name: value"
}

func parseHead(b []byte) (head, error) {
	lines := strings.Split(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n")
	f := strings.Fields(lines[0])
	if len(f) != 3 || !strings.HasPrefix(f[2], "HTTP/1.") {
		return head{}, fmt.Errorf("bad request line %q", lines[0])
	}
	h := head{method: f[0], target: f[1], proto: f[2]}
	hosts := 0
	for _, l := range lines[1:] {
		if l == "" {
			continue
		}
		if l[0] == ' ' || l[0] == '\t' {
			return head{}, errors.New("obsolete header line folding")
		}
		k, v, ok := strings.Cut(l, ":")
		if !ok || k == "" || strings.IndexFunc(k, func(r rune) bool { return r >= 0x80 || !tchar(byte(r)) }) >= 0 {
			// No token before the colon ("Content-Length : 5"): an
			// origin that ignores the line would read the body another
			// way than the proxy does (RFC 9112, section 5.1: a 400).
			return head{}, fmt.Errorf("bad header field %q", l)
		}
		h.fields = append(h.fields, l)
		if strings.EqualFold(k, "Host") {
			h.host = strings.TrimSpace(v)
			hosts++
		}
	}
	if hosts > 1 {
		return head{}, errors.New("more than one Host header")
	}
	return h, nil
}

// hostOnly is the host of a Host header or authority, without its port.
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}

// reply writes a one-line answer and the status line that carries it too:
// some clients show only the status line of a refused CONNECT (Go shows the
// text after the code).
func reply(w io.Writer, status int, msg string) {
	line := strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, msg)
	body := line + "\n"
	fmt.Fprintf(w, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\nProxy-Connection: close\r\n\r\n%s",
		status, line, len(body), body)
}

// http serves a client that speaks HTTP to the proxy: CONNECT, or plain
// requests in absolute form (GET http://host/path).
func (p *Proxy) http(ctx context.Context, c net.Conn, br *bufio.Reader) {
	b, err := readHead(br)
	if err != nil {
		if errors.Is(err, errHeadTooLarge) {
			reply(c, statusHeadTooLarge, "shellgate: request head too large")
		}
		return
	}
	h, err := parseHead(b)
	if err != nil {
		reply(c, statusBadRequest, "shellgate: "+err.Error())
		return
	}
	if h.method != "CONNECT" {
		p.forward(ctx, c, br, "", nil, nil)
		return
	}
	host, port, err := splitTarget(h.target)
	if err != nil {
		reply(c, statusBadRequest, fmt.Sprintf("shellgate: CONNECT %s: %v", h.target, err))
		return
	}
	if h.host != "" && !sameHost(hostOnly(h.host), host) {
		p.refuse(c, "connect", host, port, &refusal{statusForbidden, fmt.Sprintf("shellgate: the Host header %s differs from the CONNECT target %s", hostOnly(h.host), host)})
		return
	}
	t, ref := p.decide(ctx, "https", host, port)
	if ref != nil {
		p.refuse(c, "connect", host, port, ref)
		return
	}
	remote, done, err := p.open(ctx, "connect", t, true)
	if err != nil {
		p.failed(c, "connect", t, err)
		return
	}
	br.Discard(len(b))
	if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		done("")
		return
	}
	p.tunnel(ctx, c, br, remote, t.host, done)
}

// refuse answers a refused request and reports it.
func (p *Proxy) refuse(c net.Conn, proto, host string, port int, r *refusal) {
	p.audit(Event{Proto: proto, Domain: Normalize(strings.Trim(host, "[]")), Port: port, Reason: r.msg})
	reply(c, r.status, r.msg)
}

// failed answers and reports a connection that was allowed but failed.
func (p *Proxy) failed(c net.Conn, proto string, t *target, err error) {
	msg := fmt.Sprintf("shellgate: cannot connect to %s: %v", net.JoinHostPort(t.host, strconv.Itoa(t.port)), err)
	p.audit(Event{Proto: proto, Domain: t.host, Port: t.port, Allowed: true, Approved: t.approved, Reason: msg})
	reply(c, statusBadGateway, msg)
}

// inTunnel checks a request sent inside a CONNECT tunnel to fixed: its Host
// (and absolute URL) must name the tunnel's host. It returns the target to
// send, or why the request is refused.
func inTunnel(h head, u *url.URL, fixed string) (target, why string) {
	name := h.host
	if u != nil && u.Host != "" {
		name = u.Host
	}
	if name == "" || !sameHost(hostOnly(name), fixed) || (h.host != "" && !sameHost(hostOnly(h.host), fixed)) {
		return "", fmt.Sprintf("shellgate: the request's Host %s differs from the CONNECT target %s", hostOnly(name), fixed)
	}
	if u != nil && u.Host != "" {
		return u.RequestURI(), ""
	}
	return h.target, ""
}

// forwardedHead is the request head sent on: the request line for target,
// the client's fields but the hop-by-hop ones and its proxy credentials, and
// Connection: close.
func forwardedHead(h head, target string) string {
	var out strings.Builder
	fmt.Fprintf(&out, "%s %s %s\r\n", h.method, target, h.proto)
	for _, l := range h.fields {
		k, _, _ := strings.Cut(l, ":")
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "connection", "proxy-connection", "keep-alive", "proxy-authorization":
			continue
		}
		out.WriteString(l + "\r\n")
	}
	out.WriteString("Connection: close\r\n\r\n")
	return out.String()
}

// forward serves one plain HTTP request and its response, then ends the
// connection (the request goes out with Connection: close; a client that
// sent more requests sends them again on a new connection, where each is
// decided on). Outside a tunnel (fixed empty) the request names its origin
// in absolute form and is decided on here; inside the tunnel to fixed
// (remote and done given) it must name fixed.
func (p *Proxy) forward(ctx context.Context, c net.Conn, br *bufio.Reader, fixed string, remote *counted, done func(string)) {
	why := ""
	defer func() {
		if done != nil {
			done(why)
		}
	}()
	b, err := readHead(br)
	if err != nil {
		if errors.Is(err, errHeadTooLarge) {
			reply(c, statusHeadTooLarge, "shellgate: request head too large")
		}
		return
	}
	c.SetReadDeadline(time.Time{})
	h, err := parseHead(b)
	if err != nil {
		reply(c, statusBadRequest, "shellgate: "+err.Error())
		return
	}
	u, _ := url.Parse(h.target)
	var target string // the request line's, as the origin or the host's proxy wants it
	if fixed != "" {
		if target, why = inTunnel(h, u, fixed); why != "" {
			reply(c, statusForbidden, why)
			return
		}
	} else {
		if u == nil || u.Scheme != "http" || u.Host == "" {
			reply(c, statusBadRequest, "shellgate: this is a proxy: send http:// URLs in absolute form, or CONNECT")
			return
		}
		host, port := u.Hostname(), 80
		if ps := u.Port(); ps != "" {
			if port, err = strconv.Atoi(ps); err != nil || port < 1 || port > 65535 {
				reply(c, statusBadRequest, "shellgate: bad port in "+h.target)
				return
			}
		}
		if h.host != "" && !sameHost(hostOnly(h.host), host) {
			p.refuse(c, "http", host, port, &refusal{statusForbidden, fmt.Sprintf("shellgate: the Host header %s differs from the URL's host %s", hostOnly(h.host), host)})
			return
		}
		t, ref := p.decide(ctx, "http", host, port)
		if ref != nil {
			p.refuse(c, "http", host, port, ref)
			return
		}
		if remote, done, err = p.open(ctx, "http", t, false); err != nil {
			p.failed(c, "http", t, err)
			return
		}
		if target = u.RequestURI(); t.upstream != nil {
			// The host's proxy parses the URL itself: it gets the origin as
			// checked here, not the client's spelling, which a lenient parser
			// may read as another host ("http://allowed#@evil/").
			authority := t.host
			if port != 80 || strings.Contains(t.host, ":") {
				authority = net.JoinHostPort(t.host, strconv.Itoa(port))
			}
			target = "http://" + authority + target
		}
		if h.host == "" {
			h.fields = append(h.fields, "Host: "+u.Host)
		}
	}
	length, chunked, err := bodyOf(h)
	if err != nil {
		reply(c, statusBadRequest, "shellgate: "+err.Error())
		return
	}
	br.Discard(len(b))
	if _, err := io.WriteString(remote, forwardedHead(h, target)); err != nil {
		return
	}
	// The response goes back as it comes, while the body goes out (a
	// client may wait for 100 Continue); the end of the response is the end
	// of the remote's connection.
	answered := make(chan struct{})
	go func() {
		defer close(answered)
		io.Copy(c, remote)
		c.Close()
	}()
	if chunked {
		err = copyChunked(remote, br)
	} else if length > 0 {
		_, err = io.CopyN(remote, br, length)
	}
	if err != nil {
		remote.Close()
	}
	<-answered
}

// bodyOf says how long the request's body is: chunked, or length bytes.
// A length told two ways (Transfer-Encoding and Content-Length, two
// different Content-Lengths, one that is not all digits) is an error: an
// origin reading the other one would take the rest of the body for a
// request of its own, which no check saw (request smuggling).
func bodyOf(h head) (length int64, chunked bool, err error) {
	var te, cl []string
	for _, l := range h.fields {
		k, v, _ := strings.Cut(l, ":")
		switch k = strings.TrimSpace(k); {
		case strings.EqualFold(k, "Transfer-Encoding"):
			te = append(te, strings.TrimSpace(v))
		case strings.EqualFold(k, "Content-Length"):
			cl = append(cl, strings.TrimSpace(v))
		}
	}
	switch {
	case len(te) > 0 && len(cl) > 0:
		return 0, false, errors.New("both Transfer-Encoding and Content-Length")
	case len(te) > 1:
		return 0, false, errors.New("more than one Transfer-Encoding")
	case len(te) == 1:
		if !strings.EqualFold(te[0], "chunked") {
			return 0, false, fmt.Errorf("transfer encoding %q is not supported", te[0])
		}
		return 0, true, nil
	}
	for i, v := range cl {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || v == "" || strings.Trim(v, "0123456789") != "" || i > 0 && n != length {
			return 0, false, fmt.Errorf("bad Content-Length %q", strings.Join(cl, ", "))
		}
		length = n
	}
	return length, false, nil
}

// copyChunked copies one chunked body, its trailer included.
func copyChunked(dst io.Writer, br *bufio.Reader) error {
	line := func() (string, error) {
		l, err := br.ReadSlice('\n')
		if err != nil {
			return "", err
		}
		_, err = dst.Write(l)
		return string(l), err
	}
	for {
		l, err := line()
		if err != nil {
			return err
		}
		size, _, _ := strings.Cut(strings.TrimSpace(l), ";")
		n, err := strconv.ParseInt(strings.TrimSpace(size), 16, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("bad chunk size %q", size)
		}
		if n == 0 {
			for { // the trailer, through its empty line
				l, err := line()
				if err != nil || strings.TrimSpace(l) == "" {
					return err
				}
			}
		}
		if _, err := io.CopyN(dst, br, n+2); err != nil {
			return err
		}
	}
}
