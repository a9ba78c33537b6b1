package policy

import (
	"strings"

	"github.com/shellgate/shellgate/analysis"
)

// fetched returns the files network clients of the line write, resolved.
func (x *check) fetched() map[string]string {
	var out map[string]string
	for i := range x.a.Commands {
		c := &x.a.Commands[i]
		if c.Kind != analysis.Simple || c.Dynamic || !networkClients[c.Name] || infoOnly(c) {
			continue
		}
		var targets []target
		for _, r := range c.Redirects {
			if r.Write && !r.Dynamic {
				targets = append(targets, target{path: r.Target})
			}
		}
		if f := writers[c.Name]; f != nil {
			targets = append(targets, f(c)...)
		}
		for _, t := range targets {
			if pl, r := x.where(c, t.path, t.flag); pl != unknown && !isHarmlessTarget(r) {
				if out == nil {
					out = map[string]string{}
				}
				out[r] = c.Source
			}
		}
	}
	return out
}

// runsFetched denies running a file that a network client of the same line
// downloaded: curl -o x.sh URL && sh x.sh.
func (x *check) runsFetched(c *analysis.Command, files map[string]string) {
	if t, ok := x.runsFile(c, files); ok {
		x.deny(RuleRemoteCode, "`%s` runs %s, which `%s` just downloaded (rule remote-code). Download the file, let the user review it, then run it from the project.", c.Source, t, files[x.resolveArg(c, t)])
	}
}

// scripts returns the files the line writes with redirections or tee: text
// that a later command could run.
func (x *check) scripts() map[string]string {
	var out map[string]string
	add := func(c *analysis.Command, p string, f analysis.ArgFlag) {
		if pl, r := x.where(c, p, f); pl != unknown && !isHarmlessTarget(r) {
			if out == nil {
				out = map[string]string{}
			}
			out[r] = c.Source
		}
	}
	for i := range x.a.Commands {
		c := &x.a.Commands[i]
		for _, r := range c.Redirects {
			if r.Write && !r.Dynamic {
				add(c, r.Target, 0)
			}
		}
		if c.Name == "tee" && !c.Dynamic {
			for _, t := range writers["tee"](c) {
				add(c, t.path, t.flag)
			}
		}
	}
	return out
}

// runsScript asks before running a file that the same line writes: what it
// holds is not checked (printf '…' > x.sh && sh x.sh).
func (x *check) runsScript(c *analysis.Command, files map[string]string) {
	if t, ok := x.runsFile(c, files); ok {
		x.ask(RuleStoredCode, "`%s` runs %s, which `%s` writes in the same command line, so what it runs cannot be checked (rule stored-code). Run those commands directly.", c.Source, t, files[x.resolveArg(c, t)])
	}
}

// runsFile reports the file among files that c runs as a program or script.
func (x *check) runsFile(c *analysis.Command, files map[string]string) (string, bool) {
	candidates := []target{{path: c.Path}}
	if interpreters[c.Name] || strings.HasPrefix(c.Name, "python") {
		for i, a := range c.Args {
			if !strings.HasPrefix(a, "-") {
				candidates = append(candidates, target{a, c.Flags[i]})
				break
			}
		}
	}
	for _, t := range candidates {
		if !strings.Contains(t.path, "/") && t.path == c.Path {
			continue // a bare name is looked up in PATH, not the directory
		}
		if _, r := x.where(c, t.path, t.flag); files[r] != "" {
			return t.path, true
		}
	}
	return "", false
}

func (x *check) resolveArg(c *analysis.Command, p string) string {
	_, r := x.where(c, p, 0)
	return r
}
