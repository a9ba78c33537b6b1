package seatbelt

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// sexp is a parsed SBPL form: an atom (string literal, regex or symbol) or a list.
type sexp struct {
	atom string // the literal's contents, or the symbol; "" for a list
	str  bool   // atom is a string literal
	list []sexp
}

// parseSBPL parses a profile as SBPL's reader would: balanced parentheses,
// comments to the end of the line, string literals "…" with backslash escapes,
// regex literals #"…". It fails on anything else, so a stray quote or
// parenthesis in the output shows.
func parseSBPL(src string) ([]sexp, error) {
	var stack [][]sexp
	var top []sexp
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == ';':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == ' ' || c == '\n' || c == '\t':
			i++
		case c == '(':
			stack = append(stack, top)
			top = nil
			i++
		case c == ')':
			if len(stack) == 0 {
				return nil, fmt.Errorf("offset %d: unbalanced )", i)
			}
			done := sexp{list: top}
			top = append(stack[len(stack)-1], done)
			stack = stack[:len(stack)-1]
			i++
		case c == '"' || c == '#' && i+1 < len(src) && src[i+1] == '"':
			if c == '#' {
				i++
			}
			var b strings.Builder
			j := i + 1
			for ; j < len(src) && src[j] != '"'; j++ {
				if src[j] == '\\' {
					j++
				}
				if src[j] == '\n' {
					return nil, fmt.Errorf("offset %d: line break in a string", j)
				}
				b.WriteByte(src[j])
			}
			if j >= len(src) {
				return nil, fmt.Errorf("offset %d: unterminated string", i)
			}
			top = append(top, sexp{atom: b.String(), str: true})
			i = j + 1
		default:
			j := i
			for j < len(src) && !strings.ContainsRune(" \n\t()\";", rune(src[j])) {
				j++
			}
			top = append(top, sexp{atom: src[i:j]})
			i = j
		}
	}
	if len(stack) != 0 {
		return nil, errors.New("unbalanced (")
	}
	return top, nil
}

// String prints a form back, one space between items.
func (s sexp) String() string {
	if s.list == nil {
		if s.str {
			return fmt.Sprintf("%q", s.atom)
		}
		return s.atom
	}
	parts := make([]string, len(s.list))
	for i, e := range s.list {
		parts[i] = e.String()
	}
	return "(" + strings.Join(parts, " ") + ")"
}

// profileRules parses a profile into its top-level forms, printed back with the
// parameters' values in place of (param "K"), so tests read like the
// profile sandbox-exec applies.
func profileRules(t *testing.T, sb Seatbelt) []string {
	t.Helper()
	forms, err := parseSBPL(sb.Profile)
	if err != nil {
		t.Fatalf("profile does not parse: %v\n%s", err, sb.Profile)
	}
	out := make([]string, len(forms))
	for i, f := range forms {
		s := f.String()
		for _, p := range sb.Params {
			s = strings.ReplaceAll(s, fmt.Sprintf("(param %q)", p.Key), fmt.Sprintf("%q", p.Value))
		}
		out[i] = s
	}
	return out
}

// ruleIndex is the position of the first rule containing all of subs, or -1.
func ruleIndex(rs []string, subs ...string) int {
	for i, r := range rs {
		ok := true
		for _, s := range subs {
			ok = ok && strings.Contains(r, s)
		}
		if ok {
			return i
		}
	}
	return -1
}

var seatbeltProject = Policy{
	Writable:  []string{"/Users/u/proj", "/Users/u/Library/Caches/go-build"},
	Protected: []string{"/Users/u/proj/.git/hooks", "/Users/u/proj/.git/config", "/Users/u/proj/.vscode"},
	Hidden:    []string{"/Users/u/.ssh", "/Users/u/.aws"},
	Visible:   []string{"/Users/u/.ssh/known_hosts"},
	TempDir:   "/private/var/folders/x/T/shellgate-tmp-1",
}

func TestSeatbeltRulesAndOrder(t *testing.T) {
	sb, err := Build(seatbeltProject)
	if err != nil {
		t.Fatal(err)
	}
	rs := profileRules(t, sb)
	if rs[0] != "(version 1)" || rs[1] != "(deny default)" {
		t.Fatalf("profile must start (version 1) (deny default), got %q", rs[:2])
	}
	// Each rule must be there, and after the ones it overrides: the last
	// matching rule wins.
	order := [][]string{
		{"(allow file-read*)"},
		{"(deny file-read*", `(subpath "/Users/u/.ssh")`, `(literal "/Users/u/.aws")`},
		{"(allow file-read*", `(subpath "/Users/u/.ssh/known_hosts")`},
		{"(allow file-write*", `(subpath "/private/var/folders/x/T/shellgate-tmp-1")`, `(subpath "/Users/u/proj")`, `(subpath "/Users/u/Library/Caches/go-build")`},
		{"(deny file-write*", `(subpath "/Users/u/proj/.git/hooks")`, `(literal "/Users/u/proj/.git/config")`, `(subpath "/Users/u/proj/.vscode")`},
		{"(deny file-write*", `(literal "/Users/u/proj/.git")`, `(literal "/Users/u/proj")`},
		{"(deny file-write*", `(subpath "/Users/u/.ssh")`},
		{`(allow network-outbound (remote ip "localhost:*"))`},
	}
	last := -1
	for _, want := range order {
		i := ruleIndex(rs, want...)
		if i < 0 {
			t.Fatalf("no rule with %q in\n%s", want, strings.Join(rs, "\n"))
		}
		if i <= last {
			t.Errorf("rule %q at %d must come after the rule at %d:\n%s", want, i, last, strings.Join(rs, "\n"))
		}
		last = i
	}
	// The cache is not an ancestor of anything protected: it can be renamed.
	if i := ruleIndex(rs, "(deny file-write*", `(literal "/Users/u/Library/Caches/go-build")`); i >= 0 {
		t.Errorf("the cache is locked: %s", rs[i])
	}
	// Nothing opens the network but the loopback.
	for _, r := range rs {
		if strings.Contains(r, "network") && strings.HasPrefix(r, "(allow") && !strings.Contains(r, "localhost") && !strings.Contains(r, "unix-socket") {
			t.Errorf("network off, yet %s", r)
		}
	}
	if i := ruleIndex(rs, "(allow network-outbound (remote unix-socket", `(subpath "/Users/u/proj")`); i < 0 {
		t.Errorf("unix sockets in the project are not reachable:\n%s", strings.Join(rs, "\n"))
	}
}

func TestSeatbeltNetworkOn(t *testing.T) {
	spec := seatbeltProject
	spec.Network = true
	sb, err := Build(spec)
	if err != nil {
		t.Fatal(err)
	}
	rs := profileRules(t, sb)
	on := ruleIndex(rs, "(allow system-socket network*)")
	deny := ruleIndex(rs, "(deny network-outbound (remote unix-socket))")
	dns := ruleIndex(rs, `"/private/var/run/mDNSResponder"`)
	own := ruleIndex(rs, "(allow network-outbound (remote unix-socket", `(subpath "/Users/u/proj")`)
	if on < 0 || deny < on || dns < deny || own < deny {
		t.Errorf("want network on, then host unix sockets off, then DNS and the seatbeltProject's sockets; got %d %d %d %d:\n%s", on, deny, dns, own, strings.Join(rs, "\n"))
	}
	if ruleIndex(rs, `"localhost:*"`) >= 0 {
		t.Errorf("network on needs no loopback rule")
	}
}

// Allow-listed egress: the loopback narrows to the proxy's port and the
// forwarded ones, and there is no DNS; the network on ignores the port.
func TestSeatbeltEgress(t *testing.T) {
	spec := seatbeltProject
	spec.EgressPort, spec.HostPorts = 3128, []int{5432}
	sb, err := Build(spec)
	if err != nil {
		t.Fatal(err)
	}
	rs := profileRules(t, sb)
	if i := ruleIndex(rs, `(allow network-outbound (remote ip "localhost:3128") (remote ip "localhost:5432"))`); i < 0 {
		t.Errorf("no rule for the proxy's and the forwarded port:\n%s", strings.Join(rs, "\n"))
	}
	for _, r := range rs {
		if strings.Contains(r, "network-outbound") && strings.Contains(r, "localhost:*") ||
			strings.Contains(r, "mDNSResponder") || strings.Contains(r, "DNSConfiguration") || strings.Contains(r, "network*") {
			t.Errorf("allow-listed egress, yet %s", r)
		}
	}
	spec.Network = true
	if sb, _ := Build(spec); strings.Contains(sb.Profile, "localhost:3128") {
		t.Errorf("network on, yet a rule for the proxy's port:\n%s", sb.Profile)
	}
}

func TestSeatbeltReadOnly(t *testing.T) {
	sb, err := Build(Policy{TempDir: "/private/tmp/t", Hidden: []string{"/h"}})
	if err != nil {
		t.Fatal(err)
	}
	rs := profileRules(t, sb)
	var writes []string
	for _, r := range rs {
		if strings.HasPrefix(r, "(allow") && strings.Contains(r, "file-write") {
			writes = append(writes, r)
		}
	}
	want := []string{
		`(allow file-read* file-write* file-ioctl (literal "/dev/ptmx") (require-all (regex "^/dev/ttys[0-9]+$") (extension "com.apple.sandbox.pty")))`,
		`(allow file-write* (subpath "/private/tmp/t"))`,
		`(allow file-read-data file-write-data file-ioctl (literal "/dev/null") (literal "/dev/zero") (literal "/dev/tty") (subpath "/dev/fd"))`,
	}
	if !slices.Equal(writes, want) {
		t.Errorf("read-only profile writes:\n%s\nwant\n%s", strings.Join(writes, "\n"), strings.Join(want, "\n"))
	}
}

// A path is data, never profile text: hostile names give the same profile as
// plain ones, and reach sandbox-exec as they are.
func TestSeatbeltHostilePaths(t *testing.T) {
	hostile := []string{
		`/p/a"b`,
		`/p/x")) (allow default) ("`,
		`/p/back\slash\"`,
		`/p/(paren`,
		`/p/close)`,
		`/p/;comment`,
		`/p/#"regex"`,
		`/p/-Dinjected=1`,
		`/p/ünïcode ☃`,
		`/p/a=b`,
	}
	plain := make([]string, len(hostile))
	for i := range hostile {
		plain[i] = fmt.Sprintf("/plain/%d", i)
	}
	mk := func(paths []string) Policy {
		return Policy{Writable: paths, Protected: paths, Hidden: paths, Visible: paths, TempDir: paths[0]}
	}
	bad, err := Build(mk(hostile))
	if err != nil {
		t.Fatal(err)
	}
	good, err := Build(mk(plain))
	if err != nil {
		t.Fatal(err)
	}
	if bad.Profile != good.Profile {
		t.Fatalf("a path changed the profile's text:\n%s", bad.Profile)
	}
	profileRules(t, bad) // parses
	var values []string
	for _, p := range bad.Params {
		if strings.ContainsAny(p.Key, "=\"() \n") {
			t.Errorf("parameter key %q", p.Key)
		}
		values = append(values, p.Value)
	}
	for _, h := range hostile {
		if !slices.Contains(values, h) {
			t.Errorf("%q is not passed as it is; params %q", h, values)
		}
	}
	cmd := bad.Command([]string{"-bash", "-c", "true"})
	if cmd[0] != "/usr/bin/sandbox-exec" || cmd[1] != "-p" || cmd[2] != bad.Profile {
		t.Errorf("command starts %q", cmd[:3])
	}
	sep := slices.Index(cmd, "--")
	if sep < 0 || !slices.Equal(cmd[sep+1:], []string{"-bash", "-c", "true"}) {
		t.Errorf("argv not after --: %q", cmd)
	}
	defs := cmd[3:sep]
	if len(defs) != len(bad.Params) {
		t.Fatalf("%d definitions for %d params", len(defs), len(bad.Params))
	}
	for i, p := range bad.Params {
		// sandbox-exec splits a definition at its first "=".
		key, value, _ := strings.Cut(strings.TrimPrefix(defs[i], "-D"), "=")
		if key != p.Key || value != p.Value {
			t.Errorf("definition %q, want key %q value %q", defs[i], p.Key, p.Value)
		}
	}
}

func TestSeatbeltRejectsBadPaths(t *testing.T) {
	for _, tc := range []struct {
		spec Policy
		want string
	}{
		{Policy{Writable: []string{"/a\nb"}}, `writable path "/a\nb" contains a NUL or line break`},
		{Policy{Hidden: []string{"/a\rb"}}, `hidden path "/a\rb" contains a NUL or line break`},
		{Policy{Protected: []string{"/a\x00b"}}, `protected path "/a\x00b" contains a NUL or line break`},
		{Policy{Visible: []string{"rel/dir"}}, `visible path "rel/dir" is not absolute`},
		{Policy{Writable: []string{""}}, "writable path is empty"},
		{Policy{TempDir: "/t\n"}, "temp dir"},
	} {
		_, err := Build(tc.spec)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc.spec, err, tc.want)
		}
	}
}

func TestProtectedAncestors(t *testing.T) {
	for _, tc := range []struct {
		writable, protected, want []string
	}{
		{[]string{"/r"}, []string{"/r/.git/hooks", "/r/.git/config"}, []string{"/r/.git", "/r"}},
		{[]string{"/r"}, []string{"/r/.envrc"}, []string{"/r"}},
		{[]string{"/r", "/c"}, []string{"/other/x"}, nil},
		{[]string{"/r"}, []string{"/r"}, nil},                // the root itself is protected: nothing above it
		{[]string{"/r/sub"}, []string{"/r/.git/hooks"}, nil}, // not in a writable path: already read-only
		{[]string{"/"}, []string{"/a/b"}, []string{"/a", "/"}},
	} {
		if got := protectedAncestors(tc.writable, tc.protected); !slices.Equal(got, tc.want) {
			t.Errorf("protectedAncestors(%q, %q) = %q, want %q", tc.writable, tc.protected, got, tc.want)
		}
	}
}

func TestRealPaths(t *testing.T) {
	links := map[string]string{"/tmp": "/private/tmp", "/var": "/private/var"}
	eval := func(p string) (string, error) {
		for from, to := range links {
			if p == from {
				return to, nil
			}
			if strings.HasPrefix(p, from+"/") {
				if strings.Contains(p, "missing") {
					return "", errors.New("no such file")
				}
				return to + p[len(from):], nil
			}
		}
		if strings.Contains(p, "missing") {
			return "", errors.New("no such file")
		}
		return p, nil
	}
	got := RealPaths(Policy{
		Writable: []string{"/Users/u/p", "/tmp/w"},
		Hidden:   []string{"/var/missing/deeper"},
		TempDir:  "/var/folders/T/x",
	}, eval)
	if want := []string{"/Users/u/p", "/tmp/w", "/private/tmp/w"}; !slices.Equal(got.Writable, want) {
		t.Errorf("writable %q, want %q", got.Writable, want)
	}
	if want := []string{"/var/missing/deeper", "/private/var/missing/deeper"}; !slices.Equal(got.Hidden, want) {
		t.Errorf("hidden %q, want %q", got.Hidden, want)
	}
	if got.TempDir != "/private/var/folders/T/x" {
		t.Errorf("temp dir %q", got.TempDir)
	}
}
