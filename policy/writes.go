package policy

import (
	"strings"

	"github.com/shellgate/shellgate/analysis"
)

// target is a path a command writes or changes: an argument, or part of one.
type target struct {
	path string
	flag analysis.ArgFlag
}

// opts says which options take a value, to tell operands from option values.
type opts struct {
	short string
	long  []string
}

// operands returns the indexes of c's operands: arguments that are neither
// options nor option values. GNU tools accept options after operands.
func operands(c *analysis.Command, o opts) []int {
	var out []int
	for i := 0; i < len(c.Args); i++ {
		a := c.Args[i]
		switch {
		case a == "--":
			for j := i + 1; j < len(c.Args); j++ {
				out = append(out, j)
			}
			return out
		case len(a) < 2 || a[0] != '-' || c.Flags[i]&analysis.ArgDynamic != 0:
			out = append(out, i)
		case strings.HasPrefix(a, "--"):
			if !strings.Contains(a, "=") {
				for _, l := range o.long {
					if a == l {
						i++
						break
					}
				}
			}
		default:
			for j := 1; j < len(a); j++ {
				if strings.IndexByte(o.short, a[j]) >= 0 {
					if j == len(a)-1 {
						i++
					}
					break
				}
			}
		}
	}
	return out
}

// optionValues returns the values of -s V / -sV / --long V / --long=V.
func optionValues(c *analysis.Command, short byte, long string) []target {
	var out []target
	for i := 0; i < len(c.Args); i++ {
		a := c.Args[i]
		if a == "--" {
			break
		}
		switch {
		case short != 0 && len(a) >= 2 && a[0] == '-' && a[1] != '-' && a[len(a)-1] == short && strings.IndexByte(a[1:], short) == len(a)-2:
			if i+1 < len(c.Args) {
				out = append(out, target{c.Args[i+1], c.Flags[i+1]})
				i++
			}
		case short != 0 && len(a) > 2 && a[0] == '-' && a[1] == short:
			out = append(out, target{a[2:], c.Flags[i]})
		case long != "" && a == long:
			if i+1 < len(c.Args) {
				out = append(out, target{c.Args[i+1], c.Flags[i+1]})
				i++
			}
		case long != "" && strings.HasPrefix(a, long+"="):
			out = append(out, target{a[len(long)+1:], c.Flags[i]})
		}
	}
	return out
}

func (c cmdArgs) all(idx []int) []target {
	out := make([]target, 0, len(idx))
	for _, i := range idx {
		out = append(out, target{c.Args[i], c.Flags[i]})
	}
	return out
}

type cmdArgs struct{ *analysis.Command }

// lastOrDir is the destination of cp, mv, install and ln: -t DIR, or the last operand.
func lastOrDir(c *analysis.Command, ops []int) []target {
	if t := optionValues(c, 't', "--target-directory"); len(t) > 0 {
		return t
	}
	if len(ops) == 0 {
		return nil
	}
	return cmdArgs{c}.all(ops[len(ops)-1:])
}

// writers lists the commands that change files, and which paths they change.
var writers = map[string]func(c *analysis.Command) []target{
	"rm":        allOperands(opts{}),
	"rmdir":     allOperands(opts{}),
	"unlink":    allOperands(opts{}),
	"shred":     allOperands(opts{short: "ns", long: []string{"--iterations", "--size", "--random-source"}}),
	"touch":     allOperands(opts{short: "dtr", long: []string{"--date", "--reference", "--time"}}),
	"mkdir":     allOperands(opts{short: "m", long: []string{"--mode", "--context"}}),
	"mkfifo":    allOperands(opts{short: "m", long: []string{"--mode"}}),
	"truncate":  allOperands(opts{short: "sr", long: []string{"--size", "--reference"}}),
	"tee":       allOperands(opts{long: []string{"--output-error"}}),
	"mv":        allOperands(opts{short: "tS", long: []string{"--target-directory", "--suffix"}}),
	"sponge":    allOperands(opts{}),
	"gofmt":     onlyWith("-w", allOperands(opts{short: "r", long: nil})),
	"goimports": onlyWith("-w", allOperands(opts{short: "l", long: []string{"-local"}})),
	"setfacl":   allOperands(opts{short: "mxMX", long: []string{"--modify", "--remove", "--set", "--modify-file", "--remove-file", "--set-file"}}),
	"cp": func(c *analysis.Command) []target {
		o := opts{short: "tS", long: []string{"--target-directory", "--suffix"}}
		for _, a := range c.Args {
			if a == "--link" || a == "--symbolic-link" || len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.ContainsAny(a, "ls") {
				return allOperands(o)(c) // links to the sources can write them later
			}
		}
		return lastOrDir(c, operands(c, o))
	},
	"install": func(c *analysis.Command) []target {
		return lastOrDir(c, operands(c, opts{short: "mogSt", long: []string{"--mode", "--owner", "--group", "--suffix", "--target-directory", "--strip-program"}}))
	},
	"ln": func(c *analysis.Command) []target {
		o := opts{short: "tS", long: []string{"--target-directory", "--suffix"}}
		if isSymbolic(c) {
			return lastOrDir(c, operands(c, o))
		}
		return allOperands(o)(c) // a hard link to a file outside lets it be written
	},
	"chmod":  modeFirst(opts{}),
	"chown":  modeFirst(opts{long: []string{"--from"}}),
	"chgrp":  modeFirst(opts{}),
	"chattr": modeFirst(opts{short: "pv"}),
	"mknod": func(c *analysis.Command) []target {
		ops := operands(c, opts{short: "mZ", long: []string{"--mode"}})
		return cmdArgs{c}.all(ops[:min(1, len(ops))])
	},
	"dd": func(c *analysis.Command) []target {
		var out []target
		for i, a := range c.Args {
			if v, ok := strings.CutPrefix(a, "of="); ok {
				out = append(out, target{v, c.Flags[i]})
			}
		}
		return out
	},
	"sort": func(c *analysis.Command) []target { return optionValues(c, 'o', "--output") },
	"sed":  sedTargets,
	"find": findTargets,
	"tar":  tarTargets,
	"rsync": func(c *analysis.Command) []target {
		ops := operands(c, opts{short: "ef", long: []string{"--rsh", "--rsync-path", "--filter", "--exclude", "--include", "--exclude-from", "--include-from", "--files-from", "--log-file", "--partial-dir", "--temp-dir", "--backup-dir", "--suffix", "--chmod", "--password-file", "--port", "--compare-dest", "--copy-dest", "--link-dest"}})
		if len(ops) < 2 {
			return nil
		}
		d := cmdArgs{c}.all(ops[len(ops)-1:])
		if isRemote(d[0].path) {
			return nil
		}
		return d
	},
	"curl": func(c *analysis.Command) []target {
		return append(optionValues(c, 'o', "--output"), optionValues(c, 0, "--output-dir")...)
	},
	"wget": func(c *analysis.Command) []target {
		return append(append(optionValues(c, 'O', "--output-document"), optionValues(c, 'P', "--directory-prefix")...), optionValues(c, 'o', "--output-file")...)
	},
	"zip": func(c *analysis.Command) []target {
		ops := operands(c, opts{short: "bnxiItTP", long: []string{"--temp-path", "--suffixes", "--exclude", "--include", "--password", "--unzip-command", "-TT", "--out"}})
		out := cmdArgs{c}.all(ops[:min(1, len(ops))])
		return append(out, optionValues(c, 'O', "--out")...)
	},
	"unzip": func(c *analysis.Command) []target { return optionValues(c, 'd', "") },
	"mktemp": func(c *analysis.Command) []target {
		return append(optionValues(c, 'p', "--tmpdir"), optionValues(c, 0, "--tmpdir")...)
	},
	"git": gitTargets,
	"go": func(c *analysis.Command) []target {
		if len(c.Args) > 0 && (c.Args[0] == "build" || c.Args[0] == "test") {
			return optionValues(c, 'o', "")
		}
		return nil
	},
	"patch": func(c *analysis.Command) []target { return optionValues(c, 'o', "--output") },
	"split": func(c *analysis.Command) []target {
		ops := operands(c, opts{short: "abdlnCt", long: []string{"--suffix-length", "--bytes", "--lines", "--number", "--line-bytes", "--additional-suffix", "--separator", "--filter"}})
		if len(ops) == 2 {
			return cmdArgs{c}.all(ops[1:])
		}
		return nil
	},
}

func allOperands(o opts) func(*analysis.Command) []target {
	return func(c *analysis.Command) []target { return cmdArgs{c}.all(operands(c, o)) }
}

func onlyWith(flag string, f func(*analysis.Command) []target) func(*analysis.Command) []target {
	return func(c *analysis.Command) []target {
		for _, a := range c.Args {
			if a == flag {
				return f(c)
			}
		}
		return nil
	}
}

// modeFirst is chmod, chown, chgrp and chattr: the first operand is the mode
// or owner, unless --reference gives it.
func modeFirst(o opts) func(*analysis.Command) []target {
	return func(c *analysis.Command) []target {
		var idx []int
		ref := false
		for i, a := range c.Args {
			switch {
			case strings.HasPrefix(a, "--reference"):
				ref = true
			case c.Name == "chmod" && isModeArg(a):
				idx = append(idx, i) // chmod -x file: -x is a mode, not an option
			}
		}
		ops := operands(c, o)
		if len(idx) > 0 {
			return cmdArgs{c}.all(ops)
		}
		if !ref && len(ops) > 0 {
			ops = ops[1:]
		}
		return cmdArgs{c}.all(ops)
	}
}

func isModeArg(a string) bool {
	if len(a) < 2 || a[0] != '-' {
		return false
	}
	for _, r := range a[1:] {
		if !strings.ContainsRune("rwxXst", r) {
			return false
		}
	}
	return true
}

// sedTargets: with -i, the files edited in place; and the files of w commands.
func sedTargets(c *analysis.Command) []target {
	o := opts{short: "efl", long: []string{"--expression", "--file", "--line-length"}}
	ops := operands(c, o)
	scripts := optionValues(c, 'e', "--expression")
	inPlace := false
	for _, a := range c.Args {
		if a == "--in-place" || strings.HasPrefix(a, "--in-place=") || len(a) > 1 && a[0] == '-' && a[1] != '-' && sedBundleHasI(a) {
			inPlace = true
		}
	}
	if len(scripts) == 0 && len(optionValues(c, 'f', "--file")) == 0 && len(ops) > 0 {
		scripts = []target{{c.Args[ops[0]], c.Flags[ops[0]]}}
		ops = ops[1:]
	}
	var out []target
	if inPlace {
		out = cmdArgs{c}.all(ops)
	}
	for _, s := range scripts {
		for _, f := range sedWriteFiles(s.path) {
			out = append(out, target{f, s.flag})
		}
	}
	return out
}

// sedBundleHasI reports -i in a bundle of sed short options (-i takes an
// optional attached suffix, so it ends the bundle: -Ei, -ni.bak).
func sedBundleHasI(a string) bool {
	for j := 1; j < len(a); j++ {
		switch a[j] {
		case 'i':
			return true
		case 'e', 'f', 'l':
			return false
		}
	}
	return false
}

func findTargets(c *analysis.Command) []target {
	var out []target
	starts := analysis.FindStartingPoints(c.Args)
	for i := 0; i < len(c.Args); i++ {
		switch c.Args[i] {
		case "-delete":
			for _, s := range starts {
				out = append(out, target{s, 0})
			}
		case "-fprint", "-fprint0", "-fls", "-fprintf":
			if i+1 < len(c.Args) {
				out = append(out, target{c.Args[i+1], c.Flags[i+1]})
			}
		}
	}
	return out
}

// tarTargets: the archive when creating, and the directory when extracting.
func tarTargets(c *analysis.Command) []target {
	var mode byte
	var files []target
	for i := 0; i < len(c.Args); i++ {
		a := c.Args[i]
		switch {
		case a == "--extract" || a == "--get":
			mode = 'x'
		case a == "--create" || a == "--append" || a == "--update" || a == "--concatenate":
			mode = 'c'
		case strings.HasPrefix(a, "--file="):
			files = append(files, target{a[len("--file="):], c.Flags[i]})
		case a == "--file" && i+1 < len(c.Args):
			files = append(files, target{c.Args[i+1], c.Flags[i+1]})
			i++
		case strings.HasPrefix(a, "--"):
		case i == 0 && !strings.HasPrefix(a, "-") || len(a) > 1 && a[0] == '-':
			bundle := strings.TrimPrefix(a, "-")
			for j := 0; j < len(bundle); j++ {
				switch bundle[j] {
				case 'x':
					mode = 'x'
				case 'c', 'r', 'u', 'A':
					mode = 'c'
				case 'f':
					if j < len(bundle)-1 && a[0] == '-' {
						files = append(files, target{bundle[j+1:], c.Flags[i]})
					} else if i+1 < len(c.Args) {
						files = append(files, target{c.Args[i+1], c.Flags[i+1]})
						i++
					}
					j = len(bundle)
				case 'C', 'T', 'X', 'b', 'g', 'H', 'K', 'L', 'N', 'V', 'I', 'F':
					if j == len(bundle)-1 {
						i++
					}
					j = len(bundle)
				}
			}
		}
	}
	switch mode {
	case 'c':
		return files
	case 'x':
		return []target{{".", 0}} // -C moves this; the directory option is judged as a cd
	}
	return nil
}

// gitTargets are the paths git writes outside its own repository.
func gitTargets(c *analysis.Command) []target {
	sub, rest := gitSubcommand(c)
	sc := &analysis.Command{Args: rest, Flags: c.Flags[len(c.Args)-len(rest):]}
	switch sub {
	case "init":
		ops := operands(sc, opts{long: []string{"--template", "--separate-git-dir", "--object-format", "--ref-format", "-b", "--initial-branch", "--shared"}})
		return cmdArgs{sc}.all(ops)
	case "clone":
		ops := operands(sc, opts{short: "obuc", long: []string{"--origin", "--branch", "--upload-pack", "--template", "--reference", "--reference-if-able", "--separate-git-dir", "--depth", "--shallow-since", "--shallow-exclude", "--config", "--jobs", "--filter", "--server-option", "--bundle-uri"}})
		if len(ops) >= 2 {
			return cmdArgs{sc}.all(ops[1:2])
		}
	case "worktree":
		if len(rest) > 1 && rest[0] == "add" {
			sc2 := &analysis.Command{Args: rest[1:], Flags: sc.Flags[1:]}
			ops := operands(sc2, opts{short: "bB", long: []string{"--reason"}})
			return cmdArgs{sc2}.all(ops[:min(1, len(ops))])
		}
	case "archive", "format-patch", "diff", "log", "show", "bundle":
		out := optionValues(sc, 0, "--output")
		if sub == "archive" || sub == "format-patch" {
			out = append(out, optionValues(sc, 'o', "--output-directory")...)
		}
		if sub == "bundle" && len(rest) > 1 && rest[0] == "create" {
			out = append(out, target{rest[1], sc.Flags[1]})
		}
		return out
	}
	return nil
}

// writes checks every path c changes.
func (x *check) writes(c *analysis.Command) {
	f := writers[c.Name]
	if f == nil {
		return
	}
	for _, t := range f(c) {
		x.writeTo(c, t.path, t.flag, c.Name)
	}
	if c.Name == "ln" && isSymbolic(c) {
		x.symlinkTargets(c)
	}
}

func isSymbolic(c *analysis.Command) bool {
	for _, a := range c.Args {
		if a == "--symbolic" || len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.ContainsRune(a, 's') {
			return true
		}
	}
	return false
}

// symlinkTargets: a symlink inside the root that points outside it is a way out
// (ln -s $OUTSIDE esc && cd esc): the link target counts as written.
func (x *check) symlinkTargets(c *analysis.Command) {
	ops := operands(c, opts{short: "tS", long: []string{"--target-directory", "--suffix"}})
	if len(ops) < 2 {
		return
	}
	link := c.Args[ops[len(ops)-1]]
	for _, i := range ops[:len(ops)-1] {
		t := c.Args[i]
		if !strings.HasPrefix(t, "/") {
			// A relative target is relative to the link's directory.
			dir := "."
			if j := strings.LastIndexByte(link, '/'); j >= 0 {
				dir = link[:j]
			}
			t = dir + "/" + t
		}
		x.writeTo(c, t, c.Flags[i], "a symlink to "+c.Args[i])
	}
}
