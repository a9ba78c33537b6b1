package egress

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestRegistries(t *testing.T) {
	answers := map[string]string{
		"npm config get registry": "https://npm.mirror.example:8443/npm/\n",
		"go env GOPROXY GOSUMDB":  "https://goproxy.example,direct\nsum.golang.org\n",
		"python3 -m pip config list": "global.index-url='https://pypi.mirror.example/simple'\n" +
			"global.extra-index-url='https://a.example/simple https://b.example/simple'\n",
		"gem sources --list": "*** CURRENT SOURCES ***\n\nhttps://rubygems.org/\n",
	}
	run := func(_ context.Context, name string, args ...string) (string, error) {
		if out, ok := answers[strings.Join(append([]string{name}, args...), " ")]; ok {
			return out, nil
		}
		return "", errors.New("not installed")
	}
	got := map[string][]string{}
	empty := varTmp(t)
	for _, s := range Registries(context.Background(), Machine{Run: run, Dir: empty, Home: empty, Env: []string{}}) {
		got[s.Tool] = s.Hosts
	}
	want := map[string][]string{
		"npm": {"npm.mirror.example"},
		"go":  {"goproxy.example", "sum.golang.org"},
		"pip": {"pypi.mirror.example", "a.example", "b.example"},
		"gem": {"rubygems.org", "index.rubygems.org"},
	}
	if len(got) != len(want) {
		t.Errorf("tools %v, want %v", got, want)
	}
	for tool, hosts := range want {
		if !slices.Equal(got[tool], hosts) {
			t.Errorf("%s: %q, want %q", tool, got[tool], hosts)
		}
	}
}

func TestGoSumDBForms(t *testing.T) {
	for _, tc := range []struct {
		env  string
		want []string
	}{
		{"off\noff\n", nil},
		{"https://proxy.golang.org,direct\nsum.golang.org+033de0ae+Ac4zctda0e5eza+HJyk9SxEdh+s3Ux18htTTAD8OuAn8\n", []string{"proxy.golang.org", "sum.golang.org"}},
		{"https://a.example|https://b.example\ngosum.io+ce6e7565+AY5q https://sum.mirror.example/\n", []string{"a.example", "b.example", "sum.mirror.example"}},
	} {
		s := goSource(context.Background(), Machine{Run: func(context.Context, string, ...string) (string, error) { return tc.env, nil }})
		if !slices.Equal(s.Hosts, tc.want) {
			t.Errorf("%q: %q, want %q", tc.env, s.Hosts, tc.want)
		}
	}
}
