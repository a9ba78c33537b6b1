package analysis

import (
	"slices"
	"strings"
)

// FindStartingPoints returns the paths find searches ("." when none is given).
func FindStartingPoints(args []string) []string {
	var starts []string
	for _, a := range args {
		if len(a) > 1 && a[0] == '-' || a == "(" || a == "!" || a == "," {
			break
		}
		starts = append(starts, a)
	}
	if len(starts) == 0 {
		starts = []string{"."}
	}
	return starts
}

// findExec follows find … -exec/-execdir/-ok/-okdir COMMAND… ; or +, where
// {} is what find's tests select (FindSelected), and -delete, which deletes
// it as rm -rf would.
func (w *walker) findExec(idx int, stdin input) {
	c := w.res.Commands[idx]
	starts := FindStartingPoints(c.Args)
	for i := 0; i < len(c.Args); i++ {
		action := c.Args[i]
		if action == "-delete" {
			found, ff, _ := FindSelected(c.Args, c.Flags, i)
			cmd := Command{Pos: c.Pos, Source: c.Source, Via: c.Via, Feeds: c.Feeds, Redirects: c.Redirects,
				Args: append([]string{"rm", "-r", "-f"}, found...), Flags: append([]ArgFlag{0, 0, 0}, ff...)}
			w.run(inner(&cmd, 0, "find -delete"), input{})
			continue
		}
		if action != "-exec" && action != "-execdir" && action != "-ok" && action != "-okdir" {
			continue
		}
		j := i + 1
		for j < len(c.Args) && c.Args[j] != ";" && c.Args[j] != "+" {
			j++
		}
		if j == i+1 {
			continue
		}
		cmd := Command{Pos: c.Pos, Source: c.Source, Via: c.Via, Feeds: c.Feeds, Redirects: c.Redirects}
		// What find finds lies below its starting points; but given to a shell
		// or eval, a file name is code only known at run time.
		var dyn ArgFlag
		n := programName(c.Args[i+1])
		if _, wrapped := wrappers[n]; shells[n] || wrapped || n == "eval" || n == "source" || n == "." {
			dyn = ArgDynamic
		}
		found, ff, named := FindSelected(c.Args, c.Flags, i)
		if named && (action == "-execdir" || action == "-okdir") {
			for x, s := range found {
				found[x] = "./" + s[strings.LastIndexByte(s, '/')+1:] // in the directory that holds it
			}
		}
		for k := i + 1; k < j; k++ {
			a, f := c.Args[k], c.Flags[k]
			switch {
			case a == "{}":
				for x, s := range found {
					again := ArgFlag(0)
					if x > 0 {
						again = ArgFoundAgain
					}
					cmd.Args = append(cmd.Args, s)
					cmd.Flags = append(cmd.Flags, f|ff[x]|dyn|ArgFound|again)
				}
			case strings.Contains(a, "{}") && named:
				cmd.Args = append(cmd.Args, strings.ReplaceAll(a, "{}", found[0]))
				cmd.Flags = append(cmd.Flags, f|ff[0]|dyn|ArgFoundIn)
			case strings.Contains(a, "{}"):
				cmd.Args = append(cmd.Args, strings.ReplaceAll(a, "{}", strings.TrimSuffix(starts[0], "/")+"/x"))
				cmd.Flags = append(cmd.Flags, f|dyn|ArgFoundIn)
			default:
				cmd.Args = append(cmd.Args, a)
				cmd.Flags = append(cmd.Flags, f)
			}
		}
		in := inner(&cmd, 0, "find "+action)
		cwd := w.cwd
		if action == "-execdir" || action == "-okdir" {
			var ds dirs
			for _, s := range starts {
				for _, a := range cwd.join(s) {
					ds = append(ds, w.resolve(a))
				}
			}
			w.cwd = ds
		}
		w.run(in, input{})
		w.cwd = cwd
		i = j
	}
}

// xargs follows xargs [options] [COMMAND…]: the command gets more arguments
// from input at run time.
func (w *walker) xargs(idx int, stdin input) {
	c := w.res.Commands[idx]
	i := c.OptsEnd
	repl := ""
	for _, o := range c.Opts {
		switch o.Name {
		case "I", "J", "R":
			repl = o.Value
		case "i", "replace":
			repl = "{}"
			if o.HasValue && o.Value != "" {
				repl = o.Value
			}
		}
	}
	var in Command
	if i >= len(c.Args) {
		in = inner(&Command{Args: []string{"echo"}, Flags: []ArgFlag{0}, Via: c.Via, Pos: c.Pos, Source: c.Source}, 0, "xargs")
	} else {
		in = inner(&c, i, "xargs")
	}
	in.MoreArgs = true
	in.Feeds = c.Feeds
	if found, ff, ok := w.findPrinted(c); ok && repl == "" {
		// find … -print0 | xargs -0 CMD: the arguments are what find selects.
		in.Args, in.Flags = append(in.Args, found...), append(in.Flags, ff...)
		in.MoreArgs = false
	}
	if repl != "" {
		for k, a := range in.Args {
			if strings.Contains(a, repl) {
				in.Flags[k] |= ArgDynamic
			}
		}
	}
	w.run(in, input{})
}

// findPrinted returns what find prints where xargs reads nothing but one
// find's -print0 with -0: each argument is then one path find selected
// (FindSelected). Split at blanks (no -0), a name may become other paths.
func (w *walker) findPrinted(x Command) ([]string, []ArgFlag, bool) {
	if !x.Has("0", "null") || len(x.Feeds) != 1 || x.Feeds[0] >= len(w.res.Commands) {
		return nil, nil, false
	}
	f := w.res.Commands[x.Feeds[0]]
	if f.Name != "find" || f.Dynamic {
		return nil, nil, false
	}
	for _, r := range f.Redirects {
		if r.Target != "/dev/null" || r.Dynamic {
			return nil, nil, false // what else reaches its output?
		}
	}
	at := -1
	for i, a := range f.Args {
		switch a {
		case "-print0":
			if at >= 0 {
				return nil, nil, false
			}
			at = i
		case "-print", "-printf", "-ls", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls":
			return nil, nil, false // more output, or other words in it
		}
	}
	if at < 0 {
		return nil, nil, false
	}
	found, ff, _ := FindSelected(f.Args, f.Flags, at)
	return found, ff, true
}

// parallel follows GNU parallel [options] COMMAND … ::: ARGS …: the command
// runs through a shell with each argument appended (quoted); with no :::, the
// arguments come from input, as with xargs.
func (w *walker) parallel(idx int) {
	c := w.res.Commands[idx]
	i := c.OptsEnd
	if i >= len(c.Args) {
		return
	}
	sep := len(c.Args)
	for k := i; k < len(c.Args); k++ {
		if strings.HasPrefix(c.Args[k], ":::") || c.Args[k] == "::::" {
			sep = k
			break
		}
	}
	if sep == len(c.Args) {
		in := inner(&c, i, "parallel")
		in.Args, in.Flags = in.Args[:sep-i-1], in.Flags[:sep-i-1]
		in.MoreArgs = true
		w.run(in, input{})
		return
	}
	if i == sep {
		w.parallelLines(c, sep)
		return
	}
	if !allStatic(c.Flags[i:sep]) {
		w.findAt(FindEval, c, "parallel runs a command only known at run time")
		return
	}
	text := strings.Join(c.Args[i:sep], " ")
	fromFile := false
	for k := sep; k < len(c.Args); k++ {
		if strings.HasPrefix(c.Args[k], ":::") {
			fromFile = c.Args[k] == "::::" || c.Args[k] == "::::+"
			continue
		}
		if fromFile || c.Flags[k]&ArgDynamic != 0 {
			text += ` "$parallel_arg"` // a file's lines, or only known at run time
			continue
		}
		text += " '" + strings.ReplaceAll(c.Args[k], "'", `'\''`) + "'"
	}
	w.nestedVia(text, "parallel", c.Pos, c.Via, true, nil)
}

// parallelLines follows parallel with no command: each argument after :::
// is a command line it runs; those after :::: name files of command lines.
func (w *walker) parallelLines(c Command, sep int) {
	fromFile := false
	for k := sep; k < len(c.Args); k++ {
		a := c.Args[k]
		if strings.HasPrefix(a, ":::") {
			fromFile = a == "::::" || a == "::::+"
			continue
		}
		if fromFile || c.Flags[k]&ArgDynamic != 0 {
			w.findAt(FindEval, c, "parallel runs command lines only known at run time")
			continue
		}
		w.nestedVia(a, "parallel", c.Pos, c.Via, true, nil)
	}
}

// subcommandRunners run the command after a subcommand in the project's
// environment: uv run CMD, npm exec -- CMD, bundle exec CMD, direnv exec DIR CMD.
var subcommandRunners = map[string][]string{
	"uv": {"run"}, "poetry": {"run"}, "pipenv": {"run"}, "pdm": {"run"}, "hatch": {"run"}, "rye": {"run"},
	"pixi": {"run"}, "conda": {"run"}, "mamba": {"run"}, "npm": {"exec", "x"}, "pnpm": {"exec", "dlx"},
	"yarn": {"exec", "dlx"}, "bun": {"x"}, "bundle": {"exec"}, "direnv": {"exec"}, "mise": {"exec", "x"},
	"asdf": {"exec"}, "rtx": {"exec", "x"}, "nix": {"develop", "shell"}, "devbox": {"run"}, "flox": {"activate"},
}

// runner follows a project runner: after its subcommand, options (words
// starting with -) until "--" or the command. uv run's options are read
// with their values (uvRunStarts).
func (w *walker) runner(idx int, subs []string) {
	c := w.res.Commands[idx]
	at := c.Operands[0]
	found := false
	for _, s := range subs {
		found = found || c.Args[at] == s
	}
	if !found {
		return
	}
	i := at + 1
	if c.Name == "direnv" {
		i++ // the directory
	}
	if c.Name == "uv" {
		w.uvRun(idx, at)
		return
	}
	for i < len(c.Args) && strings.HasPrefix(c.Args[i], "-") {
		if c.Args[i] == "--" || c.Args[i] == "-c" || c.Args[i] == "--command" {
			i++
			break
		}
		i++
	}
	if i >= len(c.Args) {
		return
	}
	w.run(inner(&c, i, c.Name+" "+c.Args[at]), input{})
}

// uvRun follows uv [--directory DIR] run [options] COMMAND, in DIR.
func (w *walker) uvRun(idx, at int) {
	w.dirOptions(idx)
	c := w.res.Commands[idx]
	// uv's global options may follow run too: uv run --directory DIR CMD.
	starts := uvRunStarts(c.Args, at+1, 0)
	for k := at + 1; k < len(c.Args) && k < slices.Max(starts); k++ {
		if v, ok := strings.CutPrefix(c.Args[k], "--directory="); ok {
			w.chdirTo(idx, v, c.Flags[k])
		} else if c.Args[k] == "--directory" && k+1 < len(c.Args) {
			w.chdirTo(idx, c.Args[k+1], c.Flags[k+1])
		}
	}
	c = w.res.Commands[idx]
	cwd := w.cwd
	if len(c.Chdir) > 0 {
		w.cwd = dirs(c.Chdir)
	} else if c.ChdirUnknown {
		w.cwd = nil
	}
	for _, i := range starts {
		if i < len(c.Args) {
			w.run(inner(&c, i, "uv run"), input{})
		}
	}
	w.cwd = cwd
}

// uvRunValues are uv run's options that take a value as the next word.
var uvRunValues = map[string]bool{
	"--extra": true, "--no-extra": true, "--group": true, "--no-group": true, "--only-group": true, "--with": true,
	"--with-editable": true, "--with-requirements": true, "--env-file": true, "--package": true, "--index": true,
	"--default-index": true, "--index-url": true, "-i": true, "--extra-index-url": true, "--find-links": true, "-f": true,
	"--index-strategy": true, "--keyring-provider": true, "--resolution": true, "--prerelease": true, "--fork-strategy": true,
	"--exclude-newer": true, "--exclude-newer-package": true, "--no-build-isolation-package": true, "--config-setting": true,
	"-C": true, "--config-settings-package": true, "--no-binary-package": true, "--no-build-package": true, "--link-mode": true,
	"--refresh-package": true, "--upgrade-package": true, "-P": true, "--reinstall-package": true, "--python": true, "-p": true,
	"--python-platform": true, "--cache-dir": true, "--color": true, "--config-file": true, "--directory": true, "--project": true,
	"--allow-insecure-host": true, "--python-preference": true, "--torch-backend": true,
}

// uvRunFlags are uv run's options without a value (and its bundled short flags' letters).
var uvRunFlags = map[string]bool{
	"--all-extras": true, "--all-groups": true, "--all-packages": true, "--no-dev": true, "--dev": true, "--only-dev": true,
	"--no-default-groups": true, "--frozen": true, "--locked": true, "--isolated": true, "--active": true, "--no-active": true,
	"--no-sync": true, "--no-editable": true, "--no-project": true, "--no-env-file": true, "--offline": true, "--no-cache": true,
	"--refresh": true, "--upgrade": true, "--reinstall": true, "--compile-bytecode": true, "--no-build-isolation": true,
	"--no-build": true, "--no-binary": true, "--no-sources": true, "--native-tls": true, "--quiet": true, "--verbose": true,
	"--no-progress": true, "--no-config": true, "--managed-python": true, "--no-managed-python": true,
	"--no-python-downloads": true, "--script": true, "--gui-script": true, "--module": true, "--exact": true, "--inexact": true,
	"--help": true, "--no-index": true, "--preview": true, "--no-preview": true, "--show-resolution": true,
}

// uvRunStarts are where the command uv run runs may start in args, its
// options read from i: an option shellgate does not know may take a value
// or not, so both readings are followed (a few at most).
func uvRunStarts(args []string, i, depth int) []int {
	for i < len(args) {
		a := args[i]
		switch {
		case a == "--":
			return []int{i + 1}
		case !strings.HasPrefix(a, "-") || a == "-":
			return []int{i}
		case strings.HasPrefix(a, "--") && strings.Contains(a, "="), uvRunFlags[a],
			!strings.HasPrefix(a, "--") && strings.Trim(a[1:], "qvnsmUh") == "":
			i++
		case uvRunValues[a]:
			i += 2
		case depth < 3:
			return append(uvRunStarts(args, i+2, depth+1), uvRunStarts(args, i+1, depth+1)...)
		default:
			i++
		}
	}
	return []int{i}
}

var findArgCount = map[string]int{
	"-name": 1, "-iname": 1, "-path": 1, "-ipath": 1, "-wholename": 1, "-iwholename": 1, "-regex": 1, "-iregex": 1,
	"-lname": 1, "-ilname": 1, "-type": 1, "-xtype": 1, "-user": 1, "-group": 1, "-uid": 1, "-gid": 1, "-perm": 1,
	"-size": 1, "-mtime": 1, "-atime": 1, "-ctime": 1, "-mmin": 1, "-amin": 1, "-cmin": 1, "-newer": 1, "-anewer": 1,
	"-cnewer": 1, "-samefile": 1, "-inum": 1, "-links": 1, "-used": 1, "-fstype": 1, "-maxdepth": 1, "-mindepth": 1,
	"-regextype": 1, "-context": 1, "-fprint": 1, "-fprint0": 1, "-fls": 1, "-printf": 1, "-fprintf": 2, "-files0-from": 1,
	"-D": 1, "-O": 0, "-true": 0, "-false": 0, "-empty": 0, "-executable": 0, "-readable": 0, "-writable": 0,
	"-nouser": 0, "-nogroup": 0, "-depth": 0, "-d": 0, "-prune": 0, "-quit": 0, "-print": 0, "-print0": 0, "-ls": 0,
	"-delete": 0, "-xdev": 0, "-mount": 0, "-noleaf": 0, "-ignore_readdir_race": 0, "-noignore_readdir_race": 0,
	"-daystart": 0, "-warn": 0, "-nowarn": 0, "-a": 0, "-and": 0, "-o": 0, "-or": 0, "!": 0, "-not": 0, "(": 0, ")": 0,
	",": 0, "-H": 0, "-P": 0,
}

// nameTests are find's tests that say what a found path's name is.
var nameTests = map[string]bool{"-name": true, "-iname": true, "-path": true, "-ipath": true, "-wholename": true, "-iwholename": true}

// FindSelected returns what the action at args[at] (-exec, -delete,
// -print0 …) acts on, as paths for the policy to judge: a path whose last
// name is what a name test the action runs behind says (find . -name
// __pycache__ -exec rm -rf {} + acts on ./__pycache__ and the like, never on
// .git), or else the starting points themselves (find . -exec rm -rf {} +
// may act on everything in ., and . itself). A test holds for the action when
// it is in the run of tests joined by -a before it, in its own group or an
// enclosing one, not negated; -o and , start a new run. A pattern's glob
// characters match a leading dot, as find's do (ArgGlobDot). Where find
// follows links (-L, -follow) a found path may lie elsewhere: the starting
// points stand.
func FindSelected(args []string, flags []ArgFlag, at int) (found []string, ff []ArgFlag, named bool) {
	n := 0
	for n < len(args) && !(len(args[n]) > 1 && args[n][0] == '-' || args[n] == "(" || args[n] == "!" || args[n] == ",") {
		found, ff = append(found, args[n]), append(ff, flags[n])
		n++
	}
	if n == 0 {
		found, ff = []string{"."}, []ArgFlag{0}
	}
	name, nf, ok := findNameBefore(args, flags, n, at)
	if !ok {
		return found, ff, false
	}
	for i, s := range found {
		found[i], ff[i] = strings.TrimSuffix(s, "/")+"/"+name, ff[i]|nf
	}
	return found, ff, true
}

// findNameBefore returns the name every path the action at args[at] acts on
// has, as a pattern, from the name tests that hold for it (see FindSelected).
func findNameBefore(args []string, flags []ArgFlag, from, at int) (string, ArgFlag, bool) {
	type test struct {
		pattern string
		glob    bool
	}
	var stack [][]test // the runs of the enclosing groups
	var run []test
	negated := false
	for k := from; k < at; k++ {
		a := args[k]
		if flags[k]&ArgDynamic != 0 {
			return "", 0, false
		}
		switch {
		case a == "-L" || a == "-follow":
			return "", 0, false
		case a == "(":
			stack, run = append(stack, run), nil
		case a == ")":
			if len(stack) == 0 {
				return "", 0, false
			}
			run, stack = stack[len(stack)-1], stack[:len(stack)-1]
		case a == "-o" || a == "-or" || a == ",":
			run = nil
		case a == "!" || a == "-not":
			negated = true
			continue
		case a == "-exec" || a == "-execdir" || a == "-ok" || a == "-okdir":
			for k++; k < at && args[k] != ";" && args[k] != "+"; k++ {
			}
		case nameTests[a] && k+1 < at:
			if !negated && flags[k+1]&ArgDynamic == 0 {
				p := args[k+1]
				if a != "-name" && a != "-iname" {
					p = lastName(p)
				}
				run = append(run, test{p, strings.ContainsAny(p, `*?[\`)})
			}
			k++
		case strings.HasPrefix(a, "-newer") && len(a) == 8:
			k++ // -newerXY REFERENCE
		default:
			c, known := findArgCount[a]
			if !known {
				return "", 0, false // a value or an operator? Unknown.
			}
			k += c
		}
		negated = false
	}
	var best *test
	for _, r := range append(stack, run) {
		for i := range r {
			if best == nil || best.glob && !r[i].glob {
				best = &r[i]
			}
		}
	}
	if best == nil {
		return "", 0, false
	}
	if best.glob {
		return best.pattern, ArgGlob | ArgGlobDot, true
	}
	return best.pattern, 0, true
}

// lastName is what the last name of a path that -path PATTERN matches
// matches: PATTERN's part after its last /, which a glob character there
// may stretch over more names (find's * and ? match / too), so only its
// literal end is kept.
func lastName(p string) string {
	s := p[strings.LastIndexByte(p, '/')+1:]
	if i := strings.LastIndexAny(s, `*?[]\`); i >= 0 {
		return "*" + s[i+1:]
	}
	return s
}
