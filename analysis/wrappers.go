package analysis

import "strings"

// wrapper describes a program that runs another command given as its operands.
type wrapper struct {
	opts optSpec
	// skip is the number of operands before the command (timeout's duration,
	// flock's lock file, chroot's new root).
	skip int
	// none lists options after which there is no command (command -v, ionice -p).
	none string
	// string lists options whose value is a shell command line (su -c, flock -c).
	str string
	// shell: with no command the wrapper starts a shell (sudo -s, chroot).
	shell bool
}

var wrappers = map[string]wrapper{
	"env":         {}, // handled by envWrapper
	"command":     {none: "vV"},
	"builtin":     {},
	"exec":        {opts: optSpec{short: "a"}},
	"nohup":       {},
	"nice":        {opts: optSpec{short: "n", long: []string{"--adjustment"}}},
	"ionice":      {opts: optSpec{short: "cnpPu", long: []string{"--class", "--classdata", "--pid", "--pgid", "--uid"}}, none: "pPu"},
	"timeout":     {opts: optSpec{short: "sk", long: []string{"--signal", "--kill-after"}}, skip: 1},
	"time":        {opts: optSpec{short: "of", long: []string{"--output", "--format"}}},
	"stdbuf":      {opts: optSpec{short: "ioe", long: []string{"--input", "--output", "--error"}}},
	"setsid":      {},
	"sudo":        {opts: optSpec{short: "ugChpUrtTRD", long: []string{"--user", "--group", "--host", "--prompt", "--close-from", "--chdir", "--role", "--type", "--other-user", "--command-timeout", "--chroot"}}, shell: true},
	"doas":        {opts: optSpec{short: "uC"}, shell: true},
	"pkexec":      {opts: optSpec{long: []string{"--user"}}, shell: true},
	"su":          {opts: optSpec{short: "cgGsw", long: []string{"--command", "--group", "--supp-group", "--shell", "--whitelist-environment"}}, str: "c", shell: true},
	"runuser":     {opts: optSpec{short: "cgGsuw", long: []string{"--command", "--group", "--supp-group", "--shell", "--user", "--whitelist-environment"}}, str: "c", shell: true},
	"busybox":     {},
	"flock":       {opts: optSpec{short: "wEc", long: []string{"--timeout", "--conflict-exit-code", "--command"}}, skip: 1, str: "c"},
	"unshare":     {opts: optSpec{short: "SGRw", long: []string{"--setuid", "--setgid", "--root", "--wd", "--propagation", "--setgroups", "--map-user", "--map-group", "--map-users", "--map-groups"}}, shell: true},
	"nsenter":     {opts: optSpec{short: "tSGrw", long: []string{"--target", "--setuid", "--setgid", "--root", "--wd"}}, shell: true},
	"chroot":      {opts: optSpec{long: []string{"--userspec", "--groups"}}, skip: 1, shell: true},
	"watch":       {opts: optSpec{short: "nq", long: []string{"--interval", "--equexit"}}},
	"strace":      {opts: optSpec{short: "abeEIoOpPsSuUX"}},
	"ltrace":      {opts: optSpec{short: "aAeEnopsSuwxX"}},
	"valgrind":    {},
	"systemd-run": {opts: optSpec{short: "pEMHu", long: []string{"--unit", "--property", "--description", "--slice", "--setenv", "--uid", "--gid", "--nice", "--working-directory", "--machine", "--host"}}},
	"caffeinate":  {opts: optSpec{short: "tw"}},
	"chronic":     {},
	"sg":          {skip: 1},
}

// shells are the programs treated as bash for "-c STRING" and stdin.
var shells = map[string]bool{
	"bash": true, "sh": true, "zsh": true, "dash": true, "ksh": true, "mksh": true,
	"ash": true, "yash": true, "posh": true, "rbash": true, "fish": true,
}

func (w *walker) unwrap(idx int, u wrapper, stdin input) (ok, fail dirs) {
	in := w.cwd
	c := w.res.Commands[idx]
	if c.Name == "env" {
		return w.envWrapper(idx, stdin)
	}
	// Options whose value is a command line: su -c 'cmd', flock f -c 'cmd'.
	if u.str != "" {
		for _, o := range u.str {
			long := map[rune]string{'c': "--command"}[o]
			vals, at := optValues(c.Args, byte(o), long)
			for k, v := range vals {
				if c.Flags[at[k]]&ArgDynamic != 0 {
					w.findAt(FindEval, c, c.Name+" -"+string(o)+" runs a command only known at run time")
					continue
				}
				w.nestedVia(v, c.Name+" -"+string(o), c.Pos, c.Via, true, nil)
			}
			if len(vals) > 0 {
				return in, in
			}
		}
	}
	i := skipOpts(c.Args, u.opts)
	for _, a := range c.Args[:min(i, len(c.Args))] {
		if len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.ContainsAny(a[1:], u.none) && u.none != "" {
			return in, in
		}
	}
	i += u.skip
	if c.Name == "flock" && i < len(c.Args) && (c.Args[i] == "-c" || c.Args[i] == "--command") {
		return in, in // handled above
	}
	if c.Name == "flock" || c.Name == "chroot" {
		i += skipOpts(c.Args[min(i, len(c.Args)):], u.opts)
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
			w.findAt(FindEval, c, "watch runs a command only known at run time")
			return in, in
		}
		return w.nestedVia(strings.Join(c.Args[i:], " "), "watch", c.Pos, c.Via, true, nil)
	}
	if c.Name == "time" {
		if vals, at := optValues(c.Args[:i], 'o', "--output"); len(vals) > 0 {
			cc := &w.res.Commands[idx]
			for k, v := range vals {
				cc.Redirects = append(cc.Redirects, Redirect{Op: "time -o", Target: v, Write: true, Dynamic: c.Flags[at[k]]&ArgDynamic != 0})
			}
		}
	}
	cwd := w.cwd
	if c.Name == "sudo" {
		if vals, at := optValues(c.Args[:i], 'D', "--chdir"); len(vals) > 0 {
			w.chdirTo(idx, vals[len(vals)-1], c.Flags[at[len(at)-1]])
		}
	}
	ok, fail = w.run(inner(&c, i, c.Name), stdin)
	w.cwd = cwd
	if c.Name == "command" || c.Name == "builtin" || c.Name == "exec" {
		return ok, fail // these run builtins such as cd in this shell
	}
	return in, in
}

// envWrapper follows env [-i] [-u NAME] [-C DIR] [-S STRING] [NAME=VALUE]… [COMMAND…].
func (w *walker) envWrapper(idx int, stdin input) (ok, fail dirs) {
	in := w.cwd
	c := w.res.Commands[idx]
	var assigns []Assignment
	i := 0
loop:
	for i < len(c.Args) {
		a, f := c.Args[i], c.Flags[i]
		switch {
		case a == "--":
			i++
			break loop
		case a == "-u" || a == "--unset" || a == "-P":
			i += 2
		case a == "-C" || a == "--chdir":
			if i+1 < len(c.Args) {
				w.chdirTo(idx, c.Args[i+1], c.Flags[i+1])
			}
			i += 2
		case strings.HasPrefix(a, "--chdir="):
			w.chdirTo(idx, a[len("--chdir="):], f)
			i++
		case strings.HasPrefix(a, "-C") && !strings.HasPrefix(a, "--"):
			w.chdirTo(idx, a[2:], f)
			i++
		case a == "-S" || a == "--split-string" || strings.HasPrefix(a, "-S") || strings.HasPrefix(a, "--split-string="):
			s := strings.TrimPrefix(strings.TrimPrefix(a, "--split-string="), "-S")
			if a == "-S" || a == "--split-string" {
				if i+1 >= len(c.Args) {
					return in, in
				}
				i++
				s, f = c.Args[i], c.Flags[i]
			}
			if f&ArgDynamic != 0 || !allStatic(c.Flags[i+1:]) {
				w.findAt(FindEval, c, "env -S runs a command only known at run time")
				return in, in
			}
			rest := append([]string{s}, c.Args[i+1:]...)
			return w.nestedVia(strings.Join(rest, " "), "env -S", c.Pos, c.Via, true, assigns)
		case len(a) > 1 && a[0] == '-':
			i++
		case strings.Contains(a, "=") && isName(a[:strings.IndexByte(a, '=')]):
			name, val, _ := strings.Cut(a, "=")
			assigns = append(assigns, Assignment{Name: name, Value: val, Dynamic: f&ArgDynamic != 0})
			i++
		default:
			break loop
		}
	}
	cc := &w.res.Commands[idx]
	cc.Assigns = append(append([]Assignment(nil), cc.Assigns...), assigns...)
	w.commandVars(assigns, c.Pos, c.Via)
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

// chdirTo records that the command at idx works in dir.
func (w *walker) chdirTo(idx int, dir string, f ArgFlag) {
	c := &w.res.Commands[idx]
	if f&(ArgDynamic|ArgGlob) != 0 {
		c.ChdirUnknown = true
		return
	}
	abs := w.cwd.join(dir)
	if abs == nil {
		c.ChdirUnknown = true
		return
	}
	for _, a := range abs {
		c.Chdir = append(c.Chdir, w.resolve(a))
	}
}

// cd follows cd, pushd and popd.
func (w *walker) cd(idx int) (ok, fail dirs) {
	in := w.cwd
	c := &w.res.Commands[idx]
	if c.Name == "popd" {
		return nil, in
	}
	i := 0
	for i < len(c.Args) && len(c.Args[i]) > 1 && c.Args[i][0] == '-' {
		if c.Args[i] == "--" {
			i++
			break
		}
		if c.Name == "pushd" && (c.Args[i][1] >= '0' && c.Args[i][1] <= '9') {
			break
		}
		i++
	}
	var target string
	switch {
	case i >= len(c.Args):
		if c.Name == "pushd" {
			c.ChdirUnknown = true
			return nil, in
		}
		h, known := w.lookup("HOME")
		if !known {
			c.ChdirUnknown = true
			return nil, in
		}
		target = h
	case c.Flags[i]&(ArgDynamic|ArgGlob) != 0:
		c.ChdirUnknown = true
		return nil, in
	case c.Args[i] == "-":
		o, known := w.lookup("OLDPWD")
		if !known {
			c.ChdirUnknown = true
			return nil, in
		}
		target = o
	case strings.HasPrefix(c.Args[i], "+") || strings.HasPrefix(c.Args[i], "-"):
		c.ChdirUnknown = true // pushd +N: the directory stack
		return nil, in
	default:
		target = c.Args[i]
	}
	if _, cdpath := w.vars["CDPATH"]; cdpath && !strings.HasPrefix(target, "/") && !strings.HasPrefix(target, ".") {
		c.ChdirUnknown = true
		return nil, in
	}
	abs := in.join(target)
	if abs == nil {
		c.ChdirUnknown = true
		return nil, in
	}
	var out dirs
	for _, a := range abs {
		r := w.resolve(a)
		c.Chdir = append(c.Chdir, r)
		if !contains(out, r) {
			out = append(out, r)
		}
	}
	if len(in) == 1 {
		w.setVar("OLDPWD", varVal{val: in[0], known: true})
	} else {
		w.unknownVar("OLDPWD")
	}
	return out, in
}

func (w *walker) trap(c Command) {
	i := 0
	for i < len(c.Args) && strings.HasPrefix(c.Args[i], "-") && c.Args[i] != "-" {
		if c.Args[i] == "--" {
			i++
			break
		}
		if c.Args[i] == "-p" || c.Args[i] == "-l" || c.Args[i] == "-P" {
			return
		}
		i++
	}
	if i >= len(c.Args) || c.Args[i] == "-" || c.Args[i] == "" || i == len(c.Args)-1 && isNumber(c.Args[i]) {
		return
	}
	if c.Flags[i]&ArgDynamic != 0 {
		w.findAt(FindTrap, c, "trap runs text only known at run time")
		return
	}
	w.nestedVia(c.Args[i], "trap", c.Pos, c.Via, false, nil)
}

// shellOptionLetters are the single-letter options of bash, sh and their kin.
const shellOptionLetters = "abcefhiklmnoprstuvxBCDEHOPT"

var shellLongOptions = map[string]bool{
	"--login": true, "--norc": true, "--noprofile": true, "--posix": true, "--restricted": true,
	"--verbose": true, "--version": true, "--help": true, "--debugger": true, "--noediting": true,
	"--dump-strings": true, "--dump-po-strings": true, "--pretty-print": true, "--wordexp": true,
}

// shell follows bash -c STRING and a shell reading a here-document.
func (w *walker) shell(idx int, stdin input) (ok, fail dirs) {
	in := w.cwd
	c := w.res.Commands[idx]
	cflag, stdinFlag := false, false
	i := 0
loop:
	for i < len(c.Args) {
		a := c.Args[i]
		switch {
		case a == "--" || a == "-":
			i++
			break loop
		case a == "--rcfile" || a == "--init-file":
			i += 2
		case strings.HasPrefix(a, "--") && shellLongOptions[a]:
			i++
		case strings.HasPrefix(a, "--"):
			break loop // not an option a shell knows: judged as commands below
		case len(a) > 1 && (a[0] == '-' || a[0] == '+'):
			if strings.Trim(a[1:], shellOptionLetters) != "" {
				// Not an option a shell knows: it would refuse to start, but
				// judge the word as the commands it might be.
				break loop
			}
			i++
			for _, ch := range a[1:] {
				switch ch {
				case 'c':
					cflag = true
				case 's':
					stdinFlag = true
				case 'o', 'O':
					i++
				}
			}
		default:
			break loop
		}
	}
	if i < len(c.Args) && len(c.Args[i]) > 1 && (c.Args[i][0] == '-' || c.Args[i][0] == '+') {
		cflag = true
	}
	label := c.Name + " -c"
	seed := c.Assigns
	switch {
	case cflag && i < len(c.Args):
		if c.Flags[i]&ArgDynamic != 0 {
			w.findAt(FindEval, c, label+" runs a command only known at run time")
			return in, in
		}
		w.nestedVia(c.Args[i], label, c.Pos, c.Via, true, seed)
	case i < len(c.Args) && !stdinFlag && c.Flags[i]&ArgDynamic != 0:
		w.findAt(FindEval, c, c.Name+" runs a script only known at run time")
	case i < len(c.Args) && !stdinFlag:
		// runs a script file
	case stdin.file:
		// runs a script file given on standard input
	case stdin.present && stdin.known:
		w.nestedVia(stdin.text, c.Name+" <<<", c.Pos, c.Via, true, seed)
	case stdin.present:
		w.findAt(FindStdinShell, c, c.Name+" reads commands from input only known at run time")
	case len(c.Feeds) > 0:
		w.findAt(FindStdinShell, c, c.Name+" reads commands from a pipe")
	}
	return in, in
}

// dirOptions records the directory options of make, tar, npm, pnpm, yarn and go.
func (w *walker) dirOptions(idx int) {
	c := w.res.Commands[idx]
	var short byte
	var longs []string
	switch c.Name {
	case "make":
		short, longs = 'C', []string{"--directory"}
	case "tar":
		short, longs = 'C', []string{"--directory"}
	case "npm":
		longs = []string{"--prefix"}
	case "pnpm":
		short, longs = 'C', []string{"--dir", "--prefix"}
	case "yarn":
		longs = []string{"--cwd"}
	case "go":
		if len(c.Args) > 0 && (c.Args[0] == "-C" || strings.HasPrefix(c.Args[0], "-C=")) {
			v := strings.TrimPrefix(c.Args[0], "-C=")
			f := c.Flags[0]
			if c.Args[0] == "-C" && len(c.Args) > 1 {
				v, f = c.Args[1], c.Flags[1]
			}
			w.chdirTo(idx, v, f)
		}
		return
	}
	if short != 0 {
		vals, at := optValues(c.Args, short, "")
		for k, v := range vals {
			w.chdirTo(idx, v, c.Flags[at[k]])
		}
	}
	for _, l := range longs {
		vals, at := optValues(c.Args, 0, l)
		for k, v := range vals {
			w.chdirTo(idx, v, c.Flags[at[k]])
		}
	}
}

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
		n := baseName(c.Args[i+1])
		if _, wrapped := wrappers[n]; shells[n] || wrapped || n == "eval" || n == "source" || n == "." {
			found = ArgDynamic
		}
		for k := i + 1; k < j; k++ {
			a, f := c.Args[k], c.Flags[k]
			switch {
			case a == "{}":
				for _, s := range starts {
					cmd.Args = append(cmd.Args, s)
					cmd.Flags = append(cmd.Flags, f|found)
				}
			case strings.Contains(a, "{}"):
				cmd.Args = append(cmd.Args, strings.ReplaceAll(a, "{}", strings.TrimSuffix(starts[0], "/")+"/x"))
				cmd.Flags = append(cmd.Flags, f|found)
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
	spec := optSpec{short: "adEILnPs", long: []string{"--arg-file", "--delimiter", "--max-lines", "--max-args", "--max-procs", "--max-chars", "--process-slot-var", "--eof"}}
	i := skipOpts(c.Args, spec)
	repl := ""
	if vals, _ := optValues(c.Args[:i], 'I', ""); len(vals) > 0 {
		repl = vals[len(vals)-1]
	}
	for _, a := range c.Args[:i] {
		if strings.HasPrefix(a, "-i") || strings.HasPrefix(a, "--replace") {
			repl = "{}"
			if v, ok := strings.CutPrefix(a, "-i"); ok && v != "" {
				repl = v
			} else if v, ok := strings.CutPrefix(a, "--replace="); ok {
				repl = v
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
