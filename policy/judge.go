package policy

import (
	"strings"

	"github.com/shellgate/shellgate/internal/analysis"
)

// judge runs every rule over every command and finding.
func (x *check) judge() {
	files := x.fetched()
	for i := range x.a.Commands {
		x.cur = i
		c := &x.a.Commands[i]
		if c.Superseded {
			continue // judged where the function is called
		}
		start := len(x.hits)
		x.command(c)
		x.unconfined(c)
		if files != nil && c.Kind == analysis.Simple && !c.Dynamic {
			x.runsFetched(c, files)
		}
		if c.Kind == analysis.Simple && !c.Dynamic && mayRunFile(c) {
			x.runsScript(c, x.writtenFiles())
		}
		allowed := x.userRules(c)
		if allowed {
			x.dropAsks(start)
		} else if x.e.s.Mode == ModeUntrusted && !safe(c) {
			x.ask(RuleUntrusted, "`%s` is not in the read-only set that untrusted mode runs without asking (rule untrusted): the user must approve it.", c.Source)
			x.hits[len(x.hits)-1].fallback = true // no other rule spoke, or what it said is moot
		}
	}
	for _, f := range x.a.Findings {
		x.finding(f)
	}
}

// dropAsks forgets the built-in asks recorded since start: a user allow pattern
// matched the command.
func (x *check) dropAsks(start int) {
	kept := x.hits[:start]
	for _, h := range x.hits[start:] {
		if h.decision != Ask || strings.HasPrefix(h.rule, "user.") {
			kept = append(kept, h)
		}
	}
	x.hits = kept
}

func (x *check) finding(f analysis.Finding) {
	h := hit{cmd: -1, pos: f.Pos, text: f.Source}
	switch f.Kind {
	case analysis.FindParse:
		h.decision, h.rule = Deny, RuleParse
		h.reason = "A string that would be run as commands is not valid bash: " + f.Detail + " (rule parse). Fix its syntax."
	case analysis.FindForkBomb:
		h.decision, h.rule = Deny, RuleCatastrophic
		h.reason = "`" + f.Source + "` is a fork bomb: " + f.Detail + " (rule catastrophic). Do not start processes without bound."
	case analysis.FindDepth:
		h.decision, h.rule = Ask, RuleDynamic
		h.reason = "Commands are nested in strings deeper than shellgate follows (rule dynamic). Run the inner command directly."
	default:
		h.decision, h.rule = Ask, RuleStoredCode
		h.reason = "`" + f.Source + "`: " + f.Detail + " (rule stored-code), so what it runs cannot be checked. Write the command out literally."
	}
	x.hits = append(x.hits, h)
}

// command runs the rules over one command.
func (x *check) command(c *analysis.Command) {
	x.redirects(c)
	x.assignments(c)
	x.chdir(c)
	if c.Kind != analysis.Simple {
		return
	}
	if c.Dynamic {
		x.ask(RuleDynamic, "`%s`: the program it runs is only known at run time (rule dynamic). Write the command name literally.", c.Source)
		return
	}
	x.remoteCode(c)
	name := c.Name
	if x.e.s.DedicatedTools && dedicatedTools[name] != "" {
		x.deny(RuleDedicated, "`%s`: %s is disabled in favour of the agent's own tools (rule dedicated-tools). Use the %s tool instead.", c.Source, name, dedicatedTools[name])
	}
	if privileged[name] {
		x.deny(RulePrivilege, "`%s` would run with elevated privileges (rule privilege). Work as the current user inside the project; ask the user to run privileged steps.", c.Source)
	}
	x.catastrophic(c)
	x.network(c)
	x.interactive(c)
	x.writes(c)
	x.execution(c)
	x.programFromStdin(c)
	x.escape(c)
	x.loseWork(c)
	x.unknownRunner(c)
	if c.MoreArgs && writesMoreArgs(c) {
		x.ask(RuleDynamic, "`%s`: %s gets the paths it changes from input at run time (rule dynamic). List the files explicitly.", c.Source, name)
	}
}

// redirects checks where a command's redirections write.
func (x *check) redirects(c *analysis.Command) {
	for _, r := range c.Redirects {
		if strings.HasPrefix(r.Target, "/dev/tcp/") || strings.HasPrefix(r.Target, "/dev/udp/") {
			x.networkHit(c, "the redirection "+r.Op+" "+r.Target+" opens a network connection")
			continue
		}
		if r.Dynamic && (strings.Contains(r.Target, "$(") || strings.Contains(r.Target, "`")) {
			// exec 3< "$(printf /dev/tcp/…)": a path built at run time may be
			// a network connection or a device.
			x.ask(RuleDynamic, "`%s`: the redirection %s %s opens a path only known at run time (rule dynamic). Write the path literally.", c.Source, r.Op, r.Target)
			continue
		}
		if !r.Write {
			continue
		}
		f := analysis.ArgFlag(0)
		if r.Dynamic {
			f = analysis.ArgDynamic
		}
		x.writeTo(c, r.Target, f, "the redirection "+r.Op)
	}
}

// writeTo judges one path that c writes or changes; who names what writes it
// ("rm", "the redirection > f", "the symlink").
func (x *check) writeTo(c *analysis.Command, p string, f analysis.ArgFlag, who string) {
	pl, resolved := x.where(c, p, f)
	switch pl {
	// The path is named as written: where a link outside the root leads is
	// not the model's to learn.
	case device:
		x.deny(RuleCatastrophic, "`%s`: %s would write to %s, a disk or kernel device, destroying data or the running system (rule catastrophic). Write to files inside the project.", c.Source, who, p)
	case outside:
		instead := "Keep changes inside the project, or write temporary files under $TMPDIR."
		if !x.tempDir {
			// No temp dir is known to be the command's (a hook's agent runs it in
			// its own shell): a write under $TMPDIR would be refused too.
			instead = "Keep changes inside the project: put temporary files in a scratch directory of the project and remove it afterwards."
		}
		x.deny(RuleConfinement, "`%s`: %s would change %s, which is outside the project root %s (rule confinement). %s", c.Source, who, p, x.root, instead)
	case protected:
		x.askWrite(resolved, "`%s`: %s would write %s, which runs later outside any check (rule protected-paths): the user must approve it.", c.Source, who, resolved)
	case unknown:
		x.ask(RuleDynamic, "`%s`: %s would change %s, a path only known at run time (rule dynamic). Write the path literally.", c.Source, who, p)
	}
}

// chdir checks cd/pushd targets and directory options.
func (x *check) chdir(c *analysis.Command) {
	for _, d := range c.Chdir {
		pl := x.placeOf(d)
		if pl == outside || pl == device {
			x.deny(RuleConfinement, "`%s` would work in a directory outside the project root %s (rule confinement). Stay inside the project; use paths relative to it.", c.Source, x.root)
			break
		}
	}
	if c.ChdirUnknown {
		x.ask(RuleDynamic, "`%s` changes to a directory only known at run time (rule dynamic). Use a literal path inside the project.", c.Source)
	}
}

// remoteCode denies a shell or interpreter that runs what a network client fetched.
func (x *check) remoteCode(c *analysis.Command) {
	if !interpreters[c.Name] && !strings.HasPrefix(c.Name, "python") {
		return
	}
	if f := x.fetchedBy(c.Feeds); f != nil {
		x.deny(RuleRemoteCode, "`%s` runs code fetched by `%s` (rule remote-code). Download the file, let the user review it, then run it from the project.", c.Source, f.Source)
	}
}

// fetchedBy returns a network client whose output reaches a command reading
// from feeds, following the data back through every command it passed
// (curl | tee | sh). The answers are kept for the rest of the check.
func (x *check) fetchedBy(feeds []int) *analysis.Command {
	if x.netFed == nil {
		x.netFed = make([]int8, len(x.a.Commands)) // 0 unknown, 1 visiting or no, 2 yes
		x.netSrc = make([]int, len(x.a.Commands))
	}
	var visit func(i int) bool
	visit = func(i int) bool {
		if i < 0 || i >= len(x.a.Commands) {
			return false
		}
		if x.netFed[i] != 0 {
			return x.netFed[i] == 2
		}
		x.netFed[i] = 1
		f := &x.a.Commands[i]
		if f.Kind == analysis.Simple && !f.Dynamic && networkClients[f.Name] && !infoOnly(f) {
			x.netFed[i], x.netSrc[i] = 2, i
			return true
		}
		for _, j := range f.Feeds {
			if visit(j) {
				x.netFed[i], x.netSrc[i] = 2, x.netSrc[j]
				return true
			}
		}
		return false
	}
	for _, i := range feeds {
		if visit(i) {
			return &x.a.Commands[x.netSrc[i]]
		}
	}
	return nil
}

// infoOnly reports commands that only print their version or help.
func infoOnly(c *analysis.Command) bool {
	if len(c.Args) == 0 {
		return false
	}
	for _, a := range c.Args {
		switch a {
		case "--version", "-V", "--help", "-h", "version", "help", "-version", "-help", "-?", "--manual":
		default:
			return false
		}
	}
	return true
}

// writesMoreArgs reports whether arguments appended at run time (xargs) would
// be paths the command changes.
func writesMoreArgs(c *analysis.Command) bool {
	if c.Name == "dd" {
		return true // of= may come from input
	}
	f := writers[c.Name]
	if f == nil {
		return false
	}
	const probe = "\x00more"
	probed := *c
	probed.Args = append(append([]string(nil), c.Args...), probe)
	probed.Flags = append(append([]analysis.ArgFlag(nil), c.Flags...), 0)
	probed.ParseOpts()
	for _, t := range f(&probed) {
		if t.path == probe {
			return true
		}
	}
	return false
}
