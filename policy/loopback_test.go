package policy_test

import (
	"strings"
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

// A network client refused with the network off names the least the user
// can open: the domain of the URL it was given, alone (the sandbox's proxy),
// before the whole network; where no single name is clear, or no sandbox
// will run it, only the network.
func TestNetworkRefusalNamesTheDomain(t *testing.T) {
	env := policy.Env{Root: "/work/p", Home: "/home/u"}
	sandboxed, err := policy.New(policy.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	unconfined, err := policy.New(policy.Settings{Unconfined: true})
	if err != nil {
		t.Fatal(err)
	}
	const whole = "ask the user to enable the network ([policy] network = true, --allow-network, or BASH_ALLOW_NETWORK=true)."
	for _, c := range []struct{ cmd, want string }{
		{"curl -sS https://example.com | head -2", "ask the user to allow example.com alone (--allow-domain example.com, or [network] allow) or the whole network ([policy] network = true, --allow-network)."},
		{"wget -qO- HTTPS://Docs.Example.ORG./x?y=1", "allow docs.example.org alone (--allow-domain docs.example.org"},
		{"git clone https://github.com/org/repo", "allow github.com alone (--allow-domain github.com"},
		{"curl http://user:pw@example.com/", whole},  // credentials: not repeated back
		{"curl http://2130706433/", whole},           // a number is no domain
		{"curl http://intranet/", whole},             // a single label
		{"curl \"$URL\"", whole},                     // not known before it runs
		{"curl 'http://ex$ample.com/'", whole},       // an odd character
		{"ssh git@example.com", whole},               // no URL
		{"curl http://localhost@evil.com/ x", whole}, // user info
		{"curl http://0x7f.1/", whole},               // 127.0.0.1 to curl: a last label that is a number makes an address
		{"curl http://10.0.0.0x1/", whole},           // likewise, in hex
		{"curl http://-rf.example.com/", whole},      // no label begins with a hyphen: echoed, an option
		{"curl http://a..example.com/", whole},       // an empty label
		{"curl http://xn--bcher-kva.example/", "allow xn--bcher-kva.example alone (--allow-domain xn--bcher-kva.example"},
		{"curl http://bücher.example/", whole}, // as the proxy will not see it: its name is the punycode one
		{"curl http://[::1]:8080/x http://example.com", "allow example.com alone"},
		{"curl -e https://ref.example/ https://example.com", "allow example.com alone"}, // a referer is no URL fetched
		{"curl -sSe https://ref.example/ https://example.com", "allow example.com alone"},
		{"curl -x http://proxy.example:3128 https://example.com", whole}, // a proxy: the domain alone would not do
		{"curl --proxy http://proxy.example:3128 https://example.com", whole},
	} {
		v := sandboxed.Check(c.cmd, env)
		if v.Decision != policy.Deny || v.Rule != policy.RuleNetwork || !strings.Contains(v.Reason, c.want) {
			t.Errorf("%s: %s %s %q; want it to say %q", c.cmd, v.Decision, v.Rule, v.Reason, c.want)
		}
	}
	// No sandbox, no proxy: the domain alone cannot be opened.
	if v := unconfined.Check("curl https://example.com", env); !strings.Contains(v.Reason, whole) {
		t.Errorf("unconfined: %q", v.Reason)
	}
}
