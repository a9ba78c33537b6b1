package policy

import (
	"path/filepath"
	"strings"

	"github.com/shellgate/shellgate/internal/analysis"
)

// What the policy lets through because a sandbox contains it, asked about when
// none will (Settings.Unconfined): a hook's agent runs the command in its own
// shell, where a program given on the command line can do anything and the
// secrets the sandbox hides are there to read.

// inlineOpts are, per interpreter, the options whose value is the program to
// run: single letters (found in a bundle such as -Ic or -le) and long names.
var inlineOpts = map[string]struct{ short, long string }{
	"python": {"c", ""}, "pypy": {"c", ""}, "pypy3": {"c", ""},
	"perl": {"eE", ""}, "ruby": {"e", ""},
	"node": {"ep", "--eval --print"}, "nodejs": {"ep", "--eval --print"}, "bun": {"e", "--eval --print"},
	"php": {"r", ""}, "lua": {"e", ""}, "luajit": {"e", ""}, "Rscript": {"e", ""}, "R": {"e", ""},
	"osascript": {"e", ""}, "tclsh": {"", ""}, "julia": {"eE", "--eval --print"}, "ipython": {"c", ""},
}

// valueOpts are the interpreters' options that take the next word as their
// value, so that the scan for an inline program does not stop at that word.
var valueOpts = map[string]string{
	"python": "WX", "pypy": "WX", "pypy3": "WX", "perl": "IMmx", "ruby": "IrCE", "node": "r", "nodejs": "r",
}

// inlineProgram returns the option through which c is given its program on the
// command line ("-c", "-e", "--eval"), or "".
func inlineProgram(c *analysis.Command) string {
	name := c.Name
	if analysis.IsPython(name) {
		name = "python"
	}
	if name == "deno" && c.Sub == "eval" || name == "deno" && len(c.Args) > 0 && c.Args[0] == "eval" {
		return "eval"
	}
	o, ok := inlineOpts[name]
	if !ok {
		return ""
	}
	for i := 0; i < len(c.Args); i++ {
		a := c.Args[i]
		switch {
		case c.IsDynamic(i):
			return "" // judged as dynamic elsewhere
		case a == "--" || a == "-" || !strings.HasPrefix(a, "-"):
			return "" // the program is a file, or standard input
		case strings.HasPrefix(a, "--"):
			long, _, _ := strings.Cut(a, "=")
			for _, l := range strings.Fields(o.long) {
				if long == l {
					return long
				}
			}
		default:
			for j, r := range a[1:] {
				if strings.ContainsRune(o.short, r) {
					return "-" + string(r)
				}
				if strings.ContainsRune(valueOpts[name], r) {
					if j == len(a)-2 {
						i++ // -W error: the value is the next word
					}
					break
				}
			}
		}
	}
	return ""
}

// recursiveReaders read whole directory trees whatever their options.
var recursiveReaders = map[string]bool{"tar": true, "zip": true, "7z": true, "rg": true, "ag": true, "rsync": true, "scp": true}

// readsTree reports whether c reads the directories it names, all of them.
func readsTree(c *analysis.Command) bool {
	if recursiveReaders[c.Name] || c.Has("r", "R", "recursive") {
		return true
	}
	for i, a := range c.Args {
		if c.IsDynamic(i) || a == "--" {
			break
		}
		if a == "--recursive" || a == "--dereference-recursive" || len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.ContainsAny(a[1:], "rRa") {
			return true
		}
	}
	return false
}

// unconfined asks about c what only a sandbox would contain.
func (x *check) unconfined(c *analysis.Command) {
	if !x.e.s.Unconfined || c.Kind != analysis.Simple || c.Dynamic {
		return
	}
	if o := inlineProgram(c); o != "" {
		x.ask(RuleExecFlags, "`%s`: %s %s runs a program given on the command line, which shellgate does not analyse, and no sandbox contains it here: this agent's own shell runs it (rule code-execution). The user must approve it.", c.Source, c.Name, o)
	}
	if len(x.e.secrets) == 0 {
		return
	}
	rec := readsTree(c)
	check := func(p string, f analysis.ArgFlag) bool {
		if f&analysis.ArgDynamic != 0 || p == "" {
			return false
		}
		if rest, ok := strings.CutPrefix(p, "~/"); ok && x.home != "" {
			p = filepath.Join(x.home, rest)
		}
		if f&analysis.ArgGlob != 0 {
			p = globDir(p)
		}
		for _, a := range c.Abs(p) {
			r := x.resolve(a)
			for _, s := range x.e.secrets {
				if within(r, s) || rec && within(s, r) {
					x.ask(RuleSecrets, "`%s` reads %s, where credentials are kept (%s), and no sandbox hides them here: this agent's own shell runs it (rule secrets). The user must approve it; work with the project's files instead.", c.Source, p, s)
					return true
				}
			}
		}
		return false
	}
	for i, a := range c.Args {
		var f analysis.ArgFlag
		if i < len(c.Flags) {
			f = c.Flags[i]
		}
		if strings.HasPrefix(a, "-") {
			if _, v, ok := strings.Cut(a, "="); ok {
				a = v // --key=~/.ssh/id_rsa
			} else if len(a) > 2 && a[1] != '-' && strings.ContainsAny(a[2:], "/~") {
				a = a[2:] // -i~/.ssh/id_rsa
			} else {
				continue
			}
		}
		if check(a, f) {
			return
		}
	}
	for _, r := range c.Redirects {
		if r.Write {
			continue // writes are the write rules'
		}
		f := analysis.ArgFlag(0)
		if r.Dynamic {
			f = analysis.ArgDynamic
		}
		if check(r.Target, f) {
			return
		}
	}
}
