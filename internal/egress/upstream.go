package egress

import (
	"net"
	"net/netip"
	"net/url"
	"os"
	"strings"
)

// FromEnvironment is the upstream proxy shellgate's own environment names for
// a URL's scheme and host:port, read as net/http reads it: HTTPS_PROXY or
// HTTP_PROXY (upper case first), none for loopback, and none for what
// NO_PROXY names (host names and their subdomains, ".domain", "*.domain",
// "host:port", addresses, prefixes, "*").
func FromEnvironment(scheme, hostport string) (*url.URL, error) {
	return proxyFor(os.Getenv, scheme, hostport)
}

func proxyFor(getenv func(string) string, scheme, hostport string) (*url.URL, error) {
	get := func(k string) string {
		if v := getenv(strings.ToUpper(k)); v != "" {
			return v
		}
		return getenv(k)
	}
	raw := get("http_proxy")
	if scheme == "https" {
		raw = get("https_proxy")
	}
	if raw == "" {
		return nil, nil
	}
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	host = Normalize(strings.Trim(host, "[]"))
	if host == "localhost" {
		return nil, nil
	}
	ip, ipErr := netip.ParseAddr(host)
	if ipErr == nil && ip.Unmap().IsLoopback() {
		return nil, nil
	}
	if noProxy(get("no_proxy"), host, port, ip, ipErr == nil) {
		return nil, nil
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		if u2, err2 := url.Parse("http://" + raw); err2 == nil && u2.Host != "" {
			return u2, nil
		}
		if err == nil {
			err = &url.Error{Op: "parse", URL: raw, Err: errNoHost}
		}
		return nil, err
	}
	return u, nil
}

var errNoHost = &net.AddrError{Err: "no host in the proxy URL"}

// noProxy reports whether the NO_PROXY list names host (port, ip).
func noProxy(list, host, port string, ip netip.Addr, isIP bool) bool {
	for _, e := range strings.Split(list, ",") {
		e = Normalize(e)
		if e == "" {
			continue
		}
		if e == "*" {
			return true
		}
		if p, err := netip.ParsePrefix(e); err == nil {
			if isIP && p.Contains(ip.Unmap()) {
				return true
			}
			continue
		}
		if a, err := netip.ParseAddr(strings.Trim(e, "[]")); err == nil {
			if isIP && a.Unmap() == ip.Unmap() {
				return true
			}
			continue
		}
		if h, p, err := net.SplitHostPort(e); err == nil {
			if p != port {
				continue
			}
			e = h
		}
		e = strings.TrimPrefix(strings.TrimPrefix(e, "*"), ".")
		if host == e || strings.HasSuffix(host, "."+e) {
			return true
		}
	}
	return false
}
