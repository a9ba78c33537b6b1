package policy

import (
	"strings"

	"github.com/shellgate/shellgate/internal/analysis"
)

// sedTargets: with -i, the files edited in place; and the files of w commands.
func sedTargets(c *analysis.Command) []target {
	var out []target
	ops := c.Operands
	if len(c.Values("e", "expression", "f", "file")) == 0 && len(ops) > 0 {
		ops = ops[1:] // the first operand is the script
	}
	if c.Has("i", "in-place") {
		out = argTargets(c, ops)
	}
	for _, s := range sedScriptTargets(c) {
		for _, f := range sedWriteFiles(s.path) {
			out = append(out, target{f, s.flag})
		}
	}
	return out
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
	files, dirs := values(c, "f", "file"), values(c, "C", "directory")
	for _, o := range c.Opts {
		switch o.Name {
		case "x", "extract", "get":
			mode = 'x'
		case "c", "r", "u", "A", "create", "append", "update", "concatenate", "catenate":
			mode = 'c'
		}
	}
	if len(c.Args) > 0 && len(c.Operands) > 0 && c.Operands[0] == 0 && !strings.HasPrefix(c.Args[0], "-") {
		// The old style, "tar cvf x.tar …": the first word is a bundle of
		// letters whose values follow it in order.
		next := 1
		for _, ch := range c.Args[0] {
			switch ch {
			case 'x':
				mode = 'x'
			case 'c', 'r', 'u', 'A':
				mode = 'c'
			case 'f':
				if next < len(c.Args) {
					files = append(files, target{c.Args[next], c.Flags[next]})
				}
				next++
			case 'C':
				if next < len(c.Args) {
					dirs = append(dirs, target{c.Args[next], c.Flags[next]})
				}
				next++
			case 'T', 'X', 'b', 'g', 'H', 'K', 'L', 'N', 'V', 'I', 'F':
				next++
			}
		}
	}
	switch mode {
	case 'c':
		return files
	case 'x':
		if c.Has("P", "absolute-names", "transform", "xform") {
			// Absolute or renamed members land where the archive says.
			return []target{{"the paths the archive names", analysis.ArgDynamic}}
		}
		if len(dirs) > 0 {
			// Where the members land: a protected directory (-C .vscode)
			// is written as cp's destination would be. Its place is judged
			// as a cd's too.
			return dirs
		}
		return []target{{".", 0}}
	}
	return nil
}

// gitTargets are the paths git writes outside its own repository.
func gitTargets(c *analysis.Command) []target {
	switch c.Sub {
	case "init":
		return append(operandTargets(c), values(c, "separate-git-dir")...)
	case "clone":
		return append(nth(c, 1), values(c, "separate-git-dir")...)
	case "worktree":
		if len(c.Operands) > 1 {
			switch c.Args[c.Operands[0]] {
			case "add":
				return nth(c, 1)
			case "move":
				return argTargets(c, c.Operands[1:])
			case "remove":
				return nth(c, 1)
			}
		}
	case "archive", "format-patch", "diff", "log", "show", "rev-list":
		out := values(c, "output")
		if c.Sub == "archive" || c.Sub == "format-patch" {
			out = append(out, values(c, "o", "output-directory")...)
		}
		return out
	case "bundle":
		if len(c.Operands) > 1 && c.Args[c.Operands[0]] == "create" {
			return nth(c, 1)
		}
	case "checkout-index":
		return values(c, "prefix")
	case "apply":
		if c.Has("unsafe-paths") {
			return []target{{"the paths the patch names", analysis.ArgDynamic}}
		}
		return values(c, "directory")
	case "credential-store":
		return values(c, "file")
	case "config":
		return values(c, "f", "file")
	}
	return nil
}
