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
