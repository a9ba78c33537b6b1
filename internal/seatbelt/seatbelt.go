// Package seatbelt builds the macOS Seatbelt profile (SBPL, the language of
// sandbox-exec) that confines a sandbox session's commands there: deny by
// default, with every path passed as a parameter, never as profile text.
package seatbelt

import (
	"fmt"
	"path"
	"strings"
)

// Exec is the only sandbox-exec used: one found in $PATH could be anyone's.
const Exec = "/usr/bin/sandbox-exec"

// Seatbelt is a Policy as macOS's Seatbelt enforces it: a profile in SBPL, the
// Scheme-like language of sandbox-exec, and the parameters its rules read.
//
// Paths never appear in the profile: each rule names a parameter, (param "W0"),
// and sandbox-exec gets the path as -DW0=path. A path is then only ever compared
// as a path, and no quote, parenthesis or newline in it can add a rule; the
// profile's text depends only on how many paths of each kind there are.
//
// The profile denies by default, as Chromium's and Codex's do, and allows what
// ordinary command-line programs need. SBPL lets the last matching rule decide,
// so the order of the sections is what makes a protected path in a writable one
// read-only, and a hidden path unreadable where everything is readable:
//
//  1. processes: exec and fork; signals and process information only within
//     the sandbox (not shellgate's, not the user's other programs'); no
//     kern.procargs sysctl, which would read other processes' environments;
//  2. files: everything readable, then Hidden unreadable, then Visible readable
//     again;
//  3. writes: TempDir and Writable (subpath), a few devices, then Protected
//     denied with the directories leading to them from their writable root (so
//     the root or .git cannot be renamed away, changed and put back), then
//     Hidden denied;
//  4. network: with Network, everything but the host daemons' unix sockets
//     outside the writable paths (mDNSResponder excepted, for DNS); without,
//     the host's loopback only — Seatbelt has no network namespace, so
//     "localhost" is 127.0.0.1 and ::1 of the whole machine, shared with every
//     local service, not a loopback of the session's own — and unix sockets
//     inside the writable paths; with EgressPort (allow-listed egress, the
//     proxy listening on the host's loopback), only that port and HostPorts
//     of the loopback, and no DNS.
type Seatbelt struct {
	Profile string
	Params  []Param // in the order the profile first names them
}

// Param is one -D definition of sandbox-exec.
type Param struct{ Key, Value string }

// Command is argv run under sandbox-exec with this profile.
func (s Seatbelt) Command(argv []string) []string {
	cmd := make([]string, 0, 4+len(s.Params)+len(argv))
	cmd = append(cmd, Exec, "-p", s.Profile)
	for _, p := range s.Params {
		cmd = append(cmd, "-D"+p.Key+"="+p.Value)
	}
	cmd = append(cmd, "--") // argv[0] may start with "-"
	return append(cmd, argv...)
}

// Policy is what a session allows: the paths of each kind, and the network.
type Policy struct {
	TempDir   string   // writable: the commands' TMPDIR
	Writable  []string // writable, with what lies below
	Protected []string // read-only, though inside a writable path
	Hidden    []string // unreadable
	Visible   []string // readable again, though inside a hidden path
	Network   bool     // the host's network, not its loopback only
	// EgressPort, without Network, is the egress proxy's port on the host's
	// loopback: then only it and HostPorts may be reached there, and no DNS.
	EgressPort int
	HostPorts  []int
}

// Build builds p's Seatbelt profile. Paths must be absolute and
// free of NUL, carriage return and newline; they are used as given, so the
// caller resolves symlinks first (Seatbelt sees /private/tmp, not /tmp: see
// RealPaths).
func Build(spec Policy) (Seatbelt, error) {
	var b sbpl
	lists := []struct {
		name  string
		paths []string
		out   *[]string
	}{
		{"writable", spec.Writable, &b.writable},
		{"protected", spec.Protected, &b.protected},
		{"hidden", spec.Hidden, &b.hidden},
		{"visible", spec.Visible, &b.visible},
	}
	for _, l := range lists {
		for _, p := range l.paths {
			clean, err := seatbeltPath(p)
			if err != nil {
				return Seatbelt{}, fmt.Errorf("seatbelt: %s path %w", l.name, err)
			}
			*l.out = append(*l.out, clean)
		}
	}
	if spec.TempDir != "" {
		clean, err := seatbeltPath(spec.TempDir)
		if err != nil {
			return Seatbelt{}, fmt.Errorf("seatbelt: temp dir %w", err)
		}
		b.writable = append([]string{clean}, b.writable...)
	}
	b.build(spec.Network, loopbackPorts(spec))
	return Seatbelt{Profile: b.text.String(), Params: b.params}, nil
}

// seatbeltPath checks and cleans one path.
func seatbeltPath(p string) (string, error) {
	switch {
	case p == "":
		return "", fmt.Errorf("is empty")
	case strings.ContainsAny(p, "\x00\r\n"):
		// A NUL cannot pass through argv; a line break is refused so that no
		// profile, log line or error message ever shows a path split in two.
		return "", fmt.Errorf("%q contains a NUL or line break, which Seatbelt paths cannot", p)
	case !strings.HasPrefix(p, "/"):
		return "", fmt.Errorf("%q is not absolute", p)
	}
	return path.Clean(p), nil
}

// sbpl writes a profile.
type sbpl struct {
	writable, protected, hidden, visible []string
	text                                 strings.Builder
	params                               []Param
	keys                                 map[string]string // path → its parameter, per kind prefix
}

// param returns the parameter naming p, defining it on first use. Keys are a
// kind letter and a number: they never contain "=", which ends a -D key.
func (b *sbpl) param(kind, p string) string {
	if b.keys == nil {
		b.keys = map[string]string{}
	}
	if k, ok := b.keys[kind+"\x00"+p]; ok {
		return k
	}
	k := fmt.Sprintf("%s%d", kind, len(b.keys))
	b.keys[kind+"\x00"+p] = k
	b.params = append(b.params, Param{k, p})
	return k
}

func (b *sbpl) line(s string) { b.text.WriteString(s + "\n") }

// filters is one filter per path and form: (FORM (param "K")).
func (b *sbpl) filters(kind string, paths []string, forms ...string) []string {
	var out []string
	for _, p := range paths {
		k := b.param(kind, p)
		for _, f := range forms {
			out = append(out, fmt.Sprintf("(%s (param %q))", f, k))
		}
	}
	return out
}

// rule writes (ACTION OPS FILTERS…) when there are filters: a rule without
// any would apply to everything.
func (b *sbpl) rule(action, ops string, filters []string) {
	if len(filters) > 0 {
		b.line("(" + action + " " + ops + " " + strings.Join(filters, " ") + ")")
	}
}

// loopbackPorts are the host loopback ports commands may connect to with
// allow-listed egress: the proxy's, then the forwarded ones; nil without it.
func loopbackPorts(spec Policy) []int {
	if spec.Network || spec.EgressPort == 0 {
		return nil
	}
	return append([]int{spec.EgressPort}, spec.HostPorts...)
}

// build writes the profile; ports, for allow-listed egress, are the only
// loopback ports commands may connect to (nil: all of them).
func (b *sbpl) build(network bool, ports []int) {
	b.line("(version 1)")
	b.line("; shellgate: generated; the last matching rule wins")
	b.line("(deny default)")

	b.line("; processes")
	b.line("(allow process-exec process-fork)")
	b.line("(allow signal (target same-sandbox))")
	b.line("(allow process-info* (target same-sandbox))")
	b.line("(allow sysctl-read)")
	b.line(`(deny sysctl-read (sysctl-name-prefix "kern.procargs"))`)
	b.line("(allow user-preference-read mach-host* ipc-posix-sem ipc-posix-shm)")
	b.line(`(allow iokit-open (iokit-registry-entry-class "RootDomainUserClient"))`)
	b.line(`(allow mach-lookup (global-name "com.apple.system.opendirectoryd.libinfo") (global-name "com.apple.system.opendirectoryd.membership") (global-name "com.apple.system.notification_center") (global-name "com.apple.system.logger") (global-name "com.apple.PowerManagement.control"))`)
	b.line("(allow pseudo-tty)")
	b.line(`(allow file-read* file-write* file-ioctl (literal "/dev/ptmx") (require-all (regex #"^/dev/ttys[0-9]+$") (extension "com.apple.sandbox.pty")))`)

	b.line("; reads: everything but the hidden paths")
	b.line("(allow file-read*)")
	b.rule("deny", "file-read*", b.filters("H", b.hidden, "literal", "subpath"))
	b.rule("allow", "file-read*", b.filters("V", b.visible, "subpath"))

	b.line("; writes: the writable paths, then the protected ones and what leads to them, then the hidden ones")
	b.rule("allow", "file-write*", b.filters("W", b.writable, "subpath"))
	b.line(`(allow file-read-data file-write-data file-ioctl (literal "/dev/null") (literal "/dev/zero") (literal "/dev/tty") (subpath "/dev/fd"))`)
	b.rule("deny", "file-write*", b.filters("P", b.protected, "literal", "subpath"))
	b.rule("deny", "file-write*", b.filters("A", protectedAncestors(b.writable, b.protected), "literal"))
	b.rule("deny", "file-write*", b.filters("H", b.hidden, "literal", "subpath"))

	sockets := b.filters("W", b.writable, "subpath")
	if network {
		b.line("; network: on, but not the host daemons' unix sockets")
		b.line("(allow system-socket network*)")
		b.line("(deny network-outbound (remote unix-socket))")
		b.line(`(allow network-outbound (remote unix-socket (path-literal "/private/var/run/mDNSResponder")))`)
		b.line(`(allow mach-lookup (global-name "com.apple.SystemConfiguration.DNSConfiguration") (global-name "com.apple.SystemConfiguration.configd") (global-name "com.apple.dnssd.service") (global-name "com.apple.networkd") (global-name "com.apple.trustd.agent") (global-name "com.apple.SecurityServer") (global-name "com.apple.ocspd") (global-name "com.apple.bsd.dirhelper"))`)
	} else {
		outbound := []string{`(remote ip "localhost:*")`}
		if len(ports) > 0 {
			b.line("; network: allow-listed: the egress proxy's port and the forwarded ones on the host's loopback; no DNS")
			outbound = nil
			for _, p := range ports {
				outbound = append(outbound, fmt.Sprintf(`(remote ip "localhost:%d")`, p))
			}
		} else {
			b.line("; network: off but the host's loopback")
		}
		b.line("(allow system-socket)")
		b.line(`(allow network-bind network-inbound (local ip "localhost:*"))`)
		b.rule("allow", "network-outbound", outbound)
		b.rule("allow", "network-bind", unixSockets("local", sockets))
	}
	b.rule("allow", "network-outbound", unixSockets("remote", sockets))
}

// unixSockets wraps each path filter as the unix-socket filter of one end.
func unixSockets(end string, filters []string) []string {
	out := make([]string, len(filters))
	for i, f := range filters {
		out[i] = "(" + end + " unix-socket " + f + ")"
	}
	return out
}

// protectedAncestors are the directories from each protected path's parent up
// to the writable path it lies in, that path included: renaming any of them
// away would move the protected path out from under its rule.
func protectedAncestors(writable, protected []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range protected {
		for _, w := range writable {
			if !within(p, w) || p == w {
				continue
			}
			for d := path.Dir(p); ; d = path.Dir(d) {
				if !seen[d] {
					seen[d] = true
					out = append(out, d)
				}
				if d == w || d == "/" {
					break
				}
			}
		}
	}
	return out
}

// within reports whether p is dir or lies under it.
func within(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}

// RealPaths returns p with each path also as the kernel names it, where that
// differs: Seatbelt compares resolved paths (/private/tmp for /tmp, /private/var
// for /var). A path that does not exist yet is resolved through its nearest
// existing parent. eval is filepath.EvalSymlinks but for tests.
func RealPaths(spec Policy, eval func(string) (string, error)) Policy {
	both := func(paths []string) []string {
		out := make([]string, 0, len(paths))
		for _, p := range paths {
			out = append(out, p)
			if r := realPath(p, eval); r != p {
				out = append(out, r)
			}
		}
		return out
	}
	spec.Writable, spec.Protected = both(spec.Writable), both(spec.Protected)
	spec.Hidden, spec.Visible = both(spec.Hidden), both(spec.Visible)
	if spec.TempDir != "" {
		// One temp dir: the real one is what the commands' TMPDIR leads to.
		spec.TempDir = realPath(spec.TempDir, eval)
	}
	return spec
}

func realPath(p string, eval func(string) (string, error)) string {
	if !strings.HasPrefix(p, "/") {
		return p
	}
	p = path.Clean(p)
	rest := ""
	for d := p; ; d = path.Dir(d) {
		if r, err := eval(d); err == nil {
			return path.Join(r, rest)
		}
		if d == "/" {
			return p
		}
		rest = path.Join(path.Base(d), rest)
	}
}
