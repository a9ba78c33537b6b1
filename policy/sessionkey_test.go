package policy_test

import (
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
// and no other: it is the exact command (white space in a word, on which
// patterns split, matched by "?"). None is named where no pattern can say it
// (an empty word) or where an allow pattern does not lift the ask (the
// user's own ask rules).
func TestAllowPatternLetsTheCommandRun(t *testing.T) {
	l := newLab(t)
	for _, c := range []struct {
		cmd, pattern string
		stillAsked   []string
	}{
		{`python3 -c "print(6*7)"`, `python3 -c print(6\*7)`, []string{`python3 -c "print(7)"`, `python3 -c "print(6*7)" x`}},
		{"sed '1e date' a.txt", "sed 1e?date a.txt", []string{"sed '1e id' a.txt"}},
		{"python3 -c \"open('asked.txt', 'w')\"", "python3 -c open('asked.txt',?'w')", []string{"python3 -c \"open('other.txt', 'w')\""}},
		{"python3 -c ''", "", nil},
		{"sed 1e[x] a.txt", `sed 1e\[x] a.txt`, []string{"sed 1ex a.txt"}},
		{"docker run alpine true", "docker run alpine true", []string{"docker run --privileged alpine true", "docker run alpine sh"}},
		{"docker run --privileged -v /:/host alpine sh", "docker run --privileged -v /:/host alpine sh", []string{"docker run -v /:/host --privileged --pid=host alpine sh"}},
		{"python3 -c 'import os\nprint(1)'", "python3 -c import?os?print(1)", []string{"python3 -c 'import os\nprint(2)'"}},
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
