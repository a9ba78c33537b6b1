package policy

import (
	"os"
	"strings"

	"github.com/shellgate/shellgate/analysis"
)

// loseWork asks before git commands that throw away work inside the root —
// uncommitted changes, untracked files, stashes, unmerged branches — which no
// sandbox stops because they stay inside the project.
func (x *check) loseWork(c *analysis.Command) {
	if c.Name != "git" || c.Sub == "" || c.Has("help", "h") {
		return
	}
	first := ""
	if len(c.Operands) > 0 {
		first = c.Args[c.Operands[0]]
	}
	what := ""
	switch c.Sub {
	case "reset":
		if c.Has("hard", "merge") {
			what = "every uncommitted change to tracked files"
		}
	case "clean":
		if c.Has("n", "dry-run") || !c.Has("f", "force") {
			break
		}
		what = "untracked files"
		if c.Has("x") {
			what = "untracked and ignored files"
		}
		if c.Has("d") {
			what += ", directories included"
		}
	case "checkout":
		if c.Has("f", "force") {
			what = "uncommitted changes to tracked files"
		} else if x.wholesale(c, dashDashPaths(c)) {
			what = "uncommitted changes to every file under the paths it names"
		}
	case "restore":
		if (!c.Has("S", "staged") || c.Has("W", "worktree")) && x.wholesale(c, c.Operands) {
			what = "uncommitted changes to every file under the paths it names"
		}
	case "stash":
		if first == "drop" || first == "clear" {
			what = "stashed changes"
		}
	case "branch":
		if c.Has("D") || c.Has("d", "delete") && c.Has("f", "force") {
			what = "commits of the branch that are not merged anywhere"
		}
	case "worktree":
		if first == "remove" && c.Has("f", "force") {
			what = "uncommitted changes in the worktree"
		}
	}
	if what != "" {
		x.ask(RuleLoseWork, "`%s` would throw away %s, which cannot be recovered (rule lose-work): the user must approve it. Commit or stash first, or name exactly what to discard.", c.Source, what)
	}
}

// dashDashPaths are the indexes of the paths after "--" (git checkout -- f),
// or the operands "." and globs when there is no "--".
func dashDashPaths(c *analysis.Command) []int {
	for i, a := range c.Args {
		if a == "--" && i > c.SubAt {
			return span(i+1, len(c.Args))
		}
	}
	var out []int
	for _, i := range c.Operands {
		if a := c.Args[i]; a == "." || a == "./" || c.Flags[i]&analysis.ArgGlob != 0 {
			out = append(out, i)
		}
	}
	return out
}

func span(from, to int) []int {
	out := make([]int, 0, max(to-from, 0))
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

// wholesale reports paths among idx that stand for many files: ".", a glob,
// a pathspec magic, a directory or a path only known at run time. Naming
// files one by one is a deliberate discard.
func (x *check) wholesale(c *analysis.Command, idx []int) bool {
	for _, i := range idx {
		a, f := c.Args[i], c.Flags[i]
		if f&(analysis.ArgDynamic|analysis.ArgGlob) != 0 || a == "." || a == "./" || strings.HasPrefix(a, ":") || strings.ContainsAny(a, "*?[") {
			return true
		}
		if _, r := x.where(c, a, f); r != "" {
			if fi, err := os.Stat(r); err == nil && fi.IsDir() {
				return true
			}
		}
	}
	return false
}
