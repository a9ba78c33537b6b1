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

// findExec follows find … -exec/-execdir/-ok/-okdir COMMAND… ; or +.
func (w *walker) findExec(idx int, stdin input) {
	c := w.res.Commands[idx]
	starts := FindStartingPoints(c.Args)
	for i := 0; i < len(c.Args); i++ {
		action := c.Args[i]
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
		var found ArgFlag
		n := programName(c.Args[i+1])
		if _, wrapped := wrappers[n]; shells[n] || wrapped || n == "eval" || n == "source" || n == "." {
			found = ArgDynamic
		}
		for k := i + 1; k < j; k++ {
			a, f := c.Args[k], c.Flags[k]
			switch {
			case a == "{}":
				for n, s := range starts {
					again := ArgFlag(0)
					if n > 0 {
						again = ArgFoundAgain
					}
					cmd.Args = append(cmd.Args, s)
					cmd.Flags = append(cmd.Flags, f|found|ArgFound|again)
				}
			case strings.Contains(a, "{}"):
				cmd.Args = append(cmd.Args, strings.ReplaceAll(a, "{}", strings.TrimSuffix(starts[0], "/")+"/x"))
				cmd.Flags = append(cmd.Flags, f|found|ArgFoundIn)
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
	if repl != "" {
		for k, a := range in.Args {
			if strings.Contains(a, repl) {
				in.Flags[k] |= ArgDynamic
			}
		}
	}
	w.run(in, input{})
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
