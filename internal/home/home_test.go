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

// A credential goes however the file's syntax holds it: in an inline table
// or a flow mapping beside settings builds need (bun's documented
// `registry = { url, token }`), under a quoted key (.yarnrc), in a YAML block
// or a TOML multi-line string below its name, in a URL's path (conda's
// /t/TOKEN/); a git value's next line goes only where its key went.
func TestShowHidesCredentialsWhateverTheSyntax(t *testing.T) {
	for _, c := range []struct{ rel, in, keep string }{
		{".bunfig.toml", "[install]\nregistry = { url = \"https://registry.npmjs.org\", token = \"MARK1\" }\n" +
			"[install.scopes]\nmyorg = { username = \"me\", password = \"MARK2\", url = \"https://r.myorg/\" }\n" +
			"other = { pass = \"MARK3\" }\nexact = true\n", "exact = true"},
		{".yarnrc.yml", "npmScopes: {myorg: {npmAuthToken: MARK1}}\nnpmRegistries:\n  \"https://npm.example.com\":\n" +
			"    npmAuthIdent: >-\n      user:MARK2\n    npmAlwaysAuth: true\n  \"https://b\":\n    npmAuthIdent: |\n      MARK3\n" +
			"yarnPath: .yarn/releases/y.cjs\n", "yarnPath: .yarn/releases/y.cjs"},
		{".condarc", "channels:\n  - https://conda.anaconda.org/t/MARK1-0000-1111/mychannel\n  - conda-forge\n", "- conda-forge"},
		{".yarnrc", "\"//npm.example.com/:_authToken\" \"MARK1\"\nregistry \"https://npm.example.com\"\n", "registry \"https://npm.example.com\""},
		{".cargo/config.toml", "[registries]\nmy = { index = \"sparse+https://my/\", token = \"MARK1\" }\n" +
			"[registry]\nglobal-credential-providers = [\"cargo:token\"]\n[x]\ntoken = \"\"\"\nMARK2\n\"\"\"\n" +
			"[net]\nretry = 3\nauth = '''\nMARK3\n'''\n[build]\njobs = 4\n", "jobs = 4"},
		{".gitconfig", "[core]\n\tsshCommand = sshpass -p \\\nMARK1 ssh\n\teditor = vim # a comment \\\n\taskPass = /bin/MARK2\n" +
			"# ghp_MARK3aaaaaaaaaaaaaaaaaaaa\n[user]\n\tname = U\n", "name = U"},
		{".npmrc", "# //r/:_authToken=npm_MARK1aaaaaaaaaaaaaaaa\nfund=false\n", "fund=false"},
	} {
		got := string(Show(c.rel, []byte(c.in)))
		if strings.Contains(got, "MARK") || !strings.Contains(got, c.keep) {
			t.Errorf("%s shown as:\n%s\nwant no MARK and %q", c.rel, got, c.keep)
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
