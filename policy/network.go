package policy

import (
	"cmp"
	"net/url"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/shellgate/shellgate/internal/analysis/opts"

	"github.com/shellgate/shellgate/internal/analysis"
)

func (x *check) networkHit(c *analysis.Command, what string) {
	x.networkHitUnless(c, what, nil)
}

// networkHitUnless is networkHit, moot where covered says so; with
// allow-listed egress the proxy decides, per domain.
func (x *check) networkHitUnless(c *analysis.Command, what string, covered func(Covers) bool) {
	if x.e.s.Network {
		return
	}
	if host := urlHost(c); host != "" && !x.e.s.Unconfined && runtime.GOOS != "windows" {
		// One domain is the least the user can open, and the sandbox's
		// proxy can open it alone: named first, so that "enable the
		// network" is not the only way out the model relays.
		x.deny(RuleNetwork, "`%s`: %s, and the network is off (rule network). Work offline, or ask the user to allow %s alone (--allow-domain %s, or [network] allow) or the whole network ([policy] network = true, --allow-network).", c.Source, what, host, host)
	} else {
		x.deny(RuleNetwork, "`%s`: %s, and the network is off (rule network). Work offline, or ask the user to enable the network ([policy] network = true, --allow-network, or BASH_ALLOW_NETWORK=true).", c.Source, what)
	}
	x.hits[len(x.hits)-1].covered = func(cv Covers) bool { return cv.Egress || covered != nil && covered(cv) }
}

// urlHost is the host of the first URL among c's literal arguments
// (scheme://host…), lower-cased: a name, not an address or a loopback one;
// "" if there is none.
func urlHost(c *analysis.Command) string {
	value := false // the argument is the previous option's value (a referer …)
	for i, a := range c.Args {
		if value {
			value = false
			continue
		}
		if strings.HasPrefix(a, "-") {
			if redirectingOption(c.Name, a) {
				return "" // a proxy, --connect-to …: the domain alone would not do
			}
			value = takesValue(c.Name, a)
			continue
		}
		_, rest, ok := strings.Cut(a, "://")
		if c.IsDynamic(i) || !ok || isLoopbackURL(a) {
			continue
		}
		u, err := url.Parse(a)
		if err != nil || u.User != nil || rest == "" {
			continue
		}
		if host := strings.ToLower(strings.TrimSuffix(u.Hostname(), ".")); isDomainName(host) {
			return host
		}
	}
	return ""
}

// isDomainName reports whether host is a name of two or more labels, each
// of letters, digits and inner hyphens (the ASCII form the proxy matches),
// whose last label is no number: where it is (127.1, 0x7f.1, 10.0.0.0x1),
// URL parsers (curl's, WHATWG's) read the host as an IPv4 address.
func isDomainName(host string) bool {
	labels := strings.Split(host, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' || strings.Trim(l, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" {
			return false
		}
	}
	last := labels[len(labels)-1]
	hex, isHex := strings.CutPrefix(last, "0x")
	number := strings.Trim(last, "0123456789") == "" || isHex && strings.Trim(hex, "0123456789abcdef") == ""
	return len(labels) > 1 && !number
}

// network denies network clients while the network is off.
func (x *check) network(c *analysis.Command) {
	for _, a := range c.Assigns {
		if a.Name == "DOCKER_HOST" || a.Name == "CONTAINER_HOST" {
			x.networkHit(c, a.Name+" points the container client at another host")
		}
	}
	if packageFetches[c.Name] != nil && x.installs(c) {
		return
	}
	if _, what := fetchers.first(x, c); what != "" {
		x.networkHit(c, what)
		return
	}
	if sub, ok := registryUpload(c); ok && !x.e.s.Network {
		// Allow-listed, the registry's domain is let through for a fetch,
		// and the proxy cannot tell this from one (it sees a name, not the
		// request): asked there. With the network off, denied as below.
		x.ask(RuleNetwork, "`%s`: %s %s sends the project or the account's data to the package registry; the network allow-list lets the registry's domain through, and shellgate's proxy cannot tell an upload from a download (rule network). The user must approve it.", c.Source, c.Name, sub)
		x.hits[len(x.hits)-1].covered = func(cv Covers) bool { return !cv.Egress }
		if c.Name == "yarn" && strings.HasPrefix(sub, "npm ") {
			x.networkHit(c, "yarn "+sub+" talks to the package registry")
			return
		}
	}
	f, what := networkFacts.first(x, c)
	if f == nil {
		return
	}
	var loopback func(Covers) bool
	if f.loopback && loopbackOnly(c) {
		loopback = func(cv Covers) bool { return cv.PrivateLoopback }
	}
	x.networkHitUnless(c, what, loopback)
}

// registryClients are package managers' commands that talk to the registry
// for something other than fetching packages: publishing the project (and
// with it whatever the agent put in it), reading account data and metadata.
var registryClients = map[string][]string{
	"npm":    {"publish", "unpublish", "deprecate", "dist-tag", "owner", "access", "token", "whoami", "login", "adduser", "logout", "view", "info", "show", "v", "search", "s", "find", "star", "stars", "team", "org", "hook", "ping", "profile", "outdated", "audit"},
	"pnpm":   {"publish", "view", "info", "show", "whoami", "login", "logout", "adduser", "dist-tag", "outdated", "audit", "search"},
	"yarn":   {"publish", "login", "logout", "owner", "info", "tag", "team", "outdated", "audit"},
	"bun":    {"publish"},
	"cargo":  {"publish", "yank", "owner", "login", "logout", "search", "info"},
	"twine":  {"upload", "register"},
	"gem":    {"push", "yank", "owner", "signin", "signout", "search", "query", "fetch"},
	"poetry": {"publish", "search"},
	"uv":     {"publish"},
	"flit":   {"publish"},
	"hatch":  {"publish"},
}

// registryUploads are the registry commands of registryClients that send
// the project or the account's data: publishing, tags, owners, tokens,
// logins.
var registryUploads = map[string][]string{
	"npm":    {"publish", "unpublish", "deprecate", "dist-tag", "owner", "access", "token", "login", "adduser", "team", "org", "hook", "star", "profile"},
	"pnpm":   {"publish", "dist-tag", "login", "adduser"},
	"yarn":   {"publish", "login", "owner", "tag", "team"},
	"bun":    {"publish"},
	"cargo":  {"publish", "yank", "owner", "login"},
	"twine":  {"upload", "register"},
	"gem":    {"push", "yank", "owner", "signin"},
	"poetry": {"publish"},
	"uv":     {"publish"},
	"flit":   {"publish"},
	"hatch":  {"publish"},
}

// registryUpload reports c's registry upload (registryUploads), "npm
// publish" for yarn's own npm subcommands (yarn npm publish, yarn npm tag).
func registryUpload(c *analysis.Command) (string, bool) {
	if c.Has("help", "h") {
		return "", false
	}
	sub := subOf(c)
	if c.Name == "yarn" && sub == "npm" {
		if next := operand(c, 1); oneOf(next, "publish", "login", "tag") {
			return "npm " + next, true
		}
	}
	return sub, slices.Contains(registryUploads[c.Name], sub)
}

// networkFacts are the programs that reach the network, and when.
var networkFacts = &catalogue{facts: []fact{
	fact{listed: func(n string) bool { return has(networkClients, n) }, loopback: true,
		test: func(_ *check, c *analysis.Command) string {
			return when(!infoOnly(c), c.Name+" connects to the network")
		},
		match: []string{"curl https://example.com", "ssh host ls", "nc -l 8080", "dig example.com",
			"lynx -dump https://example.com", "mail -s x a@example.com", "ssh-keyscan example.com", "ldapsearch -H ldap://x"},
		notMatch: []string{"curl --version", "ssh -V"}},
	fact{programs: []string{"rsync"}, test: rsyncRemote,
		match:    []string{"rsync -a src/ host:dst/", "rsync -a rsync://host/m/ dst/", "rsync -e ssh u@h:/x ."},
		notMatch: []string{"rsync -a src/ dst/", "rsync -a ./a:b/ dst/"}},
	fact{programs: []string{"openssl"},
		test: func(_ *check, c *analysis.Command) string {
			return when(len(c.Args) > 0 && oneOf(c.Args[0], "s_client", "s_server", "s_time", "ocsp"), "openssl "+first(c.Args)+" opens a network connection")
		},
		match:    []string{"openssl s_client -connect example.com:443", "openssl ocsp -url http://x"},
		notMatch: []string{"openssl rand -hex 8", "openssl x509 -in c.pem -noout -text"}},
	fact{listed: func(n string) bool { return has(remoteServices, n) },
		test: func(_ *check, c *analysis.Command) string {
			return when(!infoOnly(c) && !c.Has("help", "version") && !offlineSubcommand(c), c.Name+" talks to "+remoteServices[c.Name])
		},
		match:    []string{"kubectl get pods", "gh pr list", "terraform apply", "ansible all -m ping", "kubectl version -o json"},
		notMatch: []string{"kubectl version --client", "terraform fmt", "helm template ./chart", "gh --version", "aws help"}},
	fact{programs: []string{"psql", "mysql", "redis-cli", "mongosh", "mongo", "clickhouse-client"}, test: databaseServer,
		match:    []string{"psql -h db -c 'select 1'", "mysql -hdb -e 'select 1'", "redis-cli -u redis://x", "psql postgres://db/x"},
		notMatch: []string{"psql -c 'select 1'", "redis-cli ping"}},
	fact{programs: []string{"docker", "podman", "nerdctl"}, test: containerNetwork,
		match:    []string{"docker pull alpine", "podman push x", "docker login", "docker -c x pull alpine", "docker manifest inspect alpine", "docker trust inspect alpine"},
		notMatch: []string{"docker ps", "docker image pull-x", "docker --context=x ps", "docker manifest annotate x y", "docker -H tcp://h ps"}},
	fact{listed: func(n string) bool { return has(registryClients, n) },
		test: func(_ *check, c *analysis.Command) string {
			sub := subOf(c)
			return when(!c.Has("help", "h") && slices.Contains(registryClients[c.Name], sub), c.Name+" "+sub+" talks to the package registry")
		},
		match: []string{"npm publish", "npm publish --access public", "pnpm publish --no-git-checks", "yarn publish", "npm whoami",
			"npm token list", "npm view left-pad", "cargo publish", "twine upload dist/x.whl", "gem push x.gem", "poetry publish", "uv publish"},
		notMatch: []string{"npm test", "npm run build", "cargo build", "twine check dist/x.whl", "gem build x.gemspec", "npm publish -h"}},
	fact{programs: []string{"parallel"},
		test: func(_ *check, c *analysis.Command) string {
			for _, o := range c.Values("S", "sshlogin", "slf", "sshloginfile") {
				if o.Value != ":" && o.Value != "" {
					return "parallel runs commands on the remote hosts " + o.Value
				}
			}
			return ""
		},
		match:    []string{"parallel -S host echo ::: a", "parallel --sshlogin 2/h1,h2 ls ::: x", "parallel --slf hosts.txt echo ::: a"},
		notMatch: []string{"parallel -S : echo ::: a", "parallel echo ::: a"}},
	fact{programs: []string{"git"}, test: gitNetworkConfig,
		match:    []string{"git -c remote.o.url=http://x/y.git ls-remote o", "git -c http.proxy=http://p status", "git config url.http://evil/.insteadOf https://github.com/"},
		notMatch: []string{"git -c user.name=x commit -m m", "git config remote.o.url ./local", "git config user.name x"}},
	fact{programs: []string{"git"},
		test: func(_ *check, c *analysis.Command) string {
			return when(!c.Has("help", "h") && gitNetworkSubs[c.Sub] != "", "git "+c.Sub+" "+gitNetworkSubs[c.Sub])
		},
		match:    []string{"git push", "git fetch origin", "git pull", "git daemon --export-all", "git send-email x.patch"},
		notMatch: []string{"git status", "git push -h", "git log"}},
	fact{programs: []string{"git"}, test: gitNetworkOperands,
		match: []string{"git ls-remote origin", "git archive --remote=x HEAD", "git clone https://x/y.git", "git remote update",
			"git remote show origin", "git submodule update --init", "git lfs pull", "git submodule add https://x/y.git lib",
			"git submodule add -b main ../lib libs/lib", "git submodule add git@host:x/y"},
		notMatch: []string{"git ls-remote ./other", "git archive HEAD", "git clone ./a b", "git remote -v", "git remote show",
			"git submodule status", "git lfs ls-files", "git submodule add /srv/lib libs/lib", "git submodule add --name l -- /srv/lib",
			"git submodule sync", "git submodule update --no-fetch"}},
	fact{programs: []string{"pip", "pip3"}, also: analysis.IsPython, test: pipIndex,
		match:    []string{"pip install --index-url http://x y", "pip download -d dl http://h/x.tar.gz", "python3 -m pip install -i http://x y"},
		notMatch: []string{"pip show -f x", "pip install --no-index --find-links ./wheels x", "python3 -c 'print(1)'"}},
	fact{programs: []string{"npm", "pnpm", "yarn", "npx"},
		test: func(_ *check, c *analysis.Command) string {
			if subOf(c) == "config" {
				return "" // configuration is judged as such
			}
			a := argWhere(c, func(a string) bool {
				return strings.HasPrefix(a, "--registry") || strings.Contains(a, "://") && !strings.HasPrefix(a, "file:")
			})
			return when(a != "", c.Name+" fetches from "+a)
		},
		match:    []string{"npm view x --registry http://r/", "yarn add https://x/y.tgz"},
		notMatch: []string{"npm config set registry http://r/", "npm test", "npm i file:../x"}},
	fact{listed: func(n string) bool { _, ok := inlineOpts[n]; return ok || n == "deno" }, also: analysis.IsPython, test: inlineFetch,
		match: []string{`python3 -c 'import urllib.request; urllib.request.urlopen("https://example.com")'`,
			`node -e 'fetch("https://example.com/x").then(r => r.text())'`, `perl -MLWP::Simple -e 'print get("http://example.com")'`,
			`ruby -rnet/http -e 'puts Net::HTTP.get(URI("http://example.com"))'`, `php -r 'echo file_get_contents("http://example.com");'`,
			`deno eval 'await fetch("https://example.com")'`, `python3 -c 'import requests, sys; requests.get(sys.argv[1])' https://example.com`},
		notMatch: []string{`python3 -c 'print(1)'`, `node -e 'fetch("http://localhost:3000/api")'`, `python3 -c 'print("https://example.com")'`,
			`python3 script.py https://example.com`, `node -e 'console.log(require("url").parse("https://example.com"))'`}},
	fact{programs: []string{"uv", "poetry"}, test: chosenIndex,
		match:    []string{"uv pip list --index-url http://x", "poetry source add -f x", "uv venv --find-links=./w"},
		notMatch: []string{"uv run --index-url http://x pytest", "uv venv .venv"}},
}}

// containerNetwork: container clients talking to a registry.
func containerNetwork(_ *check, c *analysis.Command) string {
	switch sub := c.Sub; {
	case oneOf(sub, "pull", "push", "login", "search", "logout"):
		return c.Name + " " + sub + " talks to a registry"
	case oneOf(sub, "manifest", "trust") && subOf(c) == "inspect":
		return c.Name + " " + sub + " inspect talks to a registry"
	}
	return ""
}

// gitNetworkSubs are the git subcommands that always reach a remote.
var gitNetworkSubs = map[string]string{
	"push": "talks to a remote repository", "pull": "talks to a remote repository", "fetch": "talks to a remote repository",
	"daemon": "opens network connections", "remote-http": "opens network connections", "remote-https": "opens network connections",
	"remote-ftp": "opens network connections", "http-fetch": "opens network connections", "http-push": "opens network connections",
	"upload-pack": "opens network connections", "send-email": "opens network connections", "imap-send": "opens network connections",
	"credential-cache--daemon": "opens network connections",
}

func rsyncRemote(_ *check, c *analysis.Command) string {
	for i, a := range c.Args {
		if c.Flags[i]&analysis.ArgDynamic == 0 && !strings.HasPrefix(a, "-") && analysis.IsRemote(a) {
			return "rsync copies to or from the remote " + a
		}
	}
	return ""
}

func databaseServer(_ *check, c *analysis.Command) string {
	for _, a := range c.Args {
		if a == "-h" || strings.HasPrefix(a, "--host") || strings.HasPrefix(a, "-h") && len(a) > 2 || strings.Contains(a, "://") || a == "-u" && c.Name == "redis-cli" {
			return c.Name + " connects to a database server"
		}
	}
	return ""
}

// gitNetworkConfig: git -c KEY=VALUE and git config KEY VALUE that point git at a remote.
func gitNetworkConfig(_ *check, c *analysis.Command) string {
	if c.Has("help", "h") {
		return ""
	}
	for _, o := range c.Global {
		if o.Name == "c" && analysis.GitKeyReachesNetwork(o.Value) {
			return "git -c " + o.Value + " points git at a remote"
		}
	}
	if c.Sub == "config" && len(c.Operands) > 1 && analysis.GitKeyReachesNetwork(operand(c, 0)+"="+operand(c, 1)) {
		return "git config " + operand(c, 0) + " points git at a remote"
	}
	return ""
}

// gitNetworkOperands: git subcommands that reach a remote depending on what
// follows them.
func gitNetworkOperands(_ *check, c *analysis.Command) string {
	if c.Has("help", "h") {
		return ""
	}
	rest := gitRest(c)
	switch c.Sub {
	case "lfs":
		return when(oneOf(subOf(c), "pull", "fetch", "push", "clone"), "git lfs "+subOf(c)+" talks to a remote")
	case "archive":
		return when(c.Has("remote"), "git archive talks to a remote repository")
	case "ls-remote":
		// A remote by name or URL; only a path (./repo, /x) stays local.
		local := strings.HasPrefix(subOf(c), ".") || strings.HasPrefix(subOf(c), "/")
		return when(!local, "git ls-remote talks to a remote repository")
	case "clone":
		for i, a := range rest {
			if c.Flags[len(c.Args)-len(rest)+i]&analysis.ArgDynamic == 0 && !strings.HasPrefix(a, "-") && analysis.IsRemote(a) {
				return "git clone talks to the remote " + a
			}
		}
	case "remote":
		return when(len(rest) > 0 && (rest[0] == "update" || rest[0] == "prune" || rest[0] == "show" && len(rest) > 1), "git remote "+first(rest)+" talks to a remote repository")
	case "submodule":
		for i, a := range rest {
			switch {
			case a == "update" && !slices.Contains(rest[i:], "--no-fetch") && !slices.Contains(rest[i:], "-N"):
				return "git submodule update fetches from remote repositories"
			case a == "add":
				// ./x and ../x are relative to the superproject's remote, if it has one.
				repo := submoduleRepository(rest[i+1:])
				if repo == "" || analysis.IsRemote(repo) || strings.HasPrefix(repo, "./") || strings.HasPrefix(repo, "../") {
					return "git submodule add fetches from " + cmp.Or(repo, "a remote repository")
				}
				return "" // a repository on this machine: `git submodule add /srv/lib`
			}
		}
	}
	return ""
}

// submoduleRepository is the repository operand of `git submodule add`'s
// arguments, past its options (those that take a value take the next one).
func submoduleRepository(args []string) string {
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-b" || a == "--branch" || a == "--name" || a == "--reference" || a == "--depth":
			i++
		case a == "--":
			return strings.Join(args[i+1:min(i+2, len(args))], "")
		case !strings.HasPrefix(a, "-"):
			return a
		}
	}
	return ""
}

// pipIndex: pip install|download|wheel|index from an index or URL.
func pipIndex(_ *check, c *analysis.Command) string {
	if analysis.IsPython(c.Name) && c.Sub != "pip" || len(c.Operands) == 0 {
		return ""
	}
	sub := subOf(c)
	if sub == "pip" && len(c.Operands) > 1 {
		sub = operand(c, 1)
	}
	if sub != "install" && sub != "download" && sub != "wheel" && sub != "index" {
		return "" // pip show -f: files, not find-links
	}
	offline := c.Has("no-index") // --find-links then names local directories
	a := argWhere(c, func(a string) bool {
		return strings.Contains(a, "://") || !offline && (strings.HasPrefix(a, "--index") || strings.HasPrefix(a, "--extra-index") ||
			strings.HasPrefix(a, "--find-links") || a == "-i" || a == "-f" || strings.HasPrefix(a, "--trusted-host"))
	})
	return when(a != "", c.Name+" "+sub+" fetches from "+a)
}

// chosenIndex: uv and poetry given an index or find-links to install from.
func chosenIndex(_ *check, c *analysis.Command) string {
	if len(c.Args) > 0 && c.Args[0] == "run" {
		return "" // uv run, poetry run: the command is judged on its own
	}
	for _, a := range c.Args {
		for _, o := range []string{"--index-url", "--extra-index-url", "-i", "--find-links", "-f", "--trusted-host"} {
			if a == o || strings.HasPrefix(a, o+"=") || len(o) == 2 && strings.HasPrefix(a, o) && len(a) > 2 && strings.Contains(a, "://") {
				return c.Name + " " + o + " installs packages from a chosen index"
			}
		}
	}
	return ""
}

// argWhere is the first argument of c as written for which ok holds, or "".
func argWhere(c *analysis.Command, ok func(string) bool) string {
	for i, a := range c.Args {
		if c.Flags[i]&analysis.ArgDynamic == 0 && ok(a) {
			return a
		}
	}
	return ""
}

// first is s[0], or "".
func first(s []string) string {
	if len(s) > 0 {
		return s[0]
	}
	return ""
}

// packageFetches are the subcommands that download packages, by program.
var packageFetches = map[string]map[string]bool{
	"npm":      {"install": true, "i": true, "add": true, "ci": true, "update": true, "upgrade": true, "up": true, "install-test": true, "it": true},
	"pnpm":     {"install": true, "i": true, "add": true, "update": true, "up": true, "fetch": true},
	"yarn":     {"install": true, "add": true, "upgrade": true, "up": true},
	"pip":      {"install": true, "download": true, "wheel": true},
	"pip3":     {"install": true, "download": true, "wheel": true},
	"python3":  {"install": true, "download": true, "wheel": true},
	"cargo":    {"add": true, "install": true, "fetch": true, "update": true},
	"go":       {"get": true},
	"gem":      {"install": true, "update": true, "fetch": true},
	"bundle":   {"install": true, "update": true, "add": true},
	"composer": {"install": true, "require": true, "update": true},
	"uv":       {"add": true},
}

// installs denies, with the network off, a package manager command that
// downloads packages (npm install, pip install, cargo add, go get), and
// reports whether it did. Offline flags and local wheels are let through.
func (x *check) installs(c *analysis.Command) bool {
	subs := packageFetches[c.Name]
	if subs == nil || c.Has("help", "h", "offline", "no-index", "dry-run") {
		return false
	}
	sub := ""
	for _, i := range c.Operands {
		if a := c.Args[i]; a != "-m" && a != "pip" {
			sub = a
			break
		}
	}
	if !subs[sub] && !(c.Name == "yarn" && len(c.Operands) == 0) { // bare yarn installs
		if c.Name != "go" || c.Sub != "get" && !(c.Sub == "install" && hasVersion(c)) && !(c.Sub == "mod" && sub == "download") {
			return false
		}
	}
	what := c.Name + " " + sub
	if c.Name == "go" {
		what = "go " + c.Sub
	}
	x.networkHit(c, what+" downloads packages")
	return true
}

// fetchers are the package runners and system package managers that
// download what they run or install (npx -y, pnpm dlx, uvx, pipx run, go run
// PKG@VERSION, apt-get install, uv pip install, bun add …), as npm install
// does. Offline flags are let through.
var fetchers = &catalogue{facts: []fact{
	fact{programs: []string{"npx"},
		test: func(_ *check, c *analysis.Command) string {
			return when(online(c) && c.Has("y", "yes", "p", "package") && len(c.Operands) > 0,
				"npx "+strings.Join(c.Args[:max(first1(c.Operands), 0)], " ")+" downloads the package it runs")
		},
		match:    []string{"npx -y cowsay", "npx --yes cowsay hi", "npx -p cowsay cowsay hi"},
		notMatch: []string{"npx cowsay", "npx -y --offline cowsay", "npx -y"}},
	fact{programs: []string{"bunx", "uvx"},
		test: func(_ *check, c *analysis.Command) string {
			return when(online(c) && len(c.Operands) > 0, c.Name+" downloads the package it runs")
		},
		match:    []string{"uvx ruff check", "bunx cowsay"},
		notMatch: []string{"uvx --help", "uvx --offline ruff"}},
	fact{programs: []string{"npm"},
		test: func(_ *check, c *analysis.Command) string {
			return when(online(c) && oneOf(subOf(c), "exec", "x") && argIs(c, "-y", "--yes"), "npm "+subOf(c)+" --yes downloads the package it runs")
		},
		match:    []string{"npm exec -y cowsay", "npm x --yes cowsay"},
		notMatch: []string{"npm exec cowsay", "npm test -y"}},
	fact{programs: []string{"pnpm", "yarn"},
		test: func(_ *check, c *analysis.Command) string {
			return when(online(c) && subOf(c) == "dlx", c.Name+" dlx downloads the package it runs")
		},
		match:    []string{"pnpm dlx create-vite", "yarn dlx cowsay"},
		notMatch: []string{"pnpm test", "yarn dlx --offline cowsay"}},
	fact{programs: []string{"bun"},
		test: func(_ *check, c *analysis.Command) string {
			return when(online(c) && oneOf(subOf(c), "add", "install", "i", "update", "x"), "bun "+subOf(c)+" downloads packages")
		},
		match:    []string{"bun add zod", "bun install", "bun x cowsay"},
		notMatch: []string{"bun run build", "bun test"}},
	fact{programs: []string{"pipx"},
		test: func(_ *check, c *analysis.Command) string {
			return when(online(c) && oneOf(subOf(c), "run", "install", "upgrade", "inject"), "pipx "+subOf(c)+" downloads packages")
		},
		match:    []string{"pipx run black .", "pipx install ruff"},
		notMatch: []string{"pipx list", "pipx run --help black"}},
	fact{programs: []string{"uv"},
		test: func(_ *check, c *analysis.Command) string {
			a, b := operand(c, 0), operand(c, 1)
			two := a == "pip" && oneOf(b, "install", "sync", "compile") || a == "tool" && oneOf(b, "install", "run", "upgrade") || a == "python" && b == "install"
			switch {
			case !online(c):
				return ""
			case two:
				return "uv " + a + " " + b + " downloads packages"
			case a == "sync" || a == "lock":
				return "uv " + a + " downloads packages"
			}
			return ""
		},
		match:    []string{"uv pip install x", "uv tool run ruff", "uv python install 3.12", "uv sync", "uv lock"},
		notMatch: []string{"uv pip list", "uv sync --offline", "uv run pytest", "uv lock --dry-run"}},
	fact{programs: []string{"go"},
		test: func(_ *check, c *analysis.Command) string {
			return when(online(c) && c.Sub == "run" && hasVersion(c), "go run PACKAGE@VERSION downloads the module")
		},
		match:    []string{"go run golang.org/x/tools/cmd/stringer@latest", "go run example.com/x@v1.2.3 -v"},
		notMatch: []string{"go run .", "go run ./cmd/x", "go run example.com/x@v1 -h"}},
	fact{programs: []string{"apt-get", "apt", "aptitude"},
		test: func(_ *check, c *analysis.Command) string {
			return when(online(c) && oneOf(subOf(c), "install", "update", "upgrade", "dist-upgrade", "full-upgrade", "source", "download", "build-dep", "reinstall"),
				c.Name+" "+subOf(c)+" downloads packages")
		},
		match:    []string{"apt-get install -y jq", "apt update", "aptitude upgrade"},
		notMatch: []string{"apt list --installed", "apt-get install --simulate jq", "apt-cache search jq"}},
	fact{listed: func(n string) bool { return installerSubs(n) != nil },
		test: func(_ *check, c *analysis.Command) string {
			a, b := operand(c, 0), operand(c, 1)
			for _, sub := range installerSubs(c.Name) {
				one, two, _ := strings.Cut(sub, " ")
				if a == one && (two == "" || b == two) {
					does := " downloads packages"
					if oneOf(c.Name, "svn", "hg", "bzr", "fossil") {
						does = " reaches the repository's server"
					}
					return when(online(c), c.Name+" "+sub+does)
				}
			}
			return ""
		},
		match: []string{"brew install jq", "brew upgrade", "brew tap x/y", "dnf -y install jq", "yum update", "zypper in jq", "apk add jq",
			"conda install -c conda-forge numpy", "poetry add requests", "poetry install", "pdm sync", "rustup target add wasm32-wasip1",
			"dotnet add package Newtonsoft.Json", "dotnet restore", "snap install x", "winget install x", "choco install x", "scoop install x",
			"svn checkout https://svn.example.com/r/trunk", "hg clone https://hg.example.com/r", "hg pull"},
		notMatch: []string{"brew list", "brew --prefix", "dnf list installed", "conda list", "poetry run pytest", "poetry install --help",
			"rustup show", "dotnet build", "dotnet add reference ../x.csproj", "apk info", "hg status", "svn status", "svn diff"}},
	fact{programs: []string{"pacman", "yay", "paru"},
		test: func(_ *check, c *analysis.Command) string {
			// -S installs from the repositories and -Sy refreshes them; -Ss,
			// -Si, -Sl, -Sg read the local copy of them, -Sc cleans the cache.
			a := argWhere(c, func(a string) bool {
				if v, ok := strings.CutPrefix(a, "--sync"); ok && v == "" {
					return true
				}
				v, ok := strings.CutPrefix(a, "-S")
				return ok && !strings.HasPrefix(a, "--") && !strings.ContainsAny(v, "silgcp")
			})
			return when(a != "" && online(c), c.Name+" "+a+" downloads packages")
		},
		match:    []string{"pacman -S jq", "pacman -Syu", "yay -S x", "pacman --noconfirm -Sy jq", "pacman --sync jq"},
		notMatch: []string{"pacman -Ss jq", "pacman -Q", "pacman -Si jq", "pacman -Sc"}},
}}

// installers are the package managers beyond apt whose subcommands (one word,
// or two) download packages: system ones (brew, dnf, zypper, apk, snap,
// winget …) and project ones (conda, poetry, pdm, rustup, dotnet); and the
// commands of version control systems other than git that reach a server.
var installers = [...]struct {
	name string
	subs []string
}{
	{"brew", []string{"install", "reinstall", "upgrade", "update", "fetch", "tap", "bundle"}},
	{"port", []string{"install", "upgrade", "selfupdate", "sync", "fetch"}},
	{"dnf", []string{"install", "reinstall", "update", "upgrade", "downgrade", "download", "makecache", "distro-sync", "groupinstall"}},
	{"yum", []string{"install", "reinstall", "update", "upgrade", "downgrade", "makecache", "groupinstall"}},
	{"microdnf", []string{"install", "reinstall", "update", "upgrade", "download", "makecache"}},
	{"zypper", []string{"install", "in", "update", "up", "dist-upgrade", "dup", "refresh", "ref", "source-install", "si"}},
	{"apk", []string{"add", "upgrade", "update", "fetch"}},
	{"snap", []string{"install", "refresh", "download"}},
	{"flatpak", []string{"install", "update", "remote-add"}},
	{"choco", []string{"install", "upgrade"}},
	{"winget", []string{"install", "upgrade"}},
	{"scoop", []string{"install", "update", "bucket add"}},
	{"conda", []string{"install", "create", "update", "upgrade", "env create", "env update"}},
	{"mamba", []string{"install", "create", "update", "upgrade", "env create", "env update"}},
	{"micromamba", []string{"install", "create", "update", "upgrade"}},
	{"poetry", []string{"install", "add", "update", "lock", "sync", "self update"}},
	{"pdm", []string{"install", "add", "update", "lock", "sync"}},
	{"rustup", []string{"install", "update", "toolchain install", "target add", "component add", "self update"}},
	{"dotnet", []string{"restore", "add package", "tool install", "tool update", "workload install", "new install"}},
	// Other version control systems' commands that reach their remote.
	{"svn", []string{"checkout", "co", "update", "up", "export", "import", "commit", "ci", "switch", "sw", "list", "ls", "log", "cat"}},
	{"hg", []string{"clone", "pull", "push", "incoming", "in", "outgoing", "out"}},
	{"bzr", []string{"branch", "checkout", "pull", "push", "merge", "update"}},
	{"fossil", []string{"clone", "sync", "pull", "push", "update"}},
}

// installerSubs are the subcommands of name that reach the network (installers).
func installerSubs(name string) []string {
	for _, in := range installers {
		if in.name == name {
			return in.subs
		}
	}
	return nil
}

// online reports that c is not asked for help, to stay offline, or for a dry run.
func online(c *analysis.Command) bool {
	return !c.Has("help", "h", "offline") && !argIs(c, "--offline", "--help", "-h", "--dry-run", "--simulate")
}

// first1 is s[0], or -1.
func first1(s []int) int {
	if len(s) > 0 {
		return s[0]
	}
	return -1
}

// argIs reports whether one of args is an argument of c as written.
func argIs(c *analysis.Command, args ...string) bool {
	for i, a := range c.Args {
		if c.Flags[i]&analysis.ArgDynamic == 0 {
			for _, b := range args {
				if a == b {
					return true
				}
			}
		}
	}
	return false
}

// hasVersion reports go install PKG@VERSION, which fetches the module.
func hasVersion(c *analysis.Command) bool {
	for _, i := range c.Operands {
		if strings.Contains(c.Args[i], "@") {
			return true
		}
	}
	return false
}

// remoteServices are clients of remote APIs: every call but help and a few
// local subcommands goes over the network.
var remoteServices = map[string]string{
	"kubectl": "a Kubernetes cluster", "helm": "a Kubernetes cluster", "aws": "AWS", "gcloud": "Google Cloud",
	"gsutil": "Google Cloud Storage", "az": "Azure", "gh": "GitHub", "glab": "GitLab", "terraform": "cloud providers",
	"tofu": "cloud providers", "pulumi": "cloud providers", "ansible": "remote hosts", "ansible-playbook": "remote hosts",
	"doctl": "DigitalOcean", "flyctl": "Fly.io", "heroku": "Heroku", "vercel": "Vercel", "netlify": "Netlify",
	"s3cmd": "S3", "oc": "an OpenShift cluster", "eksctl": "AWS",
}

// offlineSubs are the subcommands of remote-service clients that stay
// local; the clients not listed have help, version and completion.
var offlineSubs = map[string][]string{
	"terraform": {"fmt", "validate", "version", "graph", "show", "output"},
	"tofu":      {"fmt", "validate", "version", "graph", "show", "output"},
	"kubectl":   {"completion", "kustomize"}, // and version --client
	"oc":        {"completion", "kustomize"},
	"helm":      {"template", "lint", "create", "package", "completion", "env"},
	"gh":        {"completion", "help", "version", "config", "alias"},
	"glab":      {"completion", "help", "version", "config", "alias"},
}

// offlineSubcommand reports remote-service subcommands that stay local.
func offlineSubcommand(c *analysis.Command) bool {
	if len(c.Operands) == 0 {
		return c.Name != "ansible" && c.Name != "ansible-playbook"
	}
	sub := subOf(c)
	if (c.Name == "kubectl" || c.Name == "oc") && sub == "version" && c.Has("client") {
		return true
	}
	if subs, ok := offlineSubs[c.Name]; ok {
		return slices.Contains(subs, sub)
	}
	return oneOf(sub, "help", "version", "completion")
}

// gitRest is what follows git's subcommand.
func gitRest(c *analysis.Command) []string {
	if c.Sub == "" {
		return nil
	}
	return c.Args[c.SubAt+1:]
}

// hasOpt reports whether any of names is among os.
func hasOpt(os []opts.Opt, names ...string) bool {
	r := opts.Result{Opts: os}
	return r.Has(names...)
}

// inlineFetch: an interpreter given its program on the command line (-c, -e,
// deno eval) that fetches a URL of another host than the loopback: the
// program names the URL, or takes one as an argument, and calls something
// that fetches. With the network off it would fail on DNS instead of being
// refused at once. A program that only prints a URL is let through.
func inlineFetch(_ *check, c *analysis.Command) string {
	if inlineProgram(c) == "" {
		return ""
	}
	remote, fetches := "", false
	for i, a := range c.Args {
		if c.IsDynamic(i) {
			continue
		}
		for _, u := range remoteURL().FindAllString(a, -1) {
			if remote == "" && !isLoopbackURL(u) {
				remote = u
			}
		}
		fetches = fetches || fetchCall().MatchString(a)
	}
	return when(remote != "" && fetches, c.Name+"'s program fetches "+remote)
}

// remoteURL is a URL in a program's text.
var remoteURL = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)\b(?:https?|ftps?|wss?)://[^\s"'<>()\[\]{}\x60,;]+`)
})

// fetchCall is a call that fetches a URL, in the languages of inlineOpts:
// Python's urllib, http.client, requests, httpx, aiohttp, urlretrieve;
// JavaScript's fetch, http(s).get and request, axios; Perl's LWP and
// HTTP::Tiny; Ruby's Net::HTTP and open-uri; PHP's file_get_contents, fopen
// and curl; a socket.
var fetchCall = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\burlopen\b|\burlretrieve\b|\burllib\b|\bhttp\.client\b|\brequests\.|\bhttpx\b|\baiohttp\b|` +
		`\bfetch\s*\(|\bhttps?\.(?:get|request)\b|\baxios\b|LWP::|HTTP::Tiny|Net::HTTP|open-uri|URI\.open|` +
		`\bfile_get_contents\b|\bfopen\b|\bcurl_|\bsocket\b|\bWebSocket\b`)
})
