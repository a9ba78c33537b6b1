package policy

import (
	"strings"

	"github.com/shellgate/shellgate/internal/analysis"
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

// scripts returns the files the line writes, resolved, with the command that
// writes each: text that a later command could run.
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
		if c.Kind != analysis.Simple || c.Dynamic || writesNoText[c.Name] {
			continue
		}
		if f := writers[c.Name]; f != nil {
			for _, t := range f(c) {
				add(c, t.path, t.flag)
			}
		}
	}
	return out
}

// writesNoText are the writers whose targets hold no new text to run: they
// delete, change modes or times, link, format or compile the project's own.
var writesNoText = map[string]bool{
	"rm": true, "rmdir": true, "unlink": true, "shred": true, "mkdir": true, "touch": true, "mkfifo": true,
	"mknod": true, "chmod": true, "chown": true, "chgrp": true, "chattr": true, "setfacl": true, "truncate": true,
	"ln": true, "gofmt": true, "goimports": true, "go": true,
}

// writtenFiles is scripts, computed once per check and only when a command
// that may run a file needs it.
func (x *check) writtenFiles() map[string]string {
	if !x.scriptsDone {
		x.written, x.scriptsDone = x.scripts(), true
	}
	return x.written
}

// mayRunFile reports commands that can run a file as code: a path, an
// interpreter, a tool given a program file, or a runner of project files.
func mayRunFile(c *analysis.Command) bool {
	if strings.Contains(c.Path, "/") || interpreters[c.Name] || strings.HasPrefix(c.Name, "python") {
		return true
	}
	switch c.Name {
	case "sed", "awk", "gawk", "mawk", "nawk", "make", "gmake", "npm", "pnpm", "yarn", "bun", "npx":
		return true
	case "go":
		return c.Sub == "generate" || c.Sub == "test" || c.Sub == "run"
	case "pytest", "py.test":
		return true
	}
	return false
}

// runsScript asks before running a file that the same line writes: what it
// holds is not checked (printf '…' > x.sh && sh x.sh, cp /dev/stdin z.sh; sh
// z.sh, a Makefile or package.json written and then run).
func (x *check) runsScript(c *analysis.Command, files map[string]string) {
	if files == nil {
		return
	}
	if t, ok := x.runsFile(c, files); ok {
		x.ask(RuleStoredCode, "`%s` runs %s, which `%s` writes in the same command line, so what it runs cannot be checked (rule stored-code). Run those commands directly.", c.Source, t, files[x.resolveArg(c, t)])
		return
	}
	if w, what := writtenProjectFile(c, files); w != "" {
		x.ask(RuleStoredCode, "`%s` runs what %s says, and `%s` writes it in the same command line, so what it runs cannot be checked (rule stored-code). Run those commands directly.", c.Source, what, w)
	}
}

// writtenProjectFile reports a file that tells c what to run (a Makefile for
// make, package.json for npm, Go sources for go generate) among files.
func writtenProjectFile(c *analysis.Command, files map[string]string) (writer, what string) {
	var match func(base string) bool
	switch c.Name {
	case "make", "gmake":
		what = "the makefile"
		match = func(b string) bool {
			return b == "Makefile" || b == "makefile" || b == "GNUmakefile" || strings.HasSuffix(b, ".mk")
		}
	case "npm", "pnpm", "yarn", "bun", "npx":
		what = "package.json"
		match = func(b string) bool { return b == "package.json" || b == ".npmrc" }
	case "go":
		switch c.Sub {
		case "generate":
			what = "a //go:generate line"
			match = func(b string) bool { return strings.HasSuffix(b, ".go") }
		case "test", "run":
			what = "the Go sources"
			match = func(b string) bool { return strings.HasSuffix(b, ".go") }
		default:
			return "", ""
		}
	case "pytest", "py.test":
		what, match = "the test files and conftest.py", pytestFile
	default:
		if !analysis.IsPython(c.Name) || c.Sub == "" {
			return "", ""
		}
		// python3 -m MOD runs MOD.py, or a package's __main__.py; -m pytest
		// the test files.
		what = "the module " + c.Sub
		mod := c.Sub[strings.LastIndexByte(c.Sub, '.')+1:]
		match = func(b string) bool {
			return b == mod+".py" || b == "__main__.py" || b == "__init__.py" || c.Sub == "pytest" && pytestFile(b)
		}
	}
	for f, w := range files {
		if match(f[strings.LastIndexByte(f, '/')+1:]) {
			return w, what
		}
	}
	return "", ""
}

// pytestFile reports the files pytest imports: conftest.py and test modules.
func pytestFile(b string) bool {
	return b == "conftest.py" || strings.HasSuffix(b, ".py") && (strings.HasPrefix(b, "test_") || strings.HasSuffix(b, "_test.py"))
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
		// sh < x.sh runs x.sh.
		for _, r := range c.Redirects {
			if r.Op == "<" || r.Op == "0<" {
				f := analysis.ArgFlag(0)
				if r.Dynamic {
					f = analysis.ArgDynamic
				}
				candidates = append(candidates, target{r.Target, f})
			}
		}
	}
	candidates = append(candidates, programFiles(c)...)
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

// programFiles are the files whose text c runs as its program: sed -f, awk -f,
// make -f.
func programFiles(c *analysis.Command) []target {
	switch c.Name {
	case "sed":
		return values(c, "f", "file")
	case "awk", "gawk", "mawk", "nawk":
		return values(c, "f", "file", "i", "include")
	case "make", "gmake":
		return values(c, "f", "file", "makefile")
	}
	return nil
}

// programFromStdin asks when c reads its program from standard input, which
// the analysis cannot follow (make -f /dev/stdin <<< '…').
func (x *check) programFromStdin(c *analysis.Command) {
	for _, t := range programFiles(c) {
		if t.flag&analysis.ArgDynamic == 0 && analysis.IsStdinPath(t.path) {
			x.ask(RuleStoredCode, "`%s`: %s reads its program from standard input, which shellgate does not analyse (rule stored-code). Put the commands in the line directly.", c.Source, c.Name)
			return
		}
	}
	if _, interpreter := repls[c.Name]; !interpreter {
		return
	}
	named, onStdin := programOnStdin(c)
	if !onStdin {
		return
	}
	typedLater := "`%s`: %s reads its program from standard input, which is sent to it later and never checked (rule dynamic). Put the program on the command line (-c, -e) or in a file."
	switch {
	case !x.hasStdin(c):
		// Nothing in the line feeds it: its program is the command's own stdin,
		// which in a session is what is typed into the job later. (With no
		// operand at all it is a REPL, or `python3 --version`: not this rule's.)
		if named {
			x.ask(RuleDynamic, typedLater, c.Source, c.Name)
		}
	case x.stdinRedirectedFromStdin(c):
		x.ask(RuleDynamic, typedLater, c.Source, c.Name) // python3 < /dev/stdin
	default:
		for _, i := range c.Feeds {
			if p := &x.a.Commands[i]; !literalOutput(p) {
				x.ask(RuleDynamic, "`%s`: %s runs as its program what `%s` prints, which shellgate cannot check (rule dynamic). Put the program on the command line (-c, -e) or in a file.", c.Source, c.Name, p.Source)
				return
			}
		}
	}
}

// stdinRedirectedFromStdin reports `< /dev/stdin`: the redirect is no source
// of its own, the input is the command's.
func (x *check) stdinRedirectedFromStdin(c *analysis.Command) bool {
	for _, r := range c.Redirects {
		if (r.Op == "<" || r.Op == "0<") && !r.Dynamic && analysis.IsStdinPath(r.Target) {
			return true
		}
	}
	return false
}

// literalOutput reports whether a pipe producer prints only what the line
// spells out: echo or printf with literal arguments.
func literalOutput(c *analysis.Command) bool {
	if c.Name != "echo" && c.Name != "printf" {
		return false
	}
	for i := range c.Args {
		if c.IsDynamic(i) {
			return false
		}
	}
	return true
}

// programOnStdin reports whether an interpreter's program is its standard
// input: named, as in `python3 -`, `node /dev/stdin`, `bash -s`, `perl -- -`;
// or not named, when no script file and no inline program (-c, -e, -r) or
// module (-m) is given (`cat | python3`).
func programOnStdin(c *analysis.Command) (named, onStdin bool) {
	for i, a := range c.Args {
		if c.IsDynamic(i) {
			return false, false
		}
		switch {
		case a == "--":
			continue
		case analysis.IsStdinPath(a):
			return true, true
		case len(a) > 1 && a[0] == '-' && a[1] != '-':
			if strings.ContainsAny(a[1:], "cemr") && c.Name != "bash" && c.Name != "sh" || strings.ContainsRune(a[1:], 'c') {
				return false, false // inline program, or a module
			}
			if strings.ContainsRune(a[1:], 's') && shells[c.Name] {
				return true, true // sh -s: commands from standard input
			}
		case strings.HasPrefix(a, "--"):
			if a == "--command" || strings.HasPrefix(a, "--eval") || strings.HasPrefix(a, "--print") || a == "--version" || a == "--help" {
				return false, false
			}
		default:
			return false, false // a script file (judged elsewhere)
		}
	}
	return false, true
}

// shells are the interpreters whose -s reads commands from standard input.
var shells = map[string]bool{"bash": true, "sh": true, "dash": true, "zsh": true, "ksh": true, "fish": true}

func (x *check) resolveArg(c *analysis.Command, p string) string {
	_, r := x.where(c, p, 0)
	return r
}
