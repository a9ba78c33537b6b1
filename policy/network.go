package policy

import (
	"strings"

	"github.com/shellgate/shellgate/analysis/opts"

	"github.com/shellgate/shellgate/analysis"
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
	x.deny(RuleNetwork, "`%s`: %s, and the network is off (rule network). Work offline, or ask the user to enable the network (config network = true, --allow-network, or BASH_ALLOW_NETWORK=true).", c.Source, what)
	x.hits[len(x.hits)-1].covered = func(cv Covers) bool { return cv.Egress || covered != nil && covered(cv) }
}

// network denies network clients while the network is off.
func (x *check) network(c *analysis.Command) {
	name := c.Name
	for _, a := range c.Assigns {
		if a.Name == "DOCKER_HOST" || a.Name == "CONTAINER_HOST" {
			x.networkHit(c, a.Name+" points the container client at another host")
		}
	}
	if packageFetches[name] != nil && x.installs(c) {
		return
	}
	if what := fetchesToRun(c); what != "" {
		x.networkHit(c, what)
		return
	}
	switch {
	case networkClients[name]:
		if !infoOnly(c) {
			var loopback func(Covers) bool
			if loopbackOnly(c) {
				loopback = func(cv Covers) bool { return cv.PrivateLoopback }
			}
			x.networkHitUnless(c, name+" connects to the network", loopback)
		}
	case name == "rsync":
		for i, a := range c.Args {
			if c.Flags[i]&analysis.ArgDynamic == 0 && !strings.HasPrefix(a, "-") && isRemote(a) {
				x.networkHit(c, "rsync copies to or from the remote "+a)
				return
			}
		}
	case name == "openssl":
		if len(c.Args) > 0 && (c.Args[0] == "s_client" || c.Args[0] == "s_server" || c.Args[0] == "s_time" || c.Args[0] == "ocsp") {
			x.networkHit(c, "openssl "+c.Args[0]+" opens a network connection")
		}
	case remoteServices[name] != "":
		if !infoOnly(c) && !c.Has("help", "version") && !offlineSubcommand(c) {
			x.networkHit(c, name+" talks to "+remoteServices[name])
		}
	case name == "psql" || name == "mysql" || name == "redis-cli" || name == "mongosh" || name == "mongo" || name == "clickhouse-client":
		for _, a := range c.Args {
			if a == "-h" || strings.HasPrefix(a, "--host") || strings.HasPrefix(a, "-h") && len(a) > 2 || strings.Contains(a, "://") || a == "-u" && name == "redis-cli" {
				x.networkHit(c, name+" connects to a database server")
				return
			}
		}
	case name == "docker" || name == "podman":
		if len(c.Operands) > 0 {
			switch sub := c.Args[c.Operands[0]]; sub {
			case "pull", "push", "login", "search", "logout":
				x.networkHit(c, name+" "+sub+" talks to a registry")
			}
		}
	case name == "git":
		sub, rest := c.Sub, gitRest(c)
		if c.Has("help", "h") {
			return
		}
		for _, o := range c.Global {
			if o.Name == "c" && gitKeyReachesNetwork(o.Value) {
				x.networkHit(c, "git -c "+o.Value+" points git at a remote")
				return
			}
		}
		switch sub {
		case "daemon", "remote-http", "remote-https", "remote-ftp", "http-fetch", "http-push", "upload-pack", "send-email", "imap-send", "credential-cache--daemon":
			x.networkHit(c, "git "+sub+" opens network connections")
			return
		case "lfs":
			if len(c.Operands) > 0 {
				switch c.Args[c.Operands[0]] {
				case "pull", "fetch", "push", "clone":
					x.networkHit(c, "git lfs "+c.Args[c.Operands[0]]+" talks to a remote")
				}
			}
			return
		case "config":
			if len(c.Operands) > 1 && gitKeyReachesNetwork(c.Args[c.Operands[0]]+"="+c.Args[c.Operands[1]]) {
				x.networkHit(c, "git config "+c.Args[c.Operands[0]]+" points git at a remote")
			}
			return
		}
		switch sub {
		case "push", "pull", "fetch":
			x.networkHit(c, "git "+sub+" talks to a remote repository")
		case "ls-remote", "archive":
			// A remote by name or URL; only a path (./repo, /x) stays local.
			if sub == "archive" && c.Has("remote") || sub == "ls-remote" && !(len(c.Operands) > 0 && strings.HasPrefix(c.Args[c.Operands[0]], ".") || len(c.Operands) > 0 && strings.HasPrefix(c.Args[c.Operands[0]], "/")) {
				x.networkHit(c, "git "+sub+" talks to a remote repository")
			}
		case "clone":
			for i, a := range rest {
				if c.Flags[len(c.Args)-len(rest)+i]&analysis.ArgDynamic == 0 && !strings.HasPrefix(a, "-") && isRemote(a) {
					x.networkHit(c, "git "+sub+" talks to the remote "+a)
					return
				}
			}
		case "remote":
			if len(rest) > 0 && (rest[0] == "update" || rest[0] == "prune" || rest[0] == "show" && len(rest) > 1) {
				x.networkHit(c, "git remote "+rest[0]+" talks to a remote repository")
			}
		case "submodule":
			for _, a := range rest {
				if a == "update" || a == "sync" || a == "add" {
					x.networkHit(c, "git submodule "+a+" fetches from remote repositories")
					return
				}
			}
		}
	case name == "pip" || name == "pip3" || analysis.IsPython(name) && c.Sub == "pip": // python -m pip, -mpip
		if len(c.Operands) == 0 {
			return
		}
		sub := c.Args[c.Operands[0]]
		if sub == "pip" && len(c.Operands) > 1 {
			sub = c.Args[c.Operands[1]]
		}
		if sub != "install" && sub != "download" && sub != "wheel" && sub != "index" {
			return // pip show -f: files, not find-links
		}
		for i, a := range c.Args {
			offline := c.Has("no-index") // --find-links then names local directories
			if c.Flags[i]&analysis.ArgDynamic == 0 && (strings.Contains(a, "://") || !offline && (strings.HasPrefix(a, "--index") || strings.HasPrefix(a, "--extra-index") ||
				strings.HasPrefix(a, "--find-links") || a == "-i" || a == "-f" || strings.HasPrefix(a, "--trusted-host"))) {
				x.networkHit(c, name+" "+sub+" fetches from "+a)
				return
			}
		}
	case name == "npm" || name == "pnpm" || name == "yarn" || name == "npx":
		if len(c.Operands) > 0 && c.Args[c.Operands[0]] == "config" {
			return // configuration is judged as such
		}
		for i, a := range c.Args {
			if c.Flags[i]&analysis.ArgDynamic == 0 && (strings.HasPrefix(a, "--registry") || strings.Contains(a, "://") && !strings.HasPrefix(a, "file:")) {
				x.networkHit(c, name+" fetches from "+a)
				return
			}
		}
	case name == "uv" || name == "poetry" || analysis.IsPython(name) && c.Sub == "pip":
		if len(c.Args) > 0 && c.Args[0] == "run" {
			return // uv run, poetry run: the command is judged on its own
		}
		for _, a := range c.Args {
			for _, o := range []string{"--index-url", "--extra-index-url", "-i", "--find-links", "-f", "--trusted-host"} {
				if a == o || strings.HasPrefix(a, o+"=") || len(o) == 2 && strings.HasPrefix(a, o) && len(a) > 2 && strings.Contains(a, "://") {
					x.networkHit(c, name+" "+o+" installs packages from a chosen index")
					return
				}
			}
		}
	}
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

// fetchesToRun names what a package runner or system package manager
// downloads (npx -y, pnpm dlx, uvx, pipx run, go run PKG@VERSION, apt-get
// install, uv pip install, bun add …), as npm install does; "" when c does
// not. Offline flags are let through.
func fetchesToRun(c *analysis.Command) string {
	if !runners[c.Name] || c.Has("help", "h", "offline") || argIs(c, "--offline", "--help", "-h", "--dry-run", "--simulate") {
		return ""
	}
	ops := make([]string, 0, len(c.Operands))
	for _, i := range c.Operands {
		ops = append(ops, c.Args[i])
	}
	first := func(n int) string {
		if len(ops) > n {
			return ops[n]
		}
		return ""
	}
	switch c.Name {
	case "npx":
		if c.Has("y", "yes", "p", "package") && len(ops) > 0 {
			return "npx " + strings.Join(c.Args[:c.Operands[0]], " ") + " downloads the package it runs"
		}
	case "bunx", "uvx":
		if len(ops) > 0 {
			return c.Name + " downloads the package it runs"
		}
	case "npm":
		if (first(0) == "exec" || first(0) == "x") && argIs(c, "-y", "--yes") {
			return "npm " + first(0) + " --yes downloads the package it runs"
		}
	case "pnpm", "yarn":
		if first(0) == "dlx" {
			return c.Name + " dlx downloads the package it runs"
		}
	case "bun":
		switch first(0) {
		case "add", "install", "i", "update", "x":
			return "bun " + first(0) + " downloads packages"
		}
	case "pipx":
		switch first(0) {
		case "run", "install", "upgrade", "inject":
			return "pipx " + first(0) + " downloads packages"
		}
	case "uv":
		switch {
		case first(0) == "pip" && (first(1) == "install" || first(1) == "sync" || first(1) == "compile"),
			first(0) == "tool" && (first(1) == "install" || first(1) == "run" || first(1) == "upgrade"),
			first(0) == "python" && first(1) == "install":
			return "uv " + first(0) + " " + first(1) + " downloads packages"
		case first(0) == "sync" || first(0) == "lock":
			return "uv " + first(0) + " downloads packages"
		}
	case "go":
		if c.Sub == "run" && hasVersion(c) {
			return "go run PACKAGE@VERSION downloads the module"
		}
	case "apt-get", "apt", "aptitude":
		switch first(0) {
		case "install", "update", "upgrade", "dist-upgrade", "full-upgrade", "source", "download", "build-dep", "reinstall":
			return c.Name + " " + first(0) + " downloads packages"
		}
	}
	return ""
}

// runners are the programs fetchesToRun knows.
var runners = map[string]bool{"npx": true, "bunx": true, "uvx": true, "npm": true, "pnpm": true, "yarn": true,
	"bun": true, "pipx": true, "uv": true, "go": true, "apt-get": true, "apt": true, "aptitude": true}

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

// offlineSubcommand reports remote-service subcommands that stay local.
func offlineSubcommand(c *analysis.Command) bool {
	if len(c.Operands) == 0 {
		return c.Name != "ansible" && c.Name != "ansible-playbook"
	}
	sub := c.Args[c.Operands[0]]
	switch c.Name {
	case "terraform", "tofu":
		return sub == "fmt" || sub == "validate" || sub == "version" || sub == "graph" || sub == "show" || sub == "output"
	case "kubectl", "oc":
		return sub == "version" && c.Has("client") || sub == "completion" || sub == "kustomize"
	case "helm":
		return sub == "template" || sub == "lint" || sub == "create" || sub == "package" || sub == "completion" || sub == "env"
	case "gh", "glab":
		return sub == "completion" || sub == "help" || sub == "version" || sub == "config" || sub == "alias"
	}
	return sub == "help" || sub == "version" || sub == "completion"
}

// gitKeyReachesNetwork reports config (KEY=VALUE) that points git at a remote:
// remote.X.url, url.X.insteadOf, http.proxy.
func gitKeyReachesNetwork(kv string) bool {
	key, val, _ := strings.Cut(strings.ToLower(kv), "=")
	switch {
	case strings.HasPrefix(key, "remote.") && (strings.HasSuffix(key, ".url") || strings.HasSuffix(key, ".pushurl")):
		return isRemote(val)
	case strings.HasPrefix(key, "url.") && (strings.HasSuffix(key, ".insteadof") || strings.HasSuffix(key, ".pushinsteadof")):
		return true
	case key == "http.proxy" || key == "https.proxy" || strings.HasPrefix(key, "http.") && strings.HasSuffix(key, ".proxy"):
		return true
	}
	return false
}

// isRemote reports a repository or rsync location on another host:
// scheme://…, user@host:path or host:path.
func isRemote(a string) bool {
	if strings.Contains(a, "://") {
		return !strings.HasPrefix(a, "file://")
	}
	if strings.HasPrefix(a, "ext::") || strings.HasPrefix(a, "fd::") {
		return true
	}
	colon := strings.IndexByte(a, ':')
	slash := strings.IndexByte(a, '/')
	return colon > 0 && (slash < 0 || colon < slash)
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
