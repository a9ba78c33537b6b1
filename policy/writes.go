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
			d = nil
		}
		for _, a := range c.Args {
			if a == "--remove-source-files" {
				for _, src := range (cmdArgs{c}).all(ops[:len(ops)-1]) {
					if !isRemote(src.path) {
						d = append(d, src) // the sources are deleted
					}
				}
				break
			}
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
