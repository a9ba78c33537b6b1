package policy

import (
	"strings"

	"github.com/shellgate/shellgate/analysis/opts"

	"github.com/shellgate/shellgate/analysis"
)

func (x *check) networkHit(c *analysis.Command, what string) {
	if x.e.s.Network {
		return
	}
	x.deny(RuleNetwork, "`%s`: %s, and the network is off (rule network). Work offline, or ask the user to enable the network (config network = true, --allow-network, or BASH_ALLOW_NETWORK=true).", c.Source, what)
}

// network denies network clients while the network is off.
func (x *check) network(c *analysis.Command) {
	name := c.Name
	switch {
	case networkClients[name]:
		if !infoOnly(c) {
			x.networkHit(c, name+" connects to the network")
		}
	case name == "rsync":
		for i, a := range c.Args {
			if c.Flags[i]&analysis.ArgDynamic == 0 && !strings.HasPrefix(a, "-") && isRemote(a) {
				x.networkHit(c, "rsync copies to or from the remote "+a)
				return
			}
		}
	case name == "openssl":
		if len(c.Args) > 0 && (c.Args[0] == "s_client" || c.Args[0] == "s_server" || c.Args[0] == "ocsp") {
			x.networkHit(c, "openssl "+c.Args[0]+" opens a network connection")
		}
	case name == "git":
		sub, rest := c.Sub, gitRest(c)
		switch sub {
		case "push", "pull", "fetch":
			x.networkHit(c, "git "+sub+" talks to a remote repository")
		case "clone", "ls-remote":
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
				if a == "update" || a == "sync" {
					x.networkHit(c, "git submodule "+a+" fetches from remote repositories")
					return
				}
			}
		}
	case name == "pip" || name == "pip3" || strings.HasPrefix(name, "python") && len(c.Args) > 1 && c.Args[0] == "-m" && c.Args[1] == "pip" || name == "uv" || name == "poetry":
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
