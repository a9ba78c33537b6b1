// Package egress is the proxy through which a sandbox session with
// allow-listed egress reaches the network: HTTP (CONNECT and absolute-URI
// requests) and SOCKS5 (CONNECT) on one listener. It resolves names itself,
// lets through only the names on its allow-list, refuses addresses in the
// host's own networks (loopback, private, link-local …) and those of the
// host's interfaces (their addresses and on-link prefixes) unless allowed by
// address, and refuses everything else with a message that names the domain
// and how to allow it.
package egress

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
)

// AllowList is what the proxy lets through: domain names, exact or "*."
// wildcards (any subdomain, not the domain itself), and addresses or
// prefixes ("10.1.2.3", "10.0.0.0/8"), which allow connecting to an IP
// literal and to names that resolve there even when the address is private.
// Names compare case-insensitively, without a trailing dot.
type AllowList struct {
	exact    map[string]bool
	suffixes []string // ".example.com" for "*.example.com"
	prefixes []netip.Prefix
	entries  []string // as normalised, for reports
}

// ErrEmptyEntry is an allow-list entry with nothing in it ("", or spaces):
// refused rather than skipped, since whoever wrote it meant some domain.
var ErrEmptyEntry = errors.New("an empty entry; want a host name (example.com), \"*.\" and a domain, an address or a prefix")

// ParseAllow checks and normalises entries. An empty list allows nothing; an
// empty entry is an error (ErrEmptyEntry).
func ParseAllow(entries []string) (*AllowList, error) {
	a := &AllowList{exact: map[string]bool{}}
	for _, e := range entries {
		if strings.TrimSpace(e) == "" {
			return nil, fmt.Errorf("network allow %q: %w", e, ErrEmptyEntry)
		}
		e = strings.TrimSpace(e)
		if p, err := netip.ParsePrefix(e); err == nil {
			a.prefixes = append(a.prefixes, p.Masked())
			a.add(p.Masked().String())
			continue
		}
		if ip, err := netip.ParseAddr(strings.Trim(e, "[]")); err == nil {
			ip = ip.Unmap()
			a.prefixes = append(a.prefixes, netip.PrefixFrom(ip, ip.BitLen()))
			a.add(ip.String())
			continue
		}
		name := Normalize(e)
		wild := strings.HasPrefix(name, "*.")
		if wild {
			name = name[2:]
		}
		if err := checkName(name); err != nil {
			return nil, fmt.Errorf("network allow %q: %v", e, err)
		}
		if numericName(name) {
			// The proxy refuses such names as addresses: an entry would allow nothing.
			return nil, fmt.Errorf("network allow %q: an address written as a name, which resolvers read as an IPv4 address; write the address as a.b.c.d", e)
		}
		if wild {
			a.suffixes = append(a.suffixes, "."+name)
			a.add("*." + name)
		} else {
			a.exact[name] = true
			a.add(name)
		}
	}
	return a, nil
}

func (a *AllowList) add(e string) {
	if !slices.Contains(a.entries, e) {
		a.entries = append(a.entries, e)
	}
}

// Entries lists the allow-list as normalised.
func (a *AllowList) Entries() []string {
	if a == nil {
		return nil
	}
	return slices.Clone(a.entries)
}

// Normalize lower-cases a host name and drops a trailing dot.
func Normalize(host string) string {
	return strings.TrimSuffix(strings.ToLower(strings.TrimSpace(host)), ".")
}

// checkName accepts host names: labels of letters, digits, '-' and '_'.
func checkName(name string) error {
	if name == "" || len(name) > 253 {
		return fmt.Errorf("not a host name")
	}
	for _, label := range strings.Split(name, ".") {
		if label == "" || len(label) > 63 {
			return fmt.Errorf("not a host name (an empty or overlong label)")
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
				return fmt.Errorf("not a host name (%q); a wildcard is only \"*.\" at the start", r)
			}
		}
	}
	return nil
}

// AllowsName reports whether the domain name host is on the list.
func (a *AllowList) AllowsName(host string) bool {
	if a == nil {
		return false
	}
	host = Normalize(host)
	if a.exact[host] {
		return true
	}
	for _, s := range a.suffixes {
		if strings.HasSuffix(host, s) {
			return true
		}
	}
	return false
}

// AllowsAddr reports whether ip is allowed by address.
func (a *AllowList) AllowsAddr(ip netip.Addr) bool {
	if a == nil {
		return false
	}
	ip = ip.Unmap()
	for _, p := range a.prefixes {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// local are the networks of the host and its LAN, and addresses that are no
// destination: a name resolving there is refused unless its address is on
// the allow-list (no DNS rebinding into the user's network).
var local = func() []netip.Prefix {
	var ps []netip.Prefix
	for _, s := range []string{
		"0.0.0.0/8",         // "this network"
		"10.0.0.0/8",        // private
		"100.64.0.0/10",     // carrier-grade NAT, often the LAN of a VPN
		"127.0.0.0/8",       // loopback
		"169.254.0.0/16",    // link-local (cloud metadata)
		"172.16.0.0/12",     // private
		"192.168.0.0/16",    // private
		"224.0.0.0/4",       // multicast
		"240.0.0.0/4",       // reserved, and the broadcast address
		"::/128", "::1/128", // unspecified, loopback
		"fc00::/7",  // unique local
		"fe80::/10", // link-local
		"fec0::/10", // site-local (deprecated)
		"ff00::/8",  // multicast
	} {
		ps = append(ps, netip.MustParsePrefix(s))
	}
	return ps
}()

// nat64 is the well-known NAT64 prefix: its addresses stand for the IPv4
// address in their last 32 bits.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// Local reports whether ip is in the host's own or LAN networks, or no
// destination at all.
func Local(ip netip.Addr) bool {
	ip = ip.Unmap()
	if nat64.Contains(ip) {
		b := ip.As16()
		ip = netip.AddrFrom4([4]byte(b[12:]))
	}
	for _, p := range local {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// splitTarget splits "host:port" and checks the port.
func splitTarget(hostport string) (host string, port int, err error) {
	h, p, err := net.SplitHostPort(hostport)
	if err != nil {
		return "", 0, err
	}
	n := 0
	for _, r := range p {
		if r < '0' || r > '9' || n > 65535 {
			return "", 0, fmt.Errorf("bad port %q", p)
		}
		n = n*10 + int(r-'0')
	}
	if n < 1 || n > 65535 {
		return "", 0, fmt.Errorf("bad port %q", p)
	}
	return h, n, nil
}
