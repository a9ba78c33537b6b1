package policy_test

import (
	"testing"

	"github.com/shellgate/shellgate/policy"
)

// Loopback is not egress when it is the session's own (the sandbox's network
// namespace): a dev server the agent started answers there.
// Every other way of reaching past it stays refused with the network off.
func TestLoopbackIsNotNetwork(t *testing.T) {
	e, err := policy.New(policy.Settings{PrivateLoopback: true})
	if err != nil {
		t.Fatal(err)
	}
	host, err := policy.New(policy.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	// Without a loopback of its own, the host's may lead anywhere.
	if v := host.Check("curl localhost:3000", policy.Env{Root: "/work/p", Home: "/home/u"}); v.Decision != policy.Deny || v.Rule != policy.RuleNetwork {
		t.Errorf("curl localhost:3000 without a private loopback: %s %s", v.Decision, v.Rule)
	}
	env := policy.Env{Root: "/work/p", Home: "/home/u"}
	for _, c := range []struct {
		cmd   string
		allow bool
	}{
		{"curl localhost:3000", true},
		{"curl -sS http://127.0.0.1:8080/api -H 'Accept: application/json'", true},
		{"curl -s 'http://[::1]:9000/health'", true},
		{"wget -qO- http://localhost:5173/", true},
		{"curl http://app.localhost:3000/", true},
		{"curl -X POST -d 'a=1' http://127.0.0.1:3000/x", true},
		{"curl http://example.com", false},
		{"curl localhost:3000 http://example.com", false},
		{"curl -x http://proxy:3128 http://localhost/", false},
		{"curl --proxy=http://p:1 http://localhost/", false},
		{"curl -sSL http://localhost/", false}, // a redirect could lead out
		{"curl --connect-to localhost:80:evil.com:80 http://localhost/", false},
		{"curl --resolve localhost:80:1.2.3.4 http://localhost/", false},
		{"curl -K cfg http://localhost/", false},
		{"curl http://localhost.evil.com/", false},
		{"curl http://127.0.0.1.nip.io/", false},
		{"curl http://user@evil.com/", false},
		{"curl http://localhost@evil.com/", false},
		{"curl $URL", false},
		{"curl http://2130706433/", false},
		{"wget -e use_proxy=on http://localhost/", false},
		{"wget -i urls.txt", false},
		{"nc localhost 3000", false},
		{"curl --url=http://example.com localhost", false},
		{"curl --url http://example.com localhost", false},
		{`curl 'http://example.com\@127.0.0.1/'`, false},
		{"curl --url=http://localhost:3000/", true},
		{"curl http://localhost/ intranet", false},
		{"curl -sS localhost:3000", true},
		{"curl -so page.html localhost:3000", true},
	} {
		v := e.Check(c.cmd, env)
		if got := v.Decision == policy.Allow; got != c.allow {
			t.Errorf("%s: %s (%s), want allow=%v", c.cmd, v.Decision, v.Reason, c.allow)
		}
	}
}
