package home

import "testing"

// Credentials go, whatever the file's syntax; registries, mirrors and
// identities stay.
func TestScrub(t *testing.T) {
	for _, c := range []struct{ in, out string }{
		{"//registry.npmjs.org/:_authToken=abc\n", ""},
		{"_auth = dXNlcjpwYXNz\nalways-auth=true\n", ""},
		{"index-url = https://user:pw@pypi.example/simple\n", "index-url = https://pypi.example/simple\n"},
		{"npmAuthToken: abc\nnpmRegistryServer: \"https://r.example\"\n", "npmRegistryServer: \"https://r.example\"\n"},
		{"[registry]\ntoken = \"cio_abc\"\n[build]\njobs = 4\n", "[registry]\n[build]\njobs = 4\n"},
		{"[credential \"https://x\"]\n\thelper = store\n[user]\n\temail = a@b\n", "[user]\n\temail = a@b\n"},
		{"GOPROXY=https://me:tok@proxy.example\n", "GOPROXY=https://proxy.example\n"},
		{"key = ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n", ""},
	} {
		if got := string(Scrub([]byte(c.in))); got != c.out {
			t.Errorf("Scrub(%q) = %q, want %q", c.in, got, c.out)
		}
	}
}
