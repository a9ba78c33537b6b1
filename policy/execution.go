package policy

import (
	"os"
	"slices"
	"strings"

	"github.com/shellgate/shellgate/internal/analysis"
)

// execution asks about options, config and tools that run other programs.
func (x *check) execution(c *analysis.Command) {
	for _, o := range c.ExecOpts {
		x.ask(RuleExecFlags, "`%s`: %s %s runs another program (rule code-execution): the user must approve it. Run that program directly instead.", c.Source, c.Name, o)
	}
	switch c.Name {
	case "sed":
		x.sedExecution(c)
	case "awk", "gawk", "mawk", "nawk":
		x.awkExecution(c)
	case "git":
		x.gitExecution(c)
	case "source", ".":
		x.source(c)
	}
	if f, what := execFacts.first(x, c); f != nil {
		x.ask(f.rule, "`%s`%s", c.Source, what)
	}
}

// pipedOutput reports strace's -o FILE (-oFILE, --output=FILE) naming a pipe
// to a command: "|CMD" or "!CMD". strace has no grammar here, so every word
// is looked at: the traced command's own -o '|…' is asked about too.
func pipedOutput(c *analysis.Command) bool {
	for i := 0; i < len(c.Args); i++ {
		a, v := c.Args[i], ""
		switch {
		case a == "-o" || a == "--output":
			if i++; i < len(c.Args) {
				v = c.Args[i]
			}
		case strings.HasPrefix(a, "--output="):
			v = a[len("--output="):]
		case strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "o"):
			v = a[strings.IndexByte(a, 'o')+1:] // -fo'|cmd'
		}
		if strings.HasPrefix(v, "|") || strings.HasPrefix(v, "!") {
			return true
		}
	}
	return false
}

// cargoConfigVar is the environment variable a --config KEY=VALUE of c stands
// for (cargo's own mapping: build.rustc-wrapper is CARGO_BUILD_RUSTC_WRAPPER),
// where KEY names a program cargo runs (a runner, linker, rustc or its
// wrapper, a credential provider) or an env.* variable for what it runs; ""
// if none. RUSTC_WRAPPER=x cargo build asks already.
func cargoConfigVar(c *analysis.Command) string {
	for i := 0; i < len(c.Args); i++ {
		a, v := c.Args[i], ""
		switch {
		case a == "--":
			return ""
		case a == "--config" && i+1 < len(c.Args):
			i++
			v = c.Args[i]
		case strings.HasPrefix(a, "--config="):
			v = a[len("--config="):]
		default:
			continue
		}
		key, val, ok := strings.Cut(v, "=")
		if !ok {
			continue // a configuration file
		}
		key = strings.TrimSpace(key)
		last := key[strings.LastIndexByte(key, '.')+1:]
		if !strings.HasPrefix(key, "env.") && !oneOf(last, "runner", "linker", "ar", "rustc", "rustdoc", "rustc-wrapper",
			"rustc-workspace-wrapper", "credential-provider", "global-credential-providers") {
			continue // profile.release.debug, term.color, build.jobs …: settings, not programs
		}
		env := "CARGO_" + strings.ToUpper(strings.NewReplacer(".", "_", "-", "_").Replace(key))
		if !harmlessValue(analysis.Assignment{Name: env, Value: strings.Trim(strings.TrimSpace(val), `"'`)}) {
			return env
		}
	}
	return ""
}

// npmConfigVar is the npm_config_* variable an option of c stands for (npm
// reads every --KEY=VALUE or --KEY VALUE on its command line as its setting
// KEY, which npm_config_KEY sets too: --script-shell=PROG is
// npm_config_script_shell), where that variable asks; "" if none. --prefix
// is left to the directory it names (npm --prefix sub run build).
func npmConfigVar(c *analysis.Command) string {
	for i := 0; i < len(c.Args); i++ {
		a := c.Args[i]
		if a == "--" {
			return ""
		}
		if !strings.HasPrefix(a, "--") || len(a) == 2 {
			continue
		}
		key, val, eq := strings.Cut(a[2:], "=")
		dyn := c.IsDynamic(i)
		if !eq && i+1 < len(c.Args) && !strings.HasPrefix(c.Args[i+1], "-") {
			val, dyn = c.Args[i+1], dyn || c.IsDynamic(i+1)
		}
		as := analysis.Assignment{Name: "npm_config_" + strings.ReplaceAll(key, "-", "_"), Value: val, Dynamic: dyn}
		if key != "prefix" && specialVar(as.Name) && !harmlessValue(as) {
			return as.Name
		}
	}
	return ""
}

// compilerRuns reports a compiler option that runs a program or loads code
// of the user's choosing (gcc and clang): -wrapper PROG runs every
// subprogram through PROG, -B and --prefix DIR take cc1, as and ld from DIR,
// -specs FILE may name other programs, -fplugin loads a library into cc1.
// GCC_EXEC_PREFIX and COMPILER_PATH, their variables, ask too.
func compilerRuns(c *analysis.Command) string {
	for _, a := range c.Args {
		if a == "-wrapper" || a == "-B" || a == "--prefix" || a == "-specs" || a == "--specs" || a == "--ld-path" ||
			strings.HasPrefix(a, "-B") || strings.HasPrefix(a, "--prefix=") || strings.HasPrefix(a, "-specs=") ||
			strings.HasPrefix(a, "--specs=") || strings.HasPrefix(a, "-fplugin=") || strings.HasPrefix(a, "--ld-path=") {
			return a
		}
	}
	return ""
}

// makeSpecialVar is a variable among make's operands that asks where it is
// set before a command (CC=./x, LD_PRELOAD=…, PATH=…): make passes its
// command-line variables to its recipes' environment, and they override the
// makefile's own ($(CC)); "" if none.
func makeSpecialVar(c *analysis.Command) string {
	for _, i := range c.Operands {
		lhs, val, ok := strings.Cut(c.Args[i], "=")
		if !ok {
			continue
		}
		name := strings.TrimSpace(strings.TrimRight(lhs, ":+?"))
		if specialVar(name) && !harmlessValue(analysis.Assignment{Name: name, Value: val, Dynamic: c.IsDynamic(i)}) {
			return name
		}
	}
	return ""
}

// makeShellVar reports a variable assignment among make's operands that runs
// a command: SHELL and .SHELLFLAGS make every recipe line run through what
// they say, and X != CMD runs CMD as make reads it (GNU make parses a
// command-line variable as a makefile line).
func makeShellVar(c *analysis.Command) bool {
	for _, i := range c.Operands {
		lhs, _, ok := strings.Cut(c.Args[i], "=")
		if !ok {
			continue
		}
		if strings.HasSuffix(lhs, "!") || c.IsDynamic(i) && strings.ContainsAny(lhs, "$`") {
			return true // a name only known at run time may be either
		}
		name := strings.TrimSpace(strings.TrimRight(lhs, ":+?"))
		if name == "SHELL" || name == ".SHELLFLAGS" || name == "MAKESHELL" {
			return true
		}
	}
	return false
}

// execFacts are the options and settings that make a program run another
// one, now or later; what a fact says follows the command in the reason.
var execFacts = &catalogue{facts: []fact{
	fact{programs: []string{"make"}, rule: RuleExecFlags,
		test: func(_ *check, c *analysis.Command) string {
			if c.Has("E", "eval") {
				return ": make --eval adds rules that run commands (rule code-execution): the user must approve it."
			}
			if makeShellVar(c) {
				return ": a variable given on make's command line sets the shell its recipes run in or runs a command itself (SHELL=, .SHELLFLAGS=, X!=CMD) (rule code-execution): the user must approve it."
			}
			v := makeSpecialVar(c)
			return when(v != "", " sets "+v+" on make's command line, which overrides the makefile and reaches what its recipes run as NAME=VALUE before make would: it chooses a program they run (rule code-execution): the user must approve it.")
		},
		match: []string{"make --eval='x:; touch y' x", "make -E 'all:; id'", "make --eva='x:;id' x", "make -kE'x:;id' x",
			"make SHELL=/tmp/x", "make .SHELLFLAGS='-c id' all", "make 'X!=id'", "make SHELL:=./x test", "make CC=./x", "make CXX:=/tmp/x++ all",
			"make LD_PRELOAD=./x.so test", "make PATH=./bin:/usr/bin"},
		notMatch: []string{"make -j4 test", "make -e", "make CC=clang V=1 test", "make CC='ccache gcc'", "make PREFIX=/usr/local install", "make 'X=a!=b'", "make -f SHELL=x", "make VERSION=$(git describe) build"}},
	fact{programs: []string{"gdb", "lldb"}, rule: RuleExecFlags,
		test: func(_ *check, c *analysis.Command) string {
			scripted := c.Has("x", "ex", "ix", "iex", "eix", "eiex", "command", "eval-command", "init-command", "init-eval-command",
				"early-init-command", "early-init-eval-command")
			if c.Name == "lldb" {
				scripted = c.Has("o", "O", "s", "S", "k", "K", "one-line", "one-line-before-file", "one-line-on-crash", "source",
					"source-before-file", "source-on-crash")
			}
			return when(scripted, ": the debugger runs scripted commands, which can start any program (rule code-execution): the user must approve it.")
		},
		match: []string{"gdb -batch -ex 'shell id' ./a.out", "lldb -o 'platform shell id' ./a.out", "gdb --eval-command=run ./a",
			"gdb -batch --ex='shell id' ./a", "gdb -batch -eval 'shell id' ./a", "gdb -batch -iex 'shell id' ./a", "gdb -batch -command=x.gdb ./a",
			"lldb --batch --one-line 'platform shell id' ./a", "lldb -b -s x.lldb ./a"},
		notMatch: []string{"gdb -batch ./a.out", "gdb -batch -p 42", "lldb --batch -x ./a", "gdb -batch -e ./a -se ./a"}},
	fact{programs: []string{"cargo"}, rule: RuleExecFlags,
		test: func(_ *check, c *analysis.Command) string {
			env := cargoConfigVar(c)
			return when(env != "", " sets cargo's "+env+" on its command line (--config KEY=VALUE is that variable), which chooses a program cargo runs, or the environment of what it runs (rule code-execution): the user must approve it.")
		},
		match: []string{"cargo --config build.rustc-wrapper=/tmp/x build", "cargo run --config 'target.x86_64-unknown-linux-gnu.runner=\"/tmp/x\"'",
			"cargo build --config=build.rustc=/tmp/x", "cargo build --config env.LD_PRELOAD=/tmp/x.so"},
		notMatch: []string{"cargo build --release", "cargo --config term.color=\"always\" build", "cargo build --config build.incremental=false", "cargo test -- --config x=y",
			"cargo build --config profile.release.debug=true"}},
	fact{programs: []string{"npm", "npx"}, rule: RuleExecFlags,
		test: func(_ *check, c *analysis.Command) string {
			env := npmConfigVar(c)
			return when(env != "", " sets npm's "+env+" on its command line (npm reads --KEY=VALUE as that variable), which chooses the shell its scripts run in, the code node loads or where npm looks for its settings (rule code-execution): the user must approve it.")
		},
		match: []string{"npm --script-shell=/tmp/x run test", "npm run test --script-shell ./x", "npm test --node-options='--require ./x.js'",
			"npx --userconfig ./x.npmrc y", "npm install --globalconfig=./x"},
		notMatch: []string{"npm run build --prefix sub", "npm --prefix sub test", "npm test --silent", "npm install --save-dev x",
			"npm run test -- --script-shell=x", "npm ci --loglevel=error"}},
	fact{programs: []string{"gcc", "g++", "cc", "c++", "clang", "clang++", "gfortran"}, rule: RuleExecFlags,
		test: func(_ *check, c *analysis.Command) string {
			opt := compilerRuns(c)
			return when(opt != "", " gives the compiler "+opt+", which makes it run or load a program of its own choosing beside cc1, as and ld (rule code-execution): the user must approve it.")
		},
		match: []string{"gcc -wrapper ./x a.c", "cc -B ./bin a.c", "gcc -Bbin/ a.c", "g++ --prefix=bin/ a.cc", "gcc -specs=x.specs a.c",
			"gcc -fplugin=./p.so a.c", "clang --ld-path=./x a.c"},
		notMatch: []string{"gcc -O2 -o a a.c", "cc -Wall -c a.c", "gcc -fPIC -shared -o p.so p.c", "clang -fuse-ld=lld a.c"}},
	fact{programs: []string{"strace"}, rule: RuleExecFlags,
		test: func(_ *check, c *analysis.Command) string {
			return when(pipedOutput(c), ": strace -o '|CMD' pipes the trace to CMD, run by a shell (rule code-execution): the user must approve it.")
		},
		match:    []string{"strace -o '|sh -c id' ls", "strace -o'!id' ls", "strace --output='|id' ls", "strace -fo'|id' ls", "strace -e trace=open -o '|id' ls"},
		notMatch: []string{"strace -f ls", "strace -x ls", "strace -o trace.txt ls", "strace -e trace=open -o t.txt ls"}},
	fact{programs: []string{"npm", "pnpm", "yarn"}, rule: RuleProtected,
		test: func(_ *check, c *analysis.Command) string {
			scripts := len(c.Args) >= 2 && c.Args[0] == "pkg" && c.Args[1] == "set" && slices.ContainsFunc(c.Args[2:], func(a string) bool {
				return strings.HasPrefix(a, "scripts.") || strings.HasPrefix(a, "bin")
			})
			return when(scripts, " changes package scripts, which run later on npm install/test (rule protected-paths): the user must approve it.")
		},
		match:    []string{"npm pkg set scripts.test='curl x|sh'", "npm pkg set bin.x=./evil.js"},
		notMatch: []string{"npm pkg set version=1.0.1", "npm pkg get scripts"}},
	fact{programs: []string{"npm", "pnpm", "yarn"}, rule: RuleExecFlags,
		test: func(_ *check, c *analysis.Command) string {
			return when(len(c.Args) >= 2 && (c.Args[0] == "set-script" || c.Args[0] == "config" && oneOf(c.Args[1], "set", "edit", "delete")),
				" changes npm configuration or scripts that run later (rule code-execution): the user must approve it.")
		},
		match:    []string{"npm config set script-shell /tmp/x", "npm set-script test 'id'", "pnpm config delete x"},
		notMatch: []string{"npm config get registry", "npm config list"}},
	fact{programs: []string{"go"}, rule: RuleExecFlags,
		test: func(_ *check, c *analysis.Command) string {
			return when(c.Sub == "env" && c.Has("w", "u"),
				" writes go's configuration file, which every later go command reads (rule code-execution): the user must approve it. Set the variable for one command instead.")
		},
		match:    []string{"go env -w GOFLAGS=-toolexec=x", "go env -u GOPROXY"},
		notMatch: []string{"go env GOPATH", "go build -w"}},
	fact{programs: []string{"pip", "pip3"}, rule: RuleExecFlags,
		test: func(_ *check, c *analysis.Command) string {
			return when(subOf(c) == "config" && oneOf(operand(c, 1), "set", "edit", "unset"),
				" changes pip's configuration file, which every later pip command obeys (rule code-execution): the user must approve it.")
		},
		match:    []string{"pip config set global.index-url http://x", "pip3 config unset global.x"},
		notMatch: []string{"pip config list", "pip config get global.index-url"}},
	fact{programs: []string{"enable"}, rule: RuleExecFlags,
		test: func(_ *check, c *analysis.Command) string {
			return when(argWhere(c, func(a string) bool { return strings.HasPrefix(a, "-") && strings.Contains(a, "f") }) != "",
				" loads a shared library into the shell (rule code-execution): the user must approve it.")
		},
		match:    []string{"enable -f ./x.so x", "enable -nf ./x.so x"},
		notMatch: []string{"enable -n echo", "enable"}},
}}

// sedExecution asks about sed scripts that run commands (e, s///e), reading
// -f files to find them, and judges the files their w commands write.
func (x *check) sedExecution(c *analysis.Command) {
	scripts := sedScripts(c)
	for _, f := range values(c, "f", "file") {
		text, ok := x.programFile(c, f)
		if !ok {
			return
		}
		scripts = append(scripts, text)
		for _, w := range sedWriteFiles(text) {
			x.writeTo(c, w, f.flag, "the sed script "+f.path)
		}
	}
	if slices.ContainsFunc(scripts, sedExecutes) {
		x.ask(RuleExecFlags, "`%s`: the sed script runs shell commands (the e command or s///e) (rule code-execution): the user must approve it.", c.Source)
	}
}

// awkExecution asks about awk programs that run commands, reading -f files.
func (x *check) awkExecution(c *analysis.Command) {
	p, _ := awkProgram(c)
	for _, f := range values(c, "f", "file") {
		text, ok := x.programFile(c, f)
		if !ok {
			return
		}
		p += "\n" + text
		if strings.Contains(text, ">") {
			x.ask(RuleDynamic, "`%s`: the awk program in %s may write files (print >), which shellgate does not follow in program files (rule dynamic). Put the program on the command line.", c.Source, f.path)
		}
	}
	if awkRunsCommands(p) {
		x.ask(RuleExecFlags, "`%s`: the awk program runs shell commands (system() or a | pipe) (rule code-execution): the user must approve it.", c.Source)
	}
}

// maxProgramFile bounds the program files (sed -f, awk -f) read to judge them.
const maxProgramFile = 64 << 10

// programFile reads a program file of c (sed -f, awk -f) to judge what it
// runs. A file it cannot read — only known at run time, missing (and not
// written by the line, which runsScript judges), too large, or a device —
// asks, and ok is false.
func (x *check) programFile(c *analysis.Command, f target) (string, bool) {
	pl, r := x.where(c, f.path, f.flag)
	if pl == unknown || analysis.IsStdinPath(f.path) {
		return "", false // judged as dynamic, or as standard input
	}
	if x.writtenFiles()[r] != "" {
		return "", false // runsScript asks
	}
	fi, err := os.Stat(r)
	if err == nil && fi.Mode().IsRegular() && fi.Size() <= maxProgramFile {
		if b, err := os.ReadFile(r); err == nil {
			return string(b), true
		}
	}
	x.ask(RuleStoredCode, "`%s`: %s runs the program in %s, which shellgate could not read to check (rule stored-code). Put the program on the command line.", c.Source, c.Name, f.path)
	return "", false
}

// source asks about sourcing anything but a file inside the project.
func (x *check) source(c *analysis.Command) {
	if len(c.Args) == 0 {
		return
	}
	a, f := c.Args[0], c.Flags[0]
	pl, r := x.where(c, a, f)
	if pl == inside && r != "" && !strings.HasPrefix(a, "/dev/") {
		return
	}
	x.ask(RuleStoredCode, "`%s` runs the commands in %s, which is not a file in the project (rule stored-code), so they cannot be checked. Run the commands directly.", c.Source, a)
}

// gitExecution asks about git options and config that run programs or move
// where git looks for them.
func (x *check) gitExecution(c *analysis.Command) {
	for _, o := range c.Global {
		switch o.Name {
		case "c":
			key, val, _ := strings.Cut(o.Value, "=")
			if analysis.GitKeyRedirects(strings.ToLower(key), val) {
				x.ask(RuleExecFlags, "`%s`: git -c %s changes where git finds programs or config to run (rule code-execution): the user must approve it.", c.Source, key)
			}
		case "exec-path", "config-env":
			if o.HasValue || o.Name == "config-env" {
				x.ask(RuleExecFlags, "`%s`: --%s changes which programs git runs (rule code-execution): the user must approve it.", c.Source, o.Name)
			}
		}
	}
	if c.Sub == "clone" {
		for _, o := range c.Values("c", "config") {
			key, val, _ := strings.Cut(o.Value, "=")
			if analysis.GitKeyRedirects(strings.ToLower(key), val) {
				x.ask(RuleExecFlags, "`%s`: git clone --config %s changes where git finds programs or config to run (rule code-execution): the user must approve it.", c.Source, key)
			}
		}
	}
	if c.Sub != "" {
		x.gitSubExecution(c, c.Sub, gitRest(c))
	}
}

func (x *check) gitSubExecution(c *analysis.Command, sub string, rest []string) {
	switch sub {
	case "config":
		if c.Has("get", "get-all", "get-regexp", "list", "l", "get-urlmatch", "show-origin", "show-scope", "get-color", "get-colorbool") {
			return // reading
		}
		ops := argTargets(c, c.Operands)
		if len(ops) > 0 && (ops[0].path == "get" || ops[0].path == "list") {
			return
		}
		if len(ops) > 0 && (ops[0].path == "set" || ops[0].path == "unset") {
			ops = ops[1:]
		}
		if len(ops) < 2 && !(len(ops) == 1 && c.Has("unset", "unset-all", "remove-section", "rename-section", "edit", "e")) {
			return // reading one key
		}
		if c.Has("global", "system") {
			x.deny(RuleConfinement, "`%s` writes git's global configuration in the home directory, outside the project (rule confinement). Use a repository setting (git config without --global) if one is needed.", c.Source)
			return
		}
		key, val := "", ""
		if len(ops) > 0 {
			key = strings.ToLower(ops[0].path)
		}
		if len(ops) > 1 {
			val = ops[1].path
		}
		if analysis.GitKey(key, val)&(analysis.GitRuns|analysis.GitRedirects) != 0 || strings.HasPrefix(key, "alias.") {
			x.ask(RuleExecFlags, "`%s` sets %s, which makes git run a program later (rule code-execution): the user must approve it.", c.Source, key)
		}
	case "clone", "fetch", "pull", "ls-remote", "submodule", "push", "remote":
		for _, a := range rest {
			if strings.HasPrefix(a, "ext::") || strings.HasPrefix(a, "fd::") {
				x.ask(RuleExecFlags, "`%s`: the %s transport runs a command (rule code-execution): the user must approve it.", c.Source, a[:strings.Index(a, "::")+2])
				return
			}
		}
	case "update-index":
		// --cacheinfo 120000,… adds a symlink that checkout will create,
		// pointing wherever the blob says.
		for _, o := range c.Values("cacheinfo") {
			if strings.HasPrefix(o.Value, "120000") {
				x.ask(RuleDynamic, "`%s` adds a symlink to the index; checking it out creates a link whose target shellgate cannot see (rule dynamic). Create links with ln -s instead.", c.Source)
				return
			}
		}
		if c.Has("index-info") {
			x.ask(RuleDynamic, "`%s` adds entries from input, symlinks included, whose targets shellgate cannot see (rule dynamic). Create links with ln -s instead.", c.Source)
		}
	case "filter-branch":
		x.ask(RuleExecFlags, "`%s`: git filter-branch runs shell filters over history (rule code-execution): the user must approve it.", c.Source)
	}
}

func hasArg(args []string, opts ...string) bool {
	for _, a := range args {
		for _, o := range opts {
			if a == o {
				return true
			}
		}
	}
	return false
}

// awkProgram returns the program text of an awk command line: -e/--source
// values (gawk), or the first operand when no -f file gives it.
func awkProgram(c *analysis.Command) (string, bool) {
	var parts []string
	for _, o := range c.Values("e", "source") {
		parts = append(parts, o.Value)
	}
	if len(parts) == 0 && len(c.Values("f", "file")) == 0 && len(c.Operands) > 0 {
		parts = append(parts, c.Args[c.Operands[0]])
	}
	return strings.Join(parts, "\n"), len(parts) > 0
}

// awkReads are the files an awk program reads with getline < "file" (a
// string literal; one only known at run time is not listed).
func awkReads(c *analysis.Command) []string {
	p, ok := awkProgram(c)
	if !ok {
		return nil
	}
	var out []string
	for rest := p; ; {
		i := strings.Index(rest, "getline")
		if i < 0 {
			return out
		}
		rest = rest[i+len("getline"):]
		t := strings.TrimLeft(rest, " \t")
		// getline var < "file": a variable name first.
		for len(t) > 0 && (t[0] == '_' || t[0] >= 'a' && t[0] <= 'z' || t[0] >= 'A' && t[0] <= 'Z' || t[0] >= '0' && t[0] <= '9') {
			t = t[1:]
		}
		t = strings.TrimLeft(t, " \t")
		if !strings.HasPrefix(t, "<") {
			continue
		}
		t = strings.TrimLeft(t[1:], " \t")
		if strings.HasPrefix(t, "\"") {
			if end := strings.IndexByte(t[1:], '"'); end >= 0 {
				out = append(out, t[1:1+end])
			}
		}
	}
}

// awkTargets are the files an awk program writes with print > "file" and
// print >> "file"; a target that is not a string literal is only known at
// run time.
func awkTargets(c *analysis.Command) []target {
	p, ok := awkProgram(c)
	if !ok {
		return nil
	}
	var out []target
	for i := 0; i < len(p); i++ {
		if !strings.HasPrefix(p[i:], "print") {
			continue
		}
		depth := 0
		inStr := false
		for j := i + 5; j < len(p); j++ {
			ch := p[j]
			switch {
			case inStr:
				if ch == '\\' {
					j++
				} else if ch == '"' {
					inStr = false
				}
				continue
			case ch == '"':
				inStr = true
				continue
			case ch == '(':
				depth++
				continue
			case ch == ')':
				depth--
				continue
			case ch == ';' || ch == '}' || ch == '\n':
			case ch == '>' && depth <= 0:
				rest := strings.TrimLeft(strings.TrimPrefix(p[j+1:], ">"), " \t")
				if strings.HasPrefix(rest, "\"") {
					if end := strings.IndexByte(rest[1:], '"'); end >= 0 && !strings.Contains(rest[1:1+end], "\\") {
						out = append(out, target{rest[1 : 1+end], 0})
						i = j
						break
					}
				}
				out = append(out, target{strings.Fields(rest + " x")[0], analysis.ArgDynamic})
				i = j
			default:
				continue
			}
			break
		}
	}
	if len(out) > 0 && len(c.Operands) > 0 && c.Flags[c.Operands[0]]&analysis.ArgDynamic != 0 {
		return []target{{"the files the awk program names", analysis.ArgDynamic}}
	}
	return out
}

// awkRunsCommands reports system(), "cmd" | getline, print | "cmd" and |&.
func awkRunsCommands(p string) bool {
	if strings.Contains(p, "system") {
		return true
	}
	p = strings.ReplaceAll(p, "||", "")
	return strings.Contains(p, "|")
}
