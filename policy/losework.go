package policy

import (
	"os"
	"strings"

	"github.com/shellgate/shellgate/internal/analysis"
)

// loseWork asks before git commands that throw away work inside the root —
// uncommitted changes, untracked files, stashes, unmerged branches — which no
// sandbox stops because they stay inside the project.
func (x *check) loseWork(c *analysis.Command) {
	if _, what := loseWorkFacts.first(x, c); what != "" {
		x.ask(RuleLoseWork, "`%s` would throw away %s, which cannot be recovered (rule lose-work): the user must approve it. Commit or stash first, or name exactly what to discard.", c.Source, what)
	}
}

// gitSub reports git running subcommand sub, not asked for help.
func gitSub(c *analysis.Command, sub string) bool {
	return c.Name == "git" && c.Sub == sub && !c.Has("help", "h")
}

// loseWorkFacts are the git commands that discard work, and what they discard.
var loseWorkFacts = &catalogue{facts: []fact{
	fact{programs: []string{"git"},
		test: func(_ *check, c *analysis.Command) string {
			return when(gitSub(c, "reset") && c.Has("hard", "merge"), "every uncommitted change to tracked files")
		},
		match: []string{"git reset --hard", "git reset --merge HEAD~1"}, notMatch: []string{"git reset", "git reset --soft HEAD~1"}},
	fact{programs: []string{"git"}, test: gitCleanLoses,
		match: []string{"git clean -fd", "git clean -fx", "git clean --force"}, notMatch: []string{"git clean -n", "git clean -fn", "git clean"}},
	fact{programs: []string{"git"},
		test: func(x *check, c *analysis.Command) string {
			if !gitSub(c, "checkout") {
				return ""
			}
			if c.Has("f", "force") {
				return "uncommitted changes to tracked files"
			}
			return when(x.wholesale(c, dashDashPaths(c)), "uncommitted changes to every file under the paths it names")
		},
		match: []string{"git checkout -f main", "git checkout -- .", "git checkout ."}, notMatch: []string{"git checkout main", "git checkout -- README.md"}},
	fact{programs: []string{"git"},
		test: func(_ *check, c *analysis.Command) string {
			return when(gitSub(c, "switch") && c.Has("f", "force", "discard-changes"), "uncommitted changes to tracked files")
		},
		match: []string{"git switch -f main", "git switch --discard-changes main", "git switch --disc main", "git switch -fc x"}, notMatch: []string{"git switch main", "git switch -c feature"}},
	fact{programs: []string{"git"},
		test: func(x *check, c *analysis.Command) string {
			return when(gitSub(c, "rm") && c.Has("f", "force") && !c.Has("cached", "n", "dry-run") && x.wholesale(c, c.Operands),
				"uncommitted changes to every file under the paths it names")
		},
		match: []string{"git rm -rf .", "git rm -r --force :/", "git rm -f '*.go'"}, notMatch: []string{"git rm -r --cached .", "git rm -f x.go", "git rm -rfn ."}},
	fact{programs: []string{"git"},
		test: func(_ *check, c *analysis.Command) string {
			return when(gitSub(c, "checkout-index") && c.Has("f", "force") && c.Has("a", "all"), "uncommitted changes to tracked files")
		},
		match: []string{"git checkout-index -f -a", "git checkout-index --all --force"}, notMatch: []string{"git checkout-index -a", "git checkout-index -f x.go"}},
	fact{programs: []string{"git"},
		test: func(x *check, c *analysis.Command) string {
			return when(gitSub(c, "restore") && (!c.Has("S", "staged") || c.Has("W", "worktree")) && x.wholesale(c, c.Operands),
				"uncommitted changes to every file under the paths it names")
		},
		match: []string{"git restore .", "git restore -SW ."}, notMatch: []string{"git restore --staged .", "git restore README.md"}},
	fact{programs: []string{"git"},
		test: func(_ *check, c *analysis.Command) string {
			return when(gitSub(c, "stash") && oneOf(subOf(c), "drop", "clear"), "stashed changes")
		},
		match: []string{"git stash drop", "git stash clear"}, notMatch: []string{"git stash pop", "git stash list"}},
	fact{programs: []string{"git"},
		test: func(_ *check, c *analysis.Command) string {
			return when(gitSub(c, "branch") && (c.Has("D") || c.Has("d", "delete") && c.Has("f", "force")), "commits of the branch that are not merged anywhere")
		},
		match: []string{"git branch -D x", "git branch -d -f x", "git branch --delete --force x"}, notMatch: []string{"git branch -d x", "git branch x"}},
	fact{programs: []string{"git"},
		test: func(_ *check, c *analysis.Command) string {
			return when(gitSub(c, "worktree") && subOf(c) == "remove" && c.Has("f", "force"), "uncommitted changes in the worktree")
		},
		match: []string{"git worktree remove -f ../wt"}, notMatch: []string{"git worktree remove ../wt", "git worktree list"}},
}}

// gitCleanLoses: git clean -f deletes untracked (-x: and ignored) files.
func gitCleanLoses(_ *check, c *analysis.Command) string {
	if !gitSub(c, "clean") || c.Has("n", "dry-run") || !c.Has("f", "force") {
		return ""
	}
	what := "untracked files"
	if c.Has("x") {
		what = "untracked and ignored files"
	}
	if c.Has("d") {
		what += ", directories included"
	}
	return what
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
