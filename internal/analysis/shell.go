package analysis

import "strings"

// shellLongOptions are the long options of bash; any other --word is not one.
var shellLongOptions = map[string]bool{
	"--login": true, "--norc": true, "--noprofile": true, "--posix": true, "--restricted": true,
	"--verbose": true, "--version": true, "--help": true, "--debugger": true, "--noediting": true,
	"--dump-strings": true, "--dump-po-strings": true, "--pretty-print": true, "--wordexp": true,
}

// shellOptionLetters are the single-letter options of bash, sh and their kin.
const shellOptionLetters = "abcefhiklmnoprstuvxBCDEHOPT"

// shell follows bash -c STRING and a shell reading a here-document.
func (w *walker) shell(idx int, stdin input) (ok, fail dirs) {
	in := w.cwd
	c := w.res.Commands[idx]
	i, cflag, stdinFlag := shellOptions(c.Args)
	label := c.Name + " -c"
	seed := c.Assigns
	if i < len(c.Args) && !cflag && c.Flags[i]&ArgDynamic == 0 && IsStdinPath(c.Args[i]) {
		stdinFlag = true // bash /dev/stdin <<< '…' reads its script from standard input
	}
	switch {
	case cflag && i < len(c.Args):
		if c.Flags[i]&ArgDynamic != 0 {
			w.findAt(FindEval, c, label+" runs a command only known at run time")
			return in, in
		}
		w.shellArgs = &shellArgs{args: c.Args[i+1:], flags: c.Flags[i+1:], more: c.MoreArgs}
		w.nestedVia(c.Args[i], label, c.Pos, c.Via, true, seed)
		w.shellArgs = nil
	case c.MoreArgs && cflag:
		// xargs sh -c < f: the command line is the first word xargs reads.
		w.findAt(FindEval, c, label+" runs a command line read from input at run time")
	case c.MoreArgs && !stdinFlag:
		w.findAt(FindEval, c, c.Name+" runs a script named in its input at run time")
	case i < len(c.Args) && !stdinFlag && c.Flags[i]&ArgDynamic != 0:
		w.findAt(FindEval, c, c.Name+" runs a script only known at run time")
	case i < len(c.Args) && !stdinFlag:
		// runs a script file: judged by the policy (written in the line?)
	case stdin.file:
		// runs a script file given on standard input: the same
	case stdin.present && stdin.known:
		w.nestedVia(stdin.text, c.Name+" <<<", c.Pos, c.Via, true, seed)
	case stdin.present:
		w.findAt(FindStdinShell, c, c.Name+" reads commands from input only known at run time")
	case len(c.Feeds) > 0:
		w.findAt(FindStdinShell, c, c.Name+" reads commands from a pipe")
	}
	return in, in
}

// shellArgs are the words after sh -c SCRIPT, for the new shell nestedVia
// starts: its $0, $1 ….
type shellArgs struct {
	args  []string
	flags []ArgFlag
	more  bool
}

// shellOptions reads a shell's options: i is the first argument after them
// (the -c string, or the script), cflag and stdinFlag report -c and -s.
func shellOptions(args []string) (i int, cflag, stdinFlag bool) {
	i = shellOptionsEnd(args, func(ch rune) {
		cflag = cflag || ch == 'c'
		stdinFlag = stdinFlag || ch == 's'
	})
	if i < len(args) && len(args[i]) > 1 && (args[i][0] == '-' || args[i][0] == '+') {
		// Not an option a shell knows: it would refuse to start, but judge
		// the word as the commands it might be.
		cflag = true
	}
	return i, cflag, stdinFlag
}

// shellOptionsEnd is the index of the first argument after a shell's
// options, calling letter for each option letter.
func shellOptionsEnd(args []string, letter func(rune)) int {
	i := 0
	for i < len(args) {
		a := args[i]
		switch {
		case a == "--" || a == "-":
			return i + 1
		case a == "--rcfile" || a == "--init-file":
			i += 2
		case strings.HasPrefix(a, "--") && shellLongOptions[a]:
			i++
		case strings.HasPrefix(a, "--"):
			return i // not an option a shell knows: judged as commands below
		case len(a) > 1 && (a[0] == '-' || a[0] == '+'):
			if strings.Trim(a[1:], shellOptionLetters) != "" {
				return i
			}
			i++
			for _, ch := range a[1:] {
				letter(ch)
				if ch == 'o' || ch == 'O' {
					i++
				}
			}
		default:
			return i
		}
	}
	return i
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
	// The action runs later, in the state the shell is in then: walk it now
	// with every variable unknown, and again once the whole line is walked.
	w.subshell(func() {
		w.vars = nil
		w.nestedVia(c.Args[i], "trap", c.Pos, c.Via, false, nil)
	})
	w.traps = append(w.traps, trapDef{text: c.Args[i], at: c.Pos, via: c.Via})
}

// IsStdinPath reports the names of standard input: /dev/stdin, /dev/fd/0,
// /proc/self/fd/0 and "-".
func IsStdinPath(p string) bool {
	switch p {
	case "-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0", "/proc/thread-self/fd/0":
		return true
	}
	return false
}
