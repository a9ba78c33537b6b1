package egress

import (
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"
)

func TestAllowList(t *testing.T) {
	a, err := ParseAllow([]string{"Registry.NPMJS.org.", "*.Example.com", "10.1.2.3", "192.168.7.0/24", "[::1]"})
	if err != nil {
		t.Fatal(err)
	}
	names := []struct {
		host string
		want bool
	}{
		{"registry.npmjs.org", true},
		{"REGISTRY.npmjs.org.", true},
		{"x.registry.npmjs.org", false}, // exact means exact
		{"npmjs.org", false},
		{"evilregistry.npmjs.org", false},
		{"registry.npmjs.org.evil.test", false},
		{"a.example.com", true},
		{"a.b.EXAMPLE.com.", true},
		{"example.com", false}, // a wildcard is the subdomains
		{"badexample.com", false},
		{"", false},
		{"10.1.2.3", false}, // addresses are not names
	}
	for _, tc := range names {
		if got := a.AllowsName(tc.host); got != tc.want {
			t.Errorf("AllowsName(%q) = %v, want %v", tc.host, got, tc.want)
		}
	}
	addrs := []struct {
		ip   string
		want bool
	}{
		{"10.1.2.3", true},
		{"::ffff:10.1.2.3", true},
		{"10.1.2.4", false},
		{"192.168.7.200", true},
		{"192.168.8.1", false},
		{"::1", true},
		{"127.0.0.1", false},
	}
	for _, tc := range addrs {
		if got := a.AllowsAddr(netip.MustParseAddr(tc.ip)); got != tc.want {
			t.Errorf("AllowsAddr(%s) = %v, want %v", tc.ip, got, tc.want)
		}
	}
	want := []string{"registry.npmjs.org", "*.example.com", "10.1.2.3", "192.168.7.0/24", "::1"}
	if got := a.Entries(); !slices.Equal(got, want) {
		t.Errorf("Entries() = %q, want %q", got, want)
	}
	var none *AllowList
	if none.AllowsName("a.test") || none.AllowsAddr(netip.MustParseAddr("1.1.1.1")) {
		t.Error("a nil list allows something")
	}
}

func TestParseAllowRejects(t *testing.T) {
	for _, e := range []string{"*", "*.", "a.*.com", "exa mple.com", "https://registry.npmjs.org", "host:443", "a..b", "*example.com",
		"127.1", "2130706433", "0x7f000001", "*.10"} { // addresses written as names: no name is one
		if _, err := ParseAllow([]string{e}); err == nil {
			t.Errorf("ParseAllow(%q) accepted it", e)
		}
	}
	// An empty entry is refused as such, not skipped: whoever wrote it meant a
	// domain, and would otherwise get none and no word.
	for _, e := range []string{"", " ", "\t\n"} {
		a, err := ParseAllow([]string{"example.com", e})
		if !errors.Is(err, ErrEmptyEntry) || a != nil {
			t.Errorf("ParseAllow(%q): %v; want ErrEmptyEntry", e, err)
		} else if !strings.Contains(err.Error(), "empty entry") {
			t.Errorf("ParseAllow(%q): %q does not say the entry is empty", e, err)
		}
	}
}

func TestLocal(t *testing.T) {
	for _, tc := range []struct {
		ip   string
		want bool
	}{
		{"127.0.0.1", true}, {"127.8.9.10", true}, {"::1", true},
		{"10.0.0.1", true}, {"172.16.5.5", true}, {"172.32.0.1", false},
		{"192.168.1.1", true}, {"169.254.169.254", true}, {"fe80::1", true},
		{"fd00::1", true}, {"0.0.0.0", true}, {"::", true}, {"224.0.0.1", true},
		{"ff02::1", true}, {"255.255.255.255", true}, {"100.64.0.1", true},
		{"::ffff:127.0.0.1", true}, {"::ffff:192.168.0.1", true},
		{"64:ff9b::a00:1", true}, // NAT64 of 10.0.0.1
		{"64:ff9b::808:808", false},
		{"8.8.8.8", false}, {"203.0.113.80", false}, {"2606:4700::1111", false},
	} {
		if got := Local(netip.MustParseAddr(tc.ip)); got != tc.want {
			t.Errorf("Local(%s) = %v, want %v", tc.ip, got, tc.want)
		}
	}
}
