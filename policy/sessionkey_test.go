package policy_test

import (
	"strings"
	"testing"

	"github.com/shellgate/shellgate/policy"
)

// "Allow for this session" is keyed on what was judged, options included: the
// prefix of a daemon's subcommand alone let an approved `docker run alpine true`
// approve `docker run --privileged -v /:/host …`.
func TestSessionKeyHasTheOptions(t *testing.T) {
	l := newLab(t)
	e, _ := policy.New(policy.Settings{})
	key := func(cmd string) string {
		v := e.Check(cmd, l.env())
		if v.Decision != policy.Ask {
			t.Fatalf("%s: %+v, want ask", cmd, v)
		}
		return v.SessionKey
	}
	plain := key("docker run alpine true")
	if plain != "docker run" {
		t.Errorf("docker run alpine true: key %q, want docker run", plain)
	}
	if k := key("docker run ubuntu echo hi"); k != plain {
		t.Errorf("another image, no options: key %q, want %q", k, plain)
	}
	seen := map[string]string{plain: "docker run alpine true"}
	for _, cmd := range []string{
		"docker run --privileged -v /:/host alpine sh",
		"docker run -v /:/host alpine sh",
		"docker run -v /tmp/x:/x alpine sh",
		"docker run --volume=/:/host alpine sh",
		"docker run --privileged alpine sh",
		"docker --host tcp://evil:2375 run alpine true",
	} {
		k := key(cmd)
		if other, ok := seen[k]; ok {
			t.Errorf("%q and %q share the session key %q", cmd, other, k)
		}
		seen[k] = cmd
		approved := func(s string) bool { return s == plain }
		if v := e.CheckApproved(cmd, l.env(), approved); v.Decision == policy.Allow {
			t.Errorf("approving %q for the session allowed %q", "docker run alpine true", cmd)
		}
	}
}

// The allow pattern an ask's hint names lets that command run without asking,
// and no other: it is the exact command, a word that a pattern would read
// otherwise (white space, a glob character, a quote, an empty word) quoted
// as a shell quotes it. None is named where an allow pattern does not lift
// the ask (the user's own ask rules), nor for a word that is not UTF-8.
func TestAllowPatternLetsTheCommandRun(t *testing.T) {
	l := newLab(t)
	for _, c := range []struct {
		cmd, pattern string
		stillAsked   []string
	}{
		{`python3 -c "print(6*7)"`, `python3 -c 'print(6*7)'`, []string{`python3 -c "print(7)"`, `python3 -c "print(6*7)" x`, `python3 -c "print(6x7)"`}},
		{"sed '1e date' a.txt", "sed '1e date' a.txt", []string{"sed '1e id' a.txt", "sed '1e-date' a.txt"}},
		{"python3 -c \"open('asked.txt', 'w')\"", `python3 -c "open('asked.txt', 'w')"`, []string{"python3 -c \"open('other.txt', 'w')\""}},
		{`python3 -c "print('\\\"')"`, `python3 -c "print('\\\"')"`, []string{`python3 -c "print('\\')"`}},
		{"python3 -c ''", "python3 -c ''", []string{"python3 -c 'x'"}},
		{"sed 1e[x] a.txt", `sed '1e[x]' a.txt`, []string{"sed 1ex a.txt"}},
		{"docker run alpine true", "docker run alpine true", []string{"docker run --privileged alpine true", "docker run alpine sh"}},
		{"docker run --privileged -v /:/host alpine sh", "docker run --privileged -v /:/host alpine sh", []string{"docker run -v /:/host --privileged --pid=host alpine sh"}},
		{"python3 -c 'import os\nprint(1)'", "python3 -c 'import os\nprint(1)'", []string{"python3 -c 'import os\nprint(2)'", "python3 -c 'import os print(1)'"}},
		// A byte that is not UTF-8: no configuration file can say it.
		{`docker run alpine $'\xff'`, "", nil},
	} {
		// Unconfined, as a hook decides: inline programs are asked about.
		e, _ := policy.New(policy.Settings{Unconfined: true})
		v := e.Check(c.cmd, l.env())
		if v.Decision != policy.Ask {
			t.Fatalf("%s: %s, want ask", c.cmd, v.Decision)
		}
		if v.AllowPattern != c.pattern {
			t.Errorf("%s: pattern %q, want %q", c.cmd, v.AllowPattern, c.pattern)
			continue
		}
		if c.pattern == "" {
			continue
		}
		allowed, err := policy.New(policy.Settings{Unconfined: true, Allow: []string{v.AllowPattern}})
		if err != nil {
			t.Fatalf("%s: the pattern %q does not compile: %v", c.cmd, v.AllowPattern, err)
		}
		if got := allowed.Check(c.cmd, l.env()); got.Decision != policy.Allow {
			t.Errorf("%s with allow = [%q]: %s (%s)", c.cmd, v.AllowPattern, got.Decision, got.Reason)
		}
		for _, other := range c.stillAsked {
			if got := allowed.Check(other, l.env()); got.Decision == policy.Allow {
				t.Errorf("allow = [%q] lets %s run too", v.AllowPattern, other)
			}
		}
	}
	e, _ := policy.New(policy.Settings{Ask: []string{"touch *"}})
	if v := e.Check("touch made.txt", l.env()); v.Decision != policy.Ask || v.AllowPattern != "" {
		t.Errorf("touch under the ask rule touch *: %s, pattern %q, want ask and none", v.Decision, v.AllowPattern)
	}
}

// A pattern's words are split as a shell splits them: quoted text is one
// literal word, white space and glob characters included; outside quotes a
// word is a glob, and a last bare "*" any further arguments.
func TestPatternQuoting(t *testing.T) {
	l := newLab(t)
	for _, c := range []struct {
		pattern     string
		match, miss []string
	}{
		{`echo 'a b'`, []string{`echo "a b"`, `echo a\ b`}, []string{"echo a b", "echo a-b", "echo 'a  b'"}},
		{`echo "it's *"`, []string{`echo "it's *"`}, []string{`echo "it's here"`}},
		{`echo '*'`, []string{`echo '*'`}, []string{"echo x", "echo"}},
		{`echo a\ b`, []string{`echo 'a b'`}, []string{"echo a b"}},
		{`echo ''`, []string{`echo ""`}, []string{"echo x"}},
		{`make * `, []string{"make", "make all test"}, []string{"cmake all"}},
		{`git  commit   -m  '*'`, []string{"git commit -m '*'"}, []string{"git commit -m wip"}},
		{`git commit -m wip*`, []string{"git commit -m wip2"}, []string{"git commit -m 'a wip'"}},
	} {
		e, err := policy.New(policy.Settings{Deny: []string{c.pattern}})
		if err != nil {
			t.Fatalf("%s: %v", c.pattern, err)
		}
		for _, cmd := range c.match {
			if v := e.Check(cmd, l.env()); v.Rule != policy.RuleUserDeny {
				t.Errorf("deny = [%q] does not match %s: %s", c.pattern, cmd, v.Decision)
			}
		}
		for _, cmd := range c.miss {
			if v := e.Check(cmd, l.env()); v.Rule == policy.RuleUserDeny {
				t.Errorf("deny = [%q] matches %s", c.pattern, cmd)
			}
		}
	}
	for _, bad := range []string{`echo 'a b`, `echo "a`, `echo a\`} {
		if _, err := policy.New(policy.Settings{Allow: []string{bad}}); err == nil || !strings.Contains(err.Error(), "malformed allow pattern") {
			t.Errorf("allow = [%q]: %v, want a malformed pattern", bad, err)
		}
	}
}
