package policy

import (
	"slices"
	"strings"

	"github.com/shellgate/shellgate/internal/analysis"
)

// target is a path a command writes or changes: an argument, or part of one.
type target struct {
	path string
	flag analysis.ArgFlag
}

// operandTargets are c's operands, as its option grammar reads them.
func operandTargets(c *analysis.Command) []target { return argTargets(c, c.Operands) }

// argTargets are the arguments of c at idx.
func argTargets(c *analysis.Command, idx []int) []target {
	out := make([]target, 0, len(idx))
	for _, i := range idx {
		out = append(out, target{c.Args[i], c.Flags[i]})
	}
	return out
}

// values are the values of c's options among names (letters or long names).
func values(c *analysis.Command, names ...string) []target {
	var out []target
	for _, o := range c.Values(names...) {
		out = append(out, target{o.Value, c.OptFlag(o)})
	}
	return out
}

// lastOrDir is the destination of cp, mv, install and ln: -t DIR, or the last operand.
func lastOrDir(c *analysis.Command) []target {
	if t := values(c, "t", "target-directory"); len(t) > 0 {
		return t
	}
	ops := c.Operands
	if len(ops) == 0 {
		return nil
	}
	return argTargets(c, ops[len(ops)-1:])
}

// nth is c's operand number n (from 0), if it has one.
func nth(c *analysis.Command, n int) []target {
	if n < len(c.Operands) {
		return argTargets(c, c.Operands[n:n+1])
	}
	return nil
}

// writers lists the commands that change files, and which paths they change.
var writers = map[string]func(c *analysis.Command) []target{
	"rm":       operandTargets,
	"rmdir":    operandTargets,
	"unlink":   operandTargets,
	"shred":    operandTargets,
	"touch":    operandTargets,
	"mkdir":    operandTargets,
	"mkfifo":   operandTargets,
	"truncate": operandTargets,
	"tee":      operandTargets,
	"sponge":   operandTargets,
	"setfacl":  operandTargets,
	// history -w FILE writes the shell's history list over FILE, -a appends
	// it (history -s 'cmd'; history -w ~/.bashrc plants a line there).
	"history": func(c *analysis.Command) []target {
		if c.Has("w", "a") {
			return operandTargets(c)
		}
		return nil
	},
	"gofmt":     onlyWith("w", operandTargets),
	"goimports": onlyWith("w", operandTargets),
	"mv": func(c *analysis.Command) []target {
		// The sources are removed and the destination written.
		return append(operandTargets(c), values(c, "t", "target-directory")...)
	},
	"cp": func(c *analysis.Command) []target {
		if c.Has("l", "s", "link", "symbolic-link") {
			// Links to the sources can write them later.
			return append(operandTargets(c), values(c, "t", "target-directory")...)
		}
		return lastOrDir(c)
	},
	"install": lastOrDir,
	"ln": func(c *analysis.Command) []target {
		if isSymbolic(c) {
			return lastOrDir(c)
		}
		// A hard link to a file outside lets it be written.
		return append(operandTargets(c), values(c, "t", "target-directory")...)
	},
	"chmod":  modeFirst,
	"chown":  modeFirst,
	"chgrp":  modeFirst,
	"chattr": modeFirst,
	"mknod":  func(c *analysis.Command) []target { return nth(c, 0) },
	"dd": func(c *analysis.Command) []target {
		var out []target
		for i, a := range c.Args {
			if v, ok := strings.CutPrefix(a, "of="); ok {
				out = append(out, target{v, c.Flags[i]})
			}
		}
		return out
	},
	"sort": func(c *analysis.Command) []target { return values(c, "o", "output") },
	"sed":  sedTargets,
	"find": findTargets,
	"tar":  tarTargets,
	"rsync": func(c *analysis.Command) []target {
		ops := c.Operands
		if len(ops) < 2 {
			return nil
		}
		d := argTargets(c, ops[len(ops)-1:])
		if analysis.IsRemote(d[0].path) {
			d = nil
		}
		if c.Has("remove-source-files") {
			for _, src := range argTargets(c, ops[:len(ops)-1]) {
				if !analysis.IsRemote(src.path) {
					d = append(d, src) // the sources are deleted
				}
			}
		}
		return d
	},
	"curl": func(c *analysis.Command) []target {
		return values(c, "o", "output", "output-dir", "cookie-jar", "dump-header", "trace", "trace-ascii", "stderr", "etag-save", "libcurl", "hsts", "alt-svc")
	},
	"wget": func(c *analysis.Command) []target {
		return values(c, "O", "output-document", "P", "directory-prefix", "o", "output-file", "a", "append-output", "save-cookies", "warc-file", "rejected-log")
	},
	"zip": func(c *analysis.Command) []target {
		return append(nth(c, 0), values(c, "O", "out", "output-file")...)
	},
	"unzip": func(c *analysis.Command) []target {
		if c.Has("l", "t", "p", "v", "Z", "z") { // lists, tests, pipes or shows: writes nothing
			return nil
		}
		if d := values(c, "d"); len(d) > 0 {
			return d
		}
		return []target{{".", 0}} // the working directory (cd .vscode && unzip x.zip)
	},
	"7z":         sevenZipTargets,
	"7za":        sevenZipTargets,
	"7zr":        sevenZipTargets,
	"7zz":        sevenZipTargets,
	"script":     scriptTargets,
	"mktemp":     mktempTargets,
	"git":        gitTargets,
	"go":         goTargets,
	"virtualenv": func(c *analysis.Command) []target { return append(operandTargets(c), values(c, "app-data")...) },
	"uv": func(c *analysis.Command) []target {
		if c.Sub == "venv" {
			return operandTargets(c) // uv venv [DIR], .venv by default
		}
		return nil
	},
	"patch": func(c *analysis.Command) []target {
		// patch [FILE [PATCH]]: FILE is changed in place.
		return append(values(c, "o", "output", "r", "reject-file"), nth(c, 0)...)
	},
	"split":  func(c *analysis.Command) []target { return nth(c, 1) },
	"csplit": func(c *analysis.Command) []target { return append(values(c, "f", "prefix"), target{"xx", 0}) },
	"uniq":   func(c *analysis.Command) []target { return nth(c, 1) },
	"xxd": func(c *analysis.Command) []target {
		return nth(c, 1) // xxd [-r] IN OUT writes OUT
	},
	"awk":        awkTargets,
	"gawk":       awkTargets,
	"mawk":       awkTargets,
	"nawk":       awkTargets,
	"cc":         compilerTargets,
	"gcc":        compilerTargets,
	"g++":        compilerTargets,
	"c++":        compilerTargets,
	"clang":      compilerTargets,
	"clang++":    compilerTargets,
	"tcc":        compilerTargets,
	"ld":         compilerTargets,
	"ssh-keygen": func(c *analysis.Command) []target { return values(c, "f") },
	"gpg":        func(c *analysis.Command) []target { return values(c, "o", "output") },
	"objcopy":    func(c *analysis.Command) []target { return nth(c, 1) },
	"strip":      func(c *analysis.Command) []target { return append(values(c, "o"), operandTargets(c)...) },
	"pip":        pipTargets,
	"cmake":      func(c *analysis.Command) []target { return wordValues(c, buildOutputs("cmake")...) },
	"rustc":      func(c *analysis.Command) []target { return wordValues(c, buildOutputs("rustc")...) },
	"javac":      func(c *analysis.Command) []target { return wordValues(c, buildOutputs("javac")...) },
	"openssl":    func(c *analysis.Command) []target { return wordValues(c, buildOutputs("openssl")...) },
	"pip3":       pipTargets,
	"gzip":       compressorTargets,
	"bzip2":      compressorTargets,
	"xz":         compressorTargets,
	"zstd":       compressorTargets,
	"lz4":        compressorTargets,
}

// goTargets: go build|test -o FILE, and go env -w GOBIN=DIR, where every later go
// install writes. (go install itself writes to GOBIN, judged where it is set, see
// goBinTargets, or else to $GOPATH/bin, ~/go/bin by default: the user's place for
// Go tools, like the module cache every go build writes, so not judged.)
func goTargets(c *analysis.Command) []target {
	switch c.Sub {
	case "build", "test":
		return values(c, "o")
	case "env":
		if !c.Has("w") {
			return nil
		}
		var out []target
		for _, t := range operandTargets(c) {
			if v, ok := strings.CutPrefix(t.path, "GOBIN="); ok {
				out = append(out, target{v, t.flag})
			}
		}
		return out
	}
	return nil
}

// pythonTargets: python -m venv DIR… creates (or with --clear, empties) each DIR.
func pythonTargets(c *analysis.Command) []target {
	if c.Sub == "venv" {
		return operandTargets(c)
	}
	return nil
}

// compilerTargets: cc -o FILE and -oFILE (not getopt: scanned as written).
func compilerTargets(c *analysis.Command) []target {
	var out []target
	for i, a := range c.Args {
		switch {
		case a == "-o" && i+1 < len(c.Args):
			out = append(out, target{c.Args[i+1], c.Flags[i+1]})
		case strings.HasPrefix(a, "-o") && len(a) > 2:
			out = append(out, target{a[2:], c.Flags[i]})
		}
	}
	return out
}

// pipTargets: pip install --target/--prefix/--root DIR, pip download -d DIR.
func pipTargets(c *analysis.Command) []target {
	return wordValues(c, "-t", "--target", "--prefix", "--root", "-d", "--dest", "--src", "--log", "--report")
}

// wordValues are the values of c's options among names, for a program whose
// parser takes options whole (no abbreviation, no bundling): -o VALUE, a one-
// letter -oVALUE, --opt VALUE and --opt=VALUE.
func wordValues(c *analysis.Command, names ...string) []target {
	var out []target
	for i, a := range c.Args {
		if a == "--" || c.IsDynamic(i) && !strings.HasPrefix(a, "-") {
			continue
		}
		for _, o := range names {
			switch {
			case a == o && i+1 < len(c.Args):
				out = append(out, target{c.Args[i+1], c.Flags[i+1]})
			case len(o) == 2 && len(a) > 2 && strings.HasPrefix(a, o):
				out = append(out, target{a[2:], c.Flags[i]}) // -Bbuild
			case len(o) > 2 && strings.HasPrefix(a, o+"="):
				out = append(out, target{a[len(o)+1:], c.Flags[i]})
			}
		}
	}
	return out
}

// buildOutputs are the short and one-dash options of build tools and key
// generators that name where they write (their long ones, --out-dir,
// --target-dir, --outDir, every program's output options read).
func buildOutputs(name string) []string {
	switch name {
	case "cmake":
		return []string{"-B"}
	case "rustc":
		return []string{"-o", "--out-dir"}
	case "javac":
		return []string{"-d", "-h", "-s"}
	case "openssl":
		return []string{"-out", "-keyout", "--out", "--keyout"}
	}
	return nil
}

// compressorTargets: gzip, bzip2, xz and zstd replace each operand by its
// compressed (or decompressed) file, unless writing to standard output.
func compressorTargets(c *analysis.Command) []target {
	out := values(c, "o", "output")
	if c.Has("c", "stdout", "to-stdout", "t", "test", "l", "list") {
		return out
	}
	return append(out, operandTargets(c)...)
}

// mktempTargets: the directory it creates in, or the template's own path.
func mktempTargets(c *analysis.Command) []target {
	out := values(c, "p", "tmpdir")
	if len(out) == 0 && !c.Has("t", "tmpdir") {
		out = nth(c, 0)
	}
	return out
}

func onlyWith(flag string, f func(*analysis.Command) []target) func(*analysis.Command) []target {
	return func(c *analysis.Command) []target {
		if c.Has(flag) {
			return f(c)
		}
		return nil
	}
}

// modeFirst is chmod, chown, chgrp and chattr: the first operand is the mode
// or owner, unless --reference gives it.
func modeFirst(c *analysis.Command) []target {
	if c.Name == "chmod" {
		for _, a := range c.Args {
			if isModeArg(a) {
				// chmod -x file: -x is the mode, read as options.
				return operandTargets(c)
			}
		}
	}
	ops := operandTargets(c)
	if !c.Has("reference") && len(ops) > 0 {
		ops = ops[1:]
	}
	return ops
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
	if f == nil && analysis.IsPython(c.Name) {
		f = pythonTargets
	}
	if f == nil {
		// Any program: an output file named in a long option that says so
		// (--output=FILE, --output-file FILE, --target-directory DIR).
		read := map[int]bool{}
		for _, o := range c.Values(outputOptions...) {
			x.writeTo(c, o.Value, c.OptFlag(o), c.Name+" --"+o.Name)
			read[o.At] = true
		}
		// … however it is spelled (--outDir, --out_dir, --target-dir),
		// with its value after = or as the next word.
		for _, t := range spelledOutputs(c) {
			if !read[t.at] {
				x.writeTo(c, t.path, t.flag, c.Name+" "+t.opt)
			}
		}
		return
	}
	who := c.Name
	switch {
	case c.Sub == "venv" && analysis.IsPython(c.Name):
		who += " -m venv"
	case c.Sub == "venv":
		who += " venv"
	}
	for _, t := range f(c) {
		if c.Name == "go" && c.Sub == "env" {
			x.goBin(c, t.path, t.flag)
			continue
		}
		x.writeTo(c, t.path, t.flag, who)
	}
	if c.Name == "ln" && isSymbolic(c) {
		x.symlinkTargets(c)
	}
}

// outputOptions name an output file or directory in every program that has
// them (long options only: a letter such as -o means different things).
var outputOptions = []string{"output", "output-file", "output-document", "output-directory", "output-dir",
	"target-directory", "separate-git-dir", "log-file", "outfile", "out-file"}

// outputNames are outputOptions and the other names of an output file or
// directory, as spelledOutputs compares them: lower case, without - or _.
var outputNames = []string{
	"artifactdir", "builddir", "declarationdir", "logfile", "outdir", "outfile", "output", "outputdir", "outputdirectory",
	"outputdocument", "outputfile", "outpath", "outputpath", "separategitdir", "targetdir", "targetdirectory",
}

// spelledOutput is an output option's value, the option as written and the
// index of the argument holding the value.
type spelledOutput struct {
	target
	opt string
	at  int
}

// spelledOutputs are the values of c's long options whose names, folded, are
// outputNames, where the option parser did not read them as outputOptions:
// --outDir DIR (tsc), --target-dir DIR (cargo), --out_dir=DIR.
func spelledOutputs(c *analysis.Command) []spelledOutput {
	var out []spelledOutput
	for i := 0; i < len(c.Args); i++ {
		a := c.Args[i]
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "--") || c.IsDynamic(i) {
			continue
		}
		name, val, hasVal := strings.Cut(a[2:], "=")
		fold := strings.NewReplacer("-", "", "_", "").Replace(strings.ToLower(name))
		if !slices.Contains(outputNames, fold) {
			continue
		}
		switch {
		case hasVal:
			out = append(out, spelledOutput{target{val, c.Flags[i]}, "--" + name, i})
		case i+1 < len(c.Args) && !strings.HasPrefix(c.Args[i+1], "-"):
			i++
			out = append(out, spelledOutput{target{c.Args[i], c.Flags[i]}, "--" + name, i})
		}
	}
	return out
}

func isSymbolic(c *analysis.Command) bool { return c.Has("s", "symbolic") }

// symlinkTargets: a symlink inside the root that points outside it is a way out
// (ln -s $OUTSIDE esc && cd esc): the link target counts as written.
func (x *check) symlinkTargets(c *analysis.Command) {
	ops := c.Operands
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

// sevenZipTargets are what 7-Zip writes: the directory of -oDIR (extracting)
// and -wDIR (its work files), and the archive that a, u, d and rn change.
// Its switches are written attached (-o/tmp/x), in any place.
func sevenZipTargets(c *analysis.Command) []target {
	var out []target
	var words []int
	for i, a := range c.Args {
		switch {
		case len(a) > 2 && (strings.HasPrefix(a, "-o") || strings.HasPrefix(a, "-w")):
			out = append(out, target{a[2:], c.Flags[i]})
		case !strings.HasPrefix(a, "-") || c.Flags[i]&analysis.ArgDynamic != 0:
			words = append(words, i)
		}
	}
	if len(words) > 1 && oneOf(c.Args[words[0]], "a", "u", "d", "rn") {
		out = append(out, target{c.Args[words[1]], c.Flags[words[1]]})
	}
	return out
}

// scriptTargets: script writes its typescript FILE and util-linux's logs.
func scriptTargets(c *analysis.Command) []target {
	out := values(c, "O", "log-out", "I", "log-in", "B", "log-io", "log-timing")
	if i := analysis.ScriptFile(c); i >= 0 {
		out = append(out, target{c.Args[i], c.Flags[i]})
	}
	return out
}
