package shellgate

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/shellgate/shellgate/internal/lane"
)

// The proxy variables replace those of shellgate's own environment (the
// host's proxy is shellgate's to use, not the commands'), and git's setting
// comes after the GIT_CONFIG_* entries already given.
func TestEgressEnv(t *testing.T) {
	g := &Gate{cfg: Config{Network: NetworkConfig{Allow: []string{"registry.npmjs.org"}}}, box: &box{wanted: true}}
	env := g.egressEnv([]string{"PATH=/usr/bin", "HTTPS_PROXY=http://corp:8080", "no_proxy=corp", "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=user.name", "GIT_CONFIG_VALUE_0=me"})
	get := func(k string) []string {
		var vs []string
		for _, kv := range env {
			if v, ok := strings.CutPrefix(kv, k+"="); ok {
				vs = append(vs, v)
			}
		}
		return vs
	}
	for k, want := range map[string]string{
		"PATH": "/usr/bin", "HTTPS_PROXY": "http://127.0.0.1:3128", "https_proxy": "http://127.0.0.1:3128",
		"HTTP_PROXY": "http://127.0.0.1:3128", "ALL_PROXY": "socks5h://127.0.0.1:3128", "no_proxy": "localhost,127.0.0.1,::1",
		"npm_config_https_proxy": "http://127.0.0.1:3128", "PIP_PROXY": "http://127.0.0.1:3128", "CARGO_HTTP_PROXY": "http://127.0.0.1:3128",
		"GIT_CONFIG_COUNT": "2", "GIT_CONFIG_KEY_0": "user.name", "GIT_CONFIG_KEY_1": "http.proxy", "GIT_CONFIG_VALUE_1": "http://127.0.0.1:3128",
	} {
		if got := get(k); !slices.Equal(got, []string{want}) {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if len(get("GOPROXY")) != 0 {
		t.Error("GOPROXY set")
	}

	g.cfg.Sandbox.HostPorts = []int{3128, 3129}
	if got := g.egressEnv(nil); !slices.Contains(got, "HTTPS_PROXY=http://127.0.0.1:3130") {
		t.Errorf("with host ports 3128 and 3129: %q", got)
	}
	g.cfg.Policy.Network = true
	if got := g.egressEnv([]string{"HTTPS_PROXY=http://corp:8080"}); !slices.Equal(got, []string{"HTTPS_PROXY=http://corp:8080"}) {
		t.Errorf("with the network on: %q", got)
	}
}

// Without the proxy in the session (here: the allow-list could not be made),
// the policy does not leave the network to it: curl is refused as with the
// network off.
func TestEgressNotHeldJudgesStrictly(t *testing.T) {
	lane.Live(t)
	g, err := New(Config{Root: t.TempDir(), SpillDir: t.TempDir(), Network: NetworkConfig{Allow: []string{"x.example"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	g.egress.once.Do(func() { g.egress.err = errors.New("no list") })
	env := g.Run(context.Background(), Request{Command: "curl -sS https://x.example/"})
	if env.Error == nil || env.Error.Rule != "network" {
		t.Errorf("curl without the proxy: %s %+v\n%s", env.Status, env.Error, env.Text)
	}
	if sb, ok := env.Context.Sandbox.(map[string]any); ok && sb["egress"] != nil {
		t.Errorf("context.sandbox has an egress port: %v", sb)
	}
}
