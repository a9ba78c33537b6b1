package analysis

import (
	"fmt"
	"strings"
)

// run emits c and follows what it runs: builtins that change directory or
// evaluate text, and wrappers around other commands.
func (w *walker) run(c Command, stdin input) (ok, fail dirs) {
	in := w.cwd
	idx := w.emit(c)
	c = w.res.Commands[idx] // with its options read
	if !c.varsDone {
		w.commandVars(c.Assigns, c.Pos, c.Via)
	}
	if c.Dynamic {
		return in, in
	}
	if body, isAlias := w.aliases[c.Name]; isAlias && c.Path == c.Name && strings.HasPrefix(c.Source, c.Name) &&
		w.depth < maxDepth && !w.calling["alias "+c.Name] {
		return w.expandAlias(c, body)
	}
	if fd, isFunc := w.funcs[c.Name]; isFunc && c.Path == c.Name {
		return w.callFunc(c, fd)
	}
	if u, ok := wrappers[c.Name]; ok {
		return w.unwrap(idx, u, stdin)
	}
	if subs, ok := subcommandRunners[c.Name]; ok && len(c.Operands) > 0 {
		w.runner(idx, subs)
	}
	if l, ok := languageOf(c.Name); ok {
		w.interpreterCode(c, l)
	}
	if f := followers[c.Name]; f != nil {
		return f(w, idx, c, stdin, in)
	}
	w.dirOptions(idx)
	if shells[c.Name] {
		return w.shell(idx, stdin)
	}
	return in, in
}

// expandAlias runs the body of alias c.Name in its place: where aliases are
// expanded (shopt -s expand_aliases), the name is replaced by the body, in
// this shell, with the state of now.
func (w *walker) expandAlias(c Command, body string) (ok, fail dirs) {
	if w.calling == nil {
		w.calling = map[string]bool{}
	}
	w.calling["alias "+c.Name] = true
	ok, fail = w.nestedVia(body+c.Source[len(c.Name):], "alias "+c.Name, c.Pos, c.Via, false, nil)
	delete(w.calling, "alias "+c.Name)
	return ok, fail
}

// A follower follows what one builtin or program runs or changes, given the
// directories the shell was in before it (in); it returns those after it.
type follower func(w *walker, idx int, c Command, stdin input, in dirs) (ok, fail dirs)

// followers are the builtins and programs whose arguments run commands or
// change the shell's state, by name. Set in init: they call back into run.
var followers map[string]follower

func init() {
	followers = map[string]follower{}
	add := func(f follower, names ...string) {
		for _, n := range names {
			followers[n] = f
		}
	}
	// stay wraps a follower that leaves the directory as it was.
	stay := func(f func(w *walker, idx int, c Command, stdin input)) follower {
		return func(w *walker, idx int, c Command, stdin input, in dirs) (dirs, dirs) {
			f(w, idx, c, stdin)
			return in, in
		}
	}
	add(func(w *walker, idx int, _ Command, _ input, _ dirs) (dirs, dirs) { return w.cd(idx) }, "cd", "pushd", "popd")
	add(followEval, "eval")
	add(followSource, "source", ".")
	add(stay(func(w *walker, _ int, c Command, _ input) { w.trap(c) }), "trap")
	add(stay(func(w *walker, _ int, c Command, _ input) { w.alias(c) }), "alias")
	add(stay(func(w *walker, _ int, c Command, _ input) { w.hash(c) }), "hash")
	add(stay(func(w *walker, _ int, c Command, _ input) {
		// -C CMD runs CMD (mapfile: every -c lines; compgen: to list words).
		w.optionCommands(c, c.Name+" -C", false, "C")
		w.subscripts(c)
		for _, a := range c.Args {
			if isName(a) {
				w.unknownVar(a)
			}
		}
	}), "mapfile", "readarray", "compgen", "complete")
	add(stay(func(w *walker, idx int, c Command, _ input) {
		// man -P PAGER runs PAGER through a shell, like $MANPAGER.
		w.optionCommands(c, "man -P", true, "P", "pager")
		w.execOptions(idx, "man") // -H BROWSER
	}), "man")
	add(stay(func(w *walker, _ int, c Command, _ input) { w.subscripts(c) }), "test", "[", "wait", "unset")
	add(stay(func(w *walker, idx int, c Command, _ input) { w.declare(idx, c) }), "export", "declare", "typeset", "local", "readonly")
	add(stay(func(w *walker, _ int, c Command, _ input) {
		for i, a := range c.Args {
			if isName(a) && (c.Name != "printf" || i > 0 && c.Args[i-1] == "-v") {
				w.unknownVar(a)
			}
		}
		w.subscripts(c)
	}), "read", "getopts", "printf")
	add(stay(func(w *walker, idx int, _ Command, _ input) { w.git(idx) }), "git")
	// shift and set -- change $1 …: set's words are the new ones (in a
	// branch that may not run, either may hold).
	add(stay(func(w *walker, _ int, _ Command, _ input) { w.positionalUnknown() }), "shift")
	add(stay(func(w *walker, _ int, c Command, _ input) {
		rest := -1
		for i := 0; i < len(c.Args) && rest < 0; i++ {
			switch a := c.Args[i]; {
			case c.IsDynamic(i):
				w.positionalUnknown() // an option or a word: not known
				return
			case a == "-o" || a == "+o":
				i++ // set -o NAME
			case a == "--" || a == "-":
				rest = i + 1
			case !strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "+"):
				rest = i
			}
		}
		switch {
		case rest < 0:
			// Options only: $1 … stay.
		case w.cond > 0:
			w.positionalUnknown()
		default:
			w.setPositional(c.Args[rest:], c.Flags[rest:], false)
		}
	}), "set")
	add(stay(func(w *walker, idx int, c Command, _ input) {
		w.dirOptions(idx)
		w.execOptions(idx, c.Name)
	}), "make", "gmake", "tar", "npm", "pnpm", "yarn", "go")
	add(stay(func(w *walker, idx int, c Command, _ input) { w.execOptions(idx, c.Name) }), "sort", "rsync", "rg", "zip", "scp", "ssh", "sftp", "split", "fd")
	add(stay(func(w *walker, idx int, _ Command, stdin input) { w.findExec(idx, stdin) }), "find")
	add(stay(func(w *walker, idx int, _ Command, stdin input) { w.xargs(idx, stdin) }), "xargs")
	add(stay(func(w *walker, idx int, _ Command, _ input) {
		w.parallel(idx)
		w.execOptions(idx, "parallel") // --ssh CMD
	}), "parallel")
	add(stay(func(w *walker, idx int, _ Command, stdin input) { w.sqlite(idx, stdin) }), "sqlite3")
	add(stay(func(w *walker, idx int, _ Command, stdin input) { w.vimCommands(idx, stdin) }), "ex", "vi", "vim", "nvim", "view", "vimdiff", "gvim", "rvim", "evim")
	add(stay(func(w *walker, _ int, c Command, _ input) {
		w.optionCommands(c, "nix-shell --run", true, "run", "command")
	}), "nix-shell")
	add(stay(func(w *walker, _ int, c Command, stdin input) { w.cmakeTool(c, stdin) }), "cmake")
}

// cmakeTools are the commands of `cmake -E` that do what a program of the
// shell does, as that program's words: cmake -E remove_directory DIR is rm
// -rf DIR, cmake -E chdir DIR CMD is env -C DIR CMD.
var cmakeTools = map[string][]string{
	"rm": {"rm"}, "remove": {"rm"}, "remove_directory": {"rm", "-rf"}, "copy": {"cp"}, "copy_if_different": {"cp"},
	"copy_directory": {"cp", "-r"}, "copy_directory_if_different": {"cp", "-r"}, "rename": {"mv"},
	"make_directory": {"mkdir", "-p"}, "touch": {"touch"}, "touch_nocreate": {"touch", "-c"},
	"create_symlink": {"ln", "-s"}, "create_hardlink": {"ln"}, "env": {"env"}, "chdir": {"env", "-C"},
	"tar": {"tar"}, "cat": {"cat"}, "time": {"time"},
}

// cmakeTool follows `cmake -E TOOL ARGS` as the command it stands for.
func (w *walker) cmakeTool(c Command, stdin input) {
	if len(c.Args) < 2 || c.Args[0] != "-E" || c.Flags[1]&ArgDynamic != 0 {
		return
	}
	words, ok := cmakeTools[c.Args[1]]
	if !ok {
		return
	}
	as := c
	as.Args = append(append([]string(nil), words...), c.Args[2:]...)
	as.Flags = append(make([]ArgFlag, len(words)), c.Flags[2:]...)
	cwd := w.cwd
	w.run(inner(&as, 0, "cmake -E"), stdin)
	w.cwd = cwd
}

// followEval follows eval of text known now.
func followEval(w *walker, _ int, c Command, _ input, in dirs) (ok, fail dirs) {
	if allStatic(c.Flags) {
		return w.nestedVia(strings.Join(c.Args, " "), "eval", c.Pos, c.Via, false, nil)
	}
	w.findAt(FindEval, c, "eval of text only known at run time")
	return in, in
}

// followSource follows source /dev/stdin fed by a here-document.
func followSource(w *walker, _ int, c Command, stdin input, in dirs) (ok, fail dirs) {
	if len(c.Args) > 0 && IsStdinPath(c.Args[0]) && c.Args[0] != "-" && stdin.present {
		if stdin.known {
			return w.nestedVia(stdin.text, c.Name, c.Pos, c.Via, false, nil)
		}
		w.findAt(FindEval, c, c.Name+" of input only known at run time")
	}
	return in, in
}

// alias follows alias NAME=VALUE: the value is analysed as commands now and
// remembered for where the name is run.
func (w *walker) alias(c Command) {
	for i, a := range c.Args {
		name, val, ok := strings.Cut(a, "=")
		if !ok {
			continue
		}
		if c.Flags[i]&ArgDynamic != 0 {
			w.findAt(FindAlias, c, "alias "+name+" is only known at run time")
			continue
		}
		w.nestedVia(val, "alias "+name, c.Pos, c.Via, true, nil)
		if w.aliases == nil {
			w.aliases = map[string]string{}
		}
		w.aliases[name] = val
	}
}

// hash: hash -p PATH NAME makes NAME run another program.
func (w *walker) hash(c Command) {
	for _, a := range c.Args {
		if strings.HasPrefix(a, "-") && strings.Contains(a, "p") {
			w.findAt(FindHash, c, "hash -p makes a command name run another program")
		}
	}
}

// declare follows export, declare … run as a plain command (command export
// X=1, builtin declare …): the same assignments as the declaration clause.
func (w *walker) declare(idx int, c Command) {
	cc := &w.res.Commands[idx]
	for i, a := range c.Args {
		if x, ok := wordAssignment(word{val: a, flags: c.Flags[i]}); ok {
			x.Export = true
			cc.Assigns = append(cc.Assigns, x)
			w.assignVar(x, c.Pos)
		}
	}
}

// optionCommands analyses the values of c's options among names as command
// lines (man -P, nix-shell --run, mapfile -C), in a new shell or this one.
// It reports how many there were.
func (w *walker) optionCommands(c Command, label string, newShell bool, names ...string) int {
	vals := c.Values(names...)
	for _, o := range vals {
		if c.OptFlag(o)&ArgDynamic != 0 {
			w.findAt(FindEval, c, label+" runs a command only known at run time")
			continue
		}
		w.nestedVia(o.Value, label, c.Pos, c.Via, newShell, nil)
	}
	return len(vals)
}

// subscripts flags a variable name with an array subscript given to a builtin
// as text ('a[$(cmd)]'): bash evaluates the subscript, running the command.
func (w *walker) subscripts(c Command) {
	for i, a := range c.Args {
		if c.Flags[i]&ArgDynamic == 0 && strings.IndexByte(a, '[') > 0 && strings.ContainsAny(a, "$`") {
			w.findAt(FindArith, c, c.Name+" evaluates the subscript of "+a+" as arithmetic, which runs what it contains")
			return
		}
	}
}

func allStatic(fs []ArgFlag) bool {
	for _, f := range fs {
		if f&(ArgDynamic|ArgGlob) != 0 {
			return false
		}
	}
	return true
}

func (w *walker) findAt(k FindingKind, c Command, detail string) {
	w.res.Findings = append(w.res.Findings, Finding{Kind: k, Pos: c.Pos, Source: c.Source, Detail: detail})
}

// inner builds the command a wrapper runs from its arguments starting at from.
func inner(c *Command, from int, label string) Command {
	in := Command{
		Pos:       c.Pos,
		Source:    c.Source,
		Assigns:   c.Assigns,
		Redirects: c.Redirects,
		Feeds:     c.Feeds,
		PipedOut:  c.PipedOut,
		Via:       append(append([]string(nil), c.Via...), label),
		MoreArgs:  c.MoreArgs,
		varsDone:  true,
	}
	in.Path = c.Args[from]
	in.Dynamic = c.Flags[from]&(ArgDynamic|ArgGlob) != 0
	if !in.Dynamic {
		in.Name = programName(in.Path)
	}
	in.Args = append([]string(nil), c.Args[from+1:]...)
	in.Flags = append([]ArgFlag(nil), c.Flags[from+1:]...)
	return in
}

// nestedVia analyses text that a shell, eval, trap, alias or a program option
// would run, found in a command that wrappers put in base. A new shell starts with
// its own directory and variables (only seed, the assignments it inherits, are
// known); eval and trap run in this one.
func (w *walker) nestedVia(text, label string, at Pos, base []string, newShell bool, seed []Assignment) (ok, fail dirs) {
	in := w.cwd
	if i := strings.IndexByte(text, 0); i >= 0 {
		text = text[:i] // a program receives its arguments as C strings
	}
	if w.depth >= maxDepth {
		w.res.Findings = append(w.res.Findings, Finding{Kind: FindDepth, Pos: at, Source: text,
			Detail: "strings nested deeper than shellgate follows"})
		return nil, nil
	}
	if d := nesting(text); d > MaxNesting {
		w.costly = fmt.Sprintf("a string it runs nests parentheses or braces %d levels deep, more than the %d analysed", d, MaxNesting)
		w.overBudget = true
		return nil, nil
	}
	f, err := parse(text)
	if err != nil {
		w.res.Findings = append(w.res.Findings, Finding{Kind: FindParse, Pos: at, Source: text,
			Detail: label + ": " + err.Error()})
		return in, in
	}
	src, outer, via, depth, feeds := w.src, w.outer, w.via, w.depth, w.feeds
	w.src, w.depth, w.feeds = text, depth+1, nil
	if outer == nil {
		w.outer = &at
	}
	w.via = append(append([]string(nil), base...), label)
	if newShell {
		w.subshell(func() {
			w.vars = nil
			for _, a := range seed {
				w.assignVar(a, at)
			}
			if a := w.shellArgs; a != nil {
				// sh -c SCRIPT NAME ARGS…: $0 is NAME, $1 … the ARGS.
				w.shellArgs = nil
				if len(a.args) > 0 && a.flags[0]&(ArgDynamic|ArgGlob) == 0 {
					w.setVar("0", varVal{val: a.args[0], known: true})
					w.setPositional(a.args[1:], a.flags[1:], a.more)
				} else {
					w.setPositional(nil, nil, true) // a glob: which word is $0 is not known
				}
			}
			fn, funcs := w.fn, w.funcs
			w.fn, w.funcs = "", nil
			w.stmts(f.Stmts)
			w.fn, w.funcs = fn, funcs
		})
		ok, fail = in, in
	} else {
		ok, fail = w.stmts(f.Stmts)
	}
	w.src, w.outer, w.via, w.depth, w.feeds = src, outer, via, depth, feeds
	return ok, fail
}

// IsCommandVar reports whether name is an environment variable whose value is a
// command line that a program will run (GIT_SSH_COMMAND, PAGER, CC …); the values
// of such assignments are analysed as commands.
func IsCommandVar(name string) bool { return commandVarNames[name] }

var commandVarNames = map[string]bool{
	"GIT_EDITOR": true, "GIT_SEQUENCE_EDITOR": true, "GIT_SSH_COMMAND": true, "GIT_SSH": true,
	"GIT_EXTERNAL_DIFF": true, "GIT_PAGER": true, "GIT_ASKPASS": true, "GIT_PROXY_COMMAND": true,
	"PAGER": true, "MANPAGER": true, "SYSTEMD_PAGER": true, "EDITOR": true, "VISUAL": true,
	"FCEDIT": true, "SSH_ASKPASS": true, "SUDO_ASKPASS": true, "LESSOPEN": true, "LESSCLOSE": true,
	"BROWSER": true, "PROMPT_COMMAND": true, "CC": true, "CXX": true, "CPP": true, "LD": true,
	"AR": true, "RSYNC_RSH": true, "RSYNC_CONNECT_PROG": true, "CVS_RSH": true,
}

// commandVars analyses the values of assignments that are commands.
func (w *walker) commandVars(as []Assignment, at Pos, via []string) {
	for _, a := range as {
		if !commandVarNames[a.Name] {
			continue
		}
		if a.Dynamic {
			w.res.Findings = append(w.res.Findings, Finding{Kind: FindEval, Pos: at, Source: a.Name + "=" + a.Value,
				Detail: a.Name + " is a command only known at run time"})
			continue
		}
		v := a.Value
		if a.Name == "LESSOPEN" || a.Name == "LESSCLOSE" {
			v = strings.TrimLeft(v, "|-")
		}
		w.nestedVia(v, a.Name, at, via, true, nil)
	}
}
