package analysis

import (
	"strings"

	"github.com/shellgate/shellgate/internal/analysis/opts"
)

// wrapper describes a program that runs another command given as its
// operands. Its options are read with its grammar in specs (the options end at
// the first operand, which is the command).
type wrapper struct {
	// skip is the number of operands before the command (timeout's duration,
	// flock's lock file, chroot's new root, taskset's mask).
	skip int
	// none lists options after which there is no command (command -v, ionice -p).
	none []string
	// str lists options whose value is a shell command line (su -c, flock -c).
	str []string
	// shell: with no command the wrapper starts a shell (sudo -s, chroot).
	shell bool
}

var wrappers = map[string]wrapper{
	"env":             {}, // handled by envWrapper
	"command":         {none: []string{"v", "V"}},
	"builtin":         {},
	"exec":            {},
	"nohup":           {},
	"nice":            {},
	"ionice":          {none: []string{"p", "P", "u", "pid", "pgid", "uid"}},
	"timeout":         {skip: 1},
	"time":            {},
	"stdbuf":          {},
	"setsid":          {},
	"sudo":            {shell: true},
	"doas":            {shell: true},
	"pkexec":          {shell: true},
	"su":              {str: []string{"c", "command", "session-command"}, shell: true},
	"runuser":         {str: []string{"c", "command", "session-command"}, shell: true},
	"busybox":         {},
	"flock":           {skip: 1, str: []string{"c", "command"}},
	"unshare":         {shell: true},
	"nsenter":         {shell: true},
	"chroot":          {skip: 1, shell: true},
	"watch":           {},
	"strace":          {},
	"ltrace":          {},
	"valgrind":        {},
	"systemd-run":     {},
	"caffeinate":      {},
	"chronic":         {},
	"sg":              {skip: 1},
	"taskset":         {none: []string{"p", "pid"}},
	"prlimit":         {none: []string{"p", "pid"}},
	"chrt":            {skip: 1, none: []string{"p", "pid"}},
	"setarch":         {skip: 1, none: []string{"list"}},
	"setpriv":         {},
	"firejail":        {},
	"script":          {str: []string{"c", "command"}},
	"unbuffer":        {},
	"catchsegv":       {},
	"faketime":        {skip: 1},
	"proxychains":     {},
	"torsocks":        {},
	"ccache":          {},
	"distcc":          {},
	"fakeroot":        {},
	"numactl":         {},
	"cgexec":          {},
	"systemd-inhibit": {},
	"newgrp":          {skip: 1, shell: true},
	"npx":             {str: []string{"c", "call"}},
	"bunx":            {},
	"pnpx":            {},
}

// shells are the programs treated as bash for "-c STRING" and stdin.
var shells = map[string]bool{
	"bash": true, "sh": true, "zsh": true, "dash": true, "ksh": true, "mksh": true,
	"ash": true, "yash": true, "posh": true, "rbash": true, "fish": true,
}

// unwrap follows the command a wrapper runs.
func (w *walker) unwrap(idx int, u wrapper, stdin input) (ok, fail dirs) {
	in := w.cwd
	c := w.res.Commands[idx]
	if c.Name == "env" {
		return w.envWrapper(idx, stdin)
	}
	if len(u.str) > 0 && w.wrapperStrings(c, u) > 0 || c.Has(u.none...) {
		return in, in
	}
	i := wrappedAt(c, u)
	if i >= len(c.Args) && c.MoreArgs {
		// xargs env < f: the program is the first word xargs reads.
		w.findAt(FindEval, c, c.Name+" runs a program named in its input at run time")
		return in, in
	}
	if i >= len(c.Args) {
		if u.shell {
			sh := inner(&Command{Args: []string{"sh"}, Flags: []ArgFlag{0}, Pos: c.Pos, Source: c.Source, Via: c.Via}, 0, c.Name)
			sh.Feeds = c.Feeds
			return w.run(sh, stdin)
		}
		return in, in
	}
	if c.Name == "watch" {
		if !allStatic(c.Flags[i:]) {
			w.findAt(FindEval, c, c.Name+" runs a command only known at run time")
			return in, in
		}
		return w.nestedVia(strings.Join(c.Args[i:], " "), c.Name, c.Pos, c.Via, true, nil)
	}
	cwd := w.cwd
	w.wrapperEffects(idx, c)
	ok, fail = w.run(inner(&c, i, c.Name), stdin)
	w.cwd = cwd
	if c.Name == "command" || c.Name == "builtin" || c.Name == "exec" {
		return ok, fail // these run builtins such as cd in this shell
	}
	return in, in
}

// wrapperStrings analyses the options of a wrapper whose value is a command
// line (su -c 'cmd', flock f -c 'cmd') and reports how many there were.
func (w *walker) wrapperStrings(c Command, u wrapper) int {
	n := w.optionCommands(c, c.Name+" -c", true, u.str...)
	if c.Name == "flock" && c.OptsEnd < len(c.Args) {
		// flock [options] FILE -c CMD: options may follow the lock file.
		rest := c
		rest.Args, rest.Flags = c.Args[c.OptsEnd+1:], c.Flags[c.OptsEnd+1:]
		rest.ParseOpts()
		n += w.optionCommands(rest, "flock -c", true, u.str...)
	}
	return n
}

// wrappedAt is the index of the command a wrapper runs: after its options,
// the operands it takes first, and options that may follow those.
func wrappedAt(c Command, u wrapper) int {
	if c.Name == "script" {
		// util-linux: script [FILE]; BSD: script [options] [FILE [COMMAND …]],
		// options ending at FILE (util-linux refuses the command; judged anyway).
		return scriptBSD.Parse(c.Args, c.IsDynamic).End + 1
	}
	i := c.OptsEnd + u.skip
	if c.Name == "flock" || c.Name == "chroot" || c.Name == "setarch" {
		if s, _ := specFor(c.Name); s != nil && i < len(c.Args) {
			i += s.Parse(c.Args[i:], func(k int) bool { return c.IsDynamic(k + i) }).End
		}
	}
	if c.Name == "taskset" && i < len(c.Args) && !c.Has("p", "pid") {
		i++ // the CPU mask or list
	}
	return i
}

// ScriptFile is the index of the typescript file script writes (script
// [options] FILE [COMMAND …]), or -1 when it writes the default one.
func ScriptFile(c *Command) int {
	if c.Name != "script" {
		return -1
	}
	if i := scriptBSD.Parse(c.Args, c.IsDynamic).End; i < len(c.Args) {
		return i
	}
	return -1
}

// wrapperEffects records what a wrapper does before running its command:
// time -o writes a file; sudo -D, unshare -w and chroot change directory.
func (w *walker) wrapperEffects(idx int, c Command) {
	switch c.Name {
	case "time":
		cc := &w.res.Commands[idx]
		for _, o := range c.Values("o", "output") {
			cc.Redirects = append(cc.Redirects, Redirect{Op: "time -o", Target: o.Value, Write: true, Dynamic: c.OptFlag(o)&ArgDynamic != 0})
		}
	case "sudo":
		if vals := c.Values("D", "chdir"); len(vals) > 0 {
			o := vals[len(vals)-1]
			w.chdirTo(idx, o.Value, c.OptFlag(o))
		}
	case "unshare", "nsenter", "chroot":
		for _, o := range c.Values("w", "wd", "R", "r", "root") {
			w.chdirTo(idx, o.Value, c.OptFlag(o))
		}
	}
}

// envWrapper follows env [-i] [-u NAME] [-C DIR] [-S STRING] [NAME=VALUE]… [COMMAND…].
func (w *walker) envWrapper(idx int, stdin input) (ok, fail dirs) {
	in := w.cwd
	c := w.res.Commands[idx]
	for _, o := range c.Values("C", "chdir") {
		w.chdirTo(idx, o.Value, c.OptFlag(o))
	}
	i := c.OptsEnd
	var assigns []Assignment
	for ; i < len(c.Args); i++ {
		a, f := c.Args[i], c.Flags[i]
		eq := strings.IndexByte(a, '=')
		if eq <= 0 || !isName(a[:eq]) {
			break
		}
		assigns = append(assigns, Assignment{Name: a[:eq], Value: a[eq+1:], Dynamic: f&ArgDynamic != 0})
	}
	if split := c.Values("S", "split-string"); len(split) > 0 {
		o := split[len(split)-1]
		if c.OptFlag(o)&ArgDynamic != 0 || !allStatic(c.Flags[c.OptsEnd:]) {
			w.findAt(FindEval, c, "env -S runs a command only known at run time")
			return in, in
		}
		// The split string is read again as env's own arguments.
		rest := append([]string{"env", o.Value}, c.Args[c.OptsEnd:]...)
		return w.nestedVia(strings.Join(rest, " "), "env -S", c.Pos, c.Via, true, nil)
	}
	cc := &w.res.Commands[idx]
	cc.Assigns = append(append([]Assignment(nil), cc.Assigns...), assigns...)
	w.commandVars(assigns, c.Pos, c.Via)
	if i >= len(c.Args) && c.MoreArgs {
		// xargs env < f: the program is the first word xargs reads
		// that is not NAME=VALUE.
		w.findAt(FindEval, c, c.Name+" runs a program named in its input at run time")
		return in, in
	}
	if i >= len(c.Args) {
		return in, in
	}
	cwd := w.cwd
	if chd := w.res.Commands[idx].Chdir; len(chd) > 0 {
		w.cwd = dirs(chd)
	} else if w.res.Commands[idx].ChdirUnknown {
		w.cwd = nil
	}
	inn := inner(&w.res.Commands[idx], i, "env")
	w.run(inn, stdin)
	w.cwd = cwd
	return in, in
}

// dirOptions records the directory options of c: those its grammar names
// (opts.Spec.Chdir: make -C, tar -C, patch -d, ninja -C …), and those of npm,
// pnpm, yarn, go and uv, read here.
func (w *walker) dirOptions(idx int) {
	c := w.res.Commands[idx]
	var found []opts.Opt
	if s, ok := specFor(c.Name); ok && len(s.Chdir) > 0 {
		found = c.Values(s.Chdir...)
	}
	switch c.Name {
	case "npm", "pnpm", "yarn":
		// Not getopt: options are exact, and may take a separate value.
		for i, a := range c.Args {
			for _, l := range []string{"--prefix", "--dir", "--cwd", "-C"} {
				if c.Name != "pnpm" && (l == "-C" || l == "--dir") || c.Name != "yarn" && l == "--cwd" {
					continue
				}
				if v, ok := strings.CutPrefix(a, l+"="); ok {
					found = append(found, opts.Opt{Name: l, Value: v, HasValue: true, At: i})
				} else if a == l && i+1 < len(c.Args) {
					found = append(found, opts.Opt{Name: l, Value: c.Args[i+1], HasValue: true, At: i + 1})
				}
			}
		}
	case "go":
		found = c.GlobalValues("C")
	case "uv":
		found = c.Values("directory")
	}
	for _, o := range found {
		w.chdirTo(idx, o.Value, c.OptFlag(o))
	}
}
