package policy

import (
	"strings"

	"github.com/shellgate/shellgate/analysis"
)

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
