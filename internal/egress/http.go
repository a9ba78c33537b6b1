package egress

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
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
	method, target string
	host           string // the Host header, "" if none
}

func parseHead(b []byte) (head, error) {
	lines := strings.Split(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n")
	f := strings.Fields(lines[0])
	if len(f) != 3 || !strings.HasPrefix(f[2], "HTTP/1.") {
		return head{}, fmt.Errorf("bad request line %q", lines[0])
	}
	h := head{method: f[0], target: f[1]}
	hosts := 0
	for _, l := range lines[1:] {
		k, v, ok := strings.Cut(l, ":")
		if ok && strings.EqualFold(strings.TrimSpace(k), "Host") {
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
			reply(c, http.StatusRequestHeaderFieldsTooLarge, "shellgate: request head too large")
		}
		return
	}
	h, err := parseHead(b)
	if err != nil {
		reply(c, http.StatusBadRequest, "shellgate: "+err.Error())
		return
	}
	if h.method != http.MethodConnect {
		p.forward(ctx, c, br, "", nil, nil)
		return
	}
	host, port, err := splitTarget(h.target)
	if err != nil {
		reply(c, http.StatusBadRequest, fmt.Sprintf("shellgate: CONNECT %s: %v", h.target, err))
		return
	}
	if h.host != "" && !sameHost(hostOnly(h.host), host) {
		p.refuse(c, "connect", host, port, &refusal{http.StatusForbidden, fmt.Sprintf("shellgate: the Host header %s differs from the CONNECT target %s", hostOnly(h.host), host)})
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
	p.audit(Event{Proto: proto, Domain: t.host, Port: t.port, Allowed: true, Reason: msg})
	reply(c, http.StatusBadGateway, msg)
}

// forward serves plain HTTP requests one after another. Outside a tunnel
// (fixed empty) each names its origin in absolute form and is decided on;
// inside the tunnel to fixed (remote and done given), each must be for fixed.
func (p *Proxy) forward(ctx context.Context, c net.Conn, br *bufio.Reader, fixed string, remote *counted, done func(string)) {
	why := ""
	defer func() {
		if done != nil {
			done(why)
		}
	}()
	var rbr *bufio.Reader
	if remote != nil {
		rbr = bufio.NewReader(remote)
	}
	cur, viaProxy := "", false
	for {
		b, err := readHead(br)
		if err != nil {
			if errors.Is(err, errHeadTooLarge) {
				reply(c, http.StatusRequestHeaderFieldsTooLarge, "shellgate: request head too large")
			}
			return
		}
		c.SetReadDeadline(time.Time{})
		h, err := parseHead(b)
		if err != nil {
			reply(c, http.StatusBadRequest, "shellgate: "+err.Error())
			return
		}
		u, _ := url.Parse(h.target)
		if fixed != "" {
			name := h.host
			if u != nil && u.Host != "" {
				name = u.Host
			}
			if name == "" || !sameHost(hostOnly(name), fixed) || (h.host != "" && !sameHost(hostOnly(h.host), fixed)) {
				why = fmt.Sprintf("shellgate: the request's Host %s differs from the CONNECT target %s", hostOnly(name), fixed)
				reply(c, http.StatusForbidden, why)
				return
			}
		} else {
			if u == nil || u.Scheme != "http" || u.Host == "" {
				reply(c, http.StatusBadRequest, "shellgate: this is a proxy: send http:// URLs in absolute form, or CONNECT")
				return
			}
			host, port := u.Hostname(), 80
			if ps := u.Port(); ps != "" {
				if port, err = strconv.Atoi(ps); err != nil || port < 1 || port > 65535 {
					reply(c, http.StatusBadRequest, "shellgate: bad port in "+h.target)
					return
				}
			}
			if h.host != "" && !sameHost(hostOnly(h.host), host) {
				p.refuse(c, "http", host, port, &refusal{http.StatusForbidden, fmt.Sprintf("shellgate: the Host header %s differs from the URL's host %s", hostOnly(h.host), host)})
				return
			}
			if key := net.JoinHostPort(Normalize(host), strconv.Itoa(port)); key != cur {
				if done != nil {
					done("")
					done = nil
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
				rbr, cur, viaProxy = bufio.NewReader(remote), key, t.upstream != nil
			}
		}
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		req.Header.Del("Proxy-Connection")
		req.Header.Del("Proxy-Authorization")
		if viaProxy {
			err = req.WriteProxy(remote)
		} else {
			err = req.Write(remote)
		}
		if err != nil {
			return
		}
		resp, err := http.ReadResponse(rbr, req)
		for err == nil && resp.StatusCode >= 100 && resp.StatusCode < 200 && resp.StatusCode != http.StatusSwitchingProtocols {
			if err = resp.Write(c); err == nil {
				resp, err = http.ReadResponse(rbr, req)
			}
		}
		if err != nil {
			return
		}
		keep := !req.Close && !resp.Close && resp.StatusCode != http.StatusSwitchingProtocols
		err = resp.Write(c)
		resp.Body.Close()
		if err != nil || !keep {
			return
		}
	}
}
