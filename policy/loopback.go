package policy

import (
	"net/netip"
	"regexp"
	"strings"
	"sync"

	"github.com/shellgate/shellgate/internal/analysis"
)

// loopbackClients are the HTTP clients whose requests to the session's own
// loopback are not network use: a dev server started by the agent answers
// there, and nothing leaves the machine.
var loopbackClients = map[string]bool{"curl": true, "wget": true}

// valueOptions are the options of loopbackClients that take the next argument
// as their value (a method, a header, data …): that argument is not a URL.
var valueOptions = map[string]map[string]bool{
	"curl": set("-X", "-d", "-H", "-u", "-A", "-e", "-b", "-c", "-m", "-w", "-o", "-T", "-F", "-r", "-y", "-Y", "-z", "-E", "-U",
		"--request", "--data", "--data-raw", "--data-binary", "--data-urlencode", "--json", "--header", "--user", "--user-agent",
		"--referer", "--cookie", "--cookie-jar", "--max-time", "--connect-timeout", "--write-out", "--output", "--upload-file",
		"--form", "--range", "--retry", "--retry-delay", "--retry-max-time", "--cert", "--cacert", "--key"),
	"wget": set("-O", "-o", "-a", "-t", "-T", "-U", "--header", "--post-data", "--user", "--password", "--timeout", "--tries",
		"--output-document", "--user-agent", "--method", "--body-data"),
}

// takesValue reports whether option a of client name takes the next argument
// as its value: one of valueOptions, alone or last of a cluster (-sSo).
func takesValue(name, a string) bool {
	return valueOptions[name][a] || len(a) > 2 && a[1] != '-' && valueOptions[name]["-"+a[len(a)-1:]]
}

func set(xs ...string) map[string]bool {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}

// hostLike is an argument an HTTP client takes for a URL: a scheme, or a bare
// host with an optional port and path.
var hostLike = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(?:[A-Za-z][A-Za-z0-9+.-]*://\S*|\[?[A-Za-z0-9.:-]+\]?(?::\d+)?(?:/\S*)?)$`)
})

// loopbackOnly reports whether c is an HTTP client that only talks to loopback
// addresses: every URL it is given is one, and no option could send it
// elsewhere (a proxy, --connect-to, --resolve, a config file, following
// redirects, more URLs from a file or from a wget command).
func loopbackOnly(c *analysis.Command) bool {
	if !loopbackClients[c.Name] {
		return false
	}
	urls := 0
	value := false // the argument is the previous option's value
	for i, a := range c.Args {
		if c.IsDynamic(i) {
			return false
		}
		switch {
		case value:
			value = false
		case a == "--":
			// what follows is URLs, judged below
		case strings.HasPrefix(a, "-"):
			if redirectingOption(c.Name, a) {
				return false
			}
			if _, v, ok := strings.Cut(a, "="); ok && strings.Contains(v, "://") {
				if !isLoopbackURL(v) {
					return false // --url=http://elsewhere
				}
				urls++
			}
			value = takesValue(c.Name, a)
		case hostLike().MatchString(a) && isLoopbackURL(a):
			urls++
		default:
			return false // another host, or something curl would take for one
		}
	}
	return urls > 0
}

// redirectingOption reports whether option a could send the client elsewhere.
func redirectingOption(name, a string) bool {
	long := strings.ToLower(a)
	for _, bad := range []string{"proxy", "socks", "connect-to", "resolve", "doh", "config", "location", "execute", "input-file", "span-hosts", "follow", "unix-socket"} {
		if strings.HasPrefix(long, "--") && strings.Contains(long, bad) {
			return true
		}
	}
	if strings.HasPrefix(a, "--") {
		return false
	}
	shorts := map[string]string{"curl": "xLK", "wget": "eiYH", "http": "F", "https": "F", "xh": "F"}[name]
	return strings.ContainsAny(a[1:], shorts)
}

// isLoopbackURL reports whether a URL or host names this machine's loopback.
func isLoopbackURL(u string) bool {
	if strings.ContainsAny(u, "\\ \t") {
		return false // parsers differ on these: http://evil\@127.0.0.1
	}
	if i := strings.Index(u, "://"); i >= 0 {
		u = u[i+3:]
	}
	if i := strings.IndexAny(u, "/?#"); i >= 0 {
		u = u[:i]
	}
	if i := strings.LastIndexByte(u, '@'); i >= 0 {
		u = u[i+1:]
	}
	host := u
	if strings.HasPrefix(host, "[") {
		end := strings.IndexByte(host, ']')
		if end < 0 {
			return false
		}
		host = host[1:end]
	} else if i := strings.LastIndexByte(host, ':'); i >= 0 && strings.Count(host, ":") == 1 {
		host = host[:i]
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && (ip.IsLoopback() || ip.IsUnspecified())
}
