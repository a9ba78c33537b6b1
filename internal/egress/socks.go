package egress

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"strconv"
)

// SOCKS5 (RFC 1928), CONNECT only, without authentication.
const (
	socksVersion      = 5
	socksConnect      = 1
	socksOK           = 0
	socksFailure      = 1
	socksNotAllowed   = 2
	socksUnreachable  = 4
	socksRefused      = 5
	socksNoCommand    = 7
	socksNoAddrType   = 8
	socksNoAcceptable = 0xff
)

// socks serves a SOCKS5 client.
func (p *Proxy) socks(ctx context.Context, c net.Conn, br *bufio.Reader) {
	var hdr [2]byte
	if _, err := io.ReadFull(br, hdr[:]); err != nil {
		return
	}
	methods := make([]byte, hdr[1])
	if _, err := io.ReadFull(br, methods); err != nil {
		return
	}
	noAuth := false
	for _, m := range methods {
		noAuth = noAuth || m == 0
	}
	if !noAuth {
		c.Write([]byte{socksVersion, socksNoAcceptable})
		return
	}
	if _, err := c.Write([]byte{socksVersion, 0}); err != nil {
		return
	}
	var req [4]byte // version, command, reserved, address type
	if _, err := io.ReadFull(br, req[:]); err != nil || req[0] != socksVersion {
		return
	}
	host, err := readSocksAddr(br, req[3])
	if err != nil {
		socksReply(c, socksNoAddrType)
		return
	}
	var pb [2]byte
	if _, err := io.ReadFull(br, pb[:]); err != nil {
		return
	}
	port := int(pb[0])<<8 | int(pb[1])
	if req[1] != socksConnect {
		// BIND and UDP ASSOCIATE would open a way in, or datagrams out.
		p.audit(Event{Proto: "socks5", Domain: Normalize(host), Port: port, Reason: "shellgate: SOCKS5 command " + strconv.Itoa(int(req[1])) + " (BIND or UDP ASSOCIATE) is not supported; only CONNECT"})
		socksReply(c, socksNoCommand)
		return
	}
	if port == 0 {
		p.audit(Event{Proto: "socks5", Domain: Normalize(host), Reason: "shellgate: port 0"})
		socksReply(c, socksNotAllowed)
		return
	}
	t, ref := p.decide(ctx, "https", host, port)
	if ref != nil {
		code := byte(socksNotAllowed)
		if ref.status != statusForbidden {
			code = socksUnreachable
		}
		p.audit(Event{Proto: "socks5", Domain: Normalize(host), Port: port, Reason: ref.msg})
		socksReply(c, code)
		return
	}
	remote, done, err := p.open(ctx, "socks5", t, true)
	if err != nil {
		code := byte(socksUnreachable)
		var op *net.OpError
		if errors.As(err, &op) && op.Op == "dial" {
			code = socksRefused
		}
		p.audit(Event{Proto: "socks5", Domain: t.host, Port: t.port, Allowed: true, Approved: t.approved, Reason: "shellgate: cannot connect: " + err.Error()})
		socksReply(c, code)
		return
	}
	if err := socksReply(c, socksOK); err != nil {
		done("")
		return
	}
	p.tunnel(ctx, c, br, remote, t.host, done)
}

func readSocksAddr(br *bufio.Reader, typ byte) (string, error) {
	switch typ {
	case 1, 4: // IPv4, IPv6
		b := make([]byte, map[byte]int{1: 4, 4: 16}[typ])
		if _, err := io.ReadFull(br, b); err != nil {
			return "", err
		}
		ip, _ := netip.AddrFromSlice(b)
		return ip.Unmap().String(), nil
	case 3: // a domain name
		n, err := br.ReadByte()
		if err != nil {
			return "", err
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(br, b); err != nil {
			return "", err
		}
		return string(b), nil
	}
	return "", errors.New("address type not supported")
}

// socksReply answers a request; the bound address is not told (0.0.0.0:0).
func socksReply(c net.Conn, code byte) error {
	_, err := c.Write([]byte{socksVersion, code, 0, 1, 0, 0, 0, 0, 0, 0})
	return err
}
