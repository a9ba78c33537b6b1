package home

import (
	"strings"
	"testing"
)

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

// git's, npm's and pip's settings are shown by an allow-list: what builds
// need stays, and a credential under a name no list foresaw goes with every
// other key nobody named.
func TestShowAllowsOnlyWhatBuildsNeed(t *testing.T) {
	for _, c := range []struct {
		rel, in string
		keep    []string
		leak    []string
	}{
		{".gitconfig", "[user]\n\tname = U\n\temail = u@x\n[sendemail]\n\tsmtpServer = s\n\tsmtpPass = hunter2\n" +
			"[alias]\n\tpub = !curl -H 'X-Key: k3y-0123' https://x\n[core]\n\teditor = vim\n\tsshCommand = ssh -o ProxyCommand='curl -H X-Key:SSHCMD-SECRET4 x'\n\taskPass = /opt/pass-helper --token ASKPASS-SECRET5\n" +
			"[url \"https://u:pw@git.example/\"]\n\tinsteadOf = ex:\n[http]\n\tproxy = http://proxy:3128\n\textraHeader = Authorization: Basic eA==\n" +
			"[filter \"lfs\"]\n\tclean = git-lfs clean -- %f\n[mystery]\n\tkey = value\n",
			[]string{"name = U", "email = u@x", "editor = vim", "[url \"https://git.example/\"]", "insteadOf = ex:", "proxy = http://proxy:3128", "clean = git-lfs"},
			[]string{"hunter2", "smtp", "k3y-0123", "alias", "u:pw", "extraHeader", "eA==", "mystery", "SSHCMD-SECRET4", "ASKPASS-SECRET5"}},
		{".config/git/config", "[credential]\n\thelper = store\n[init]\n\tdefaultBranch = main\n",
			[]string{"defaultBranch = main"}, []string{"helper", "credential"}},
		{".npmrc", "registry=https://npm.example/\n@corp:registry=https://npm.corp/\nkey=\"-----BEGIN PRIVATE KEY-----\\nMIIE\"\ncert=xyz\n" +
			"email=u@x\n//npm.corp/:_authToken=abc\nfund=false\n",
			[]string{"registry=https://npm.example/", "@corp:registry=https://npm.corp/", "fund=false"},
			[]string{"PRIVATE", "cert", "email", "_authToken", "abc"}},
		{".config/pip/pip.conf", "[global]\nindex-url = https://u:secret@pypi.corp/simple\ntimeout = 60\nclient-cert = /k.pem\n[unknown]\nx = y\n",
			[]string{"index-url = https://pypi.corp/simple", "timeout = 60"}, []string{"secret", "client-cert", "unknown"}},
	} {
		got := string(Show(c.rel, []byte(c.in)))
		for _, k := range c.keep {
			if !strings.Contains(got, k) {
				t.Errorf("%s lost %q:\n%s", c.rel, k, got)
			}
		}
		for _, l := range c.leak {
			if strings.Contains(got, l) {
				t.Errorf("%s shows %q:\n%s", c.rel, l, got)
			}
		}
	}
}
