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
