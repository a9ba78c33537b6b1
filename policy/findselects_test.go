package policy_test

import (
	"os"
	"path/filepath"
	"testing"
)

// What find -exec, -execdir and -delete act on, and what xargs -0 gets from
// find -print0, is what find's tests select: a name test that cannot name a
// protected path (__pycache__, *.pyc) lets a clean-up run, where {} used to
// stand for the starting point itself (the whole project, .git included). A
// glob is judged by what it may match: the shell's against the directory as
// it is, find's against the protected names.
func TestFindSelects(t *testing.T) {
	l := newLab(t)
	if err := os.MkdirAll(filepath.Join(l.root, ".vscode"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(".vscode/settings.json", filepath.Join(l.root, "conf.json")); err != nil {
		t.Fatal(err)
	}
	checkDefaults(t, l, []decisionCase{
		{"find . -type d -name __pycache__ -exec rm -rf {} +", allow, ""},
		{"find . -type d -name __pycache__ -execdir rm -rf {} +", allow, ""},
		{"find . -name __pycache__ -delete", allow, ""},
		{"find . -type d -name __pycache__ -print0 | xargs -0 rm -rf", allow, ""},
		{"find . -name '*.pyc' -delete", allow, ""},
		{"find . -iname '*.PYC' -exec rm -f {} \\;", allow, ""},
		{"find . -path '*/__pycache__' -exec rm -rf {} +", allow, ""},
		{"find . \\( -name node_modules -o -name .git \\) -prune -o -name __pycache__ -exec rm -rf {} +", allow, ""},
		{"find src -name '*.orig' -exec mv {} {}.bak \\;", allow, ""},
		{"rm -rf ./*.pyc", allow, ""},
		{"rm -rf build/*", allow, ""},
		// Nothing narrows what find acts on: the project itself, deleted whole
		// (rm -rf of the root: lose-work, which checkpoints do not relax for it).
		{"find . -exec rm -rf {} +", ask, "lose-work"},
		{"find . -execdir rm -rf {} +", ask, "lose-work"},
		{"find . -delete", ask, "lose-work"},
		{"find . -print0 | xargs -0 rm -rf", ask, "lose-work"},
		{"find . ! -name __pycache__ -exec rm -rf {} +", ask, "lose-work"},
		{"find . -name __pycache__ -o -exec rm -rf {} +", ask, "lose-work"},
		{"find -L . -name __pycache__ -exec rm -rf {} +", ask, "lose-work"},
		// A name test that may name a protected path.
		{"find . -name '.git*' -exec rm -rf {} +", ask, "protected-paths"},
		{"find . -name '.git*' -execdir rm -rf {} +", ask, "protected-paths"},
		{"find . -name '.git*' -delete", ask, "protected-paths"},
		{"find . -name '.git*' -print0 | xargs -0 rm -rf", ask, "protected-paths"},
		{"find . -name '*' -delete", ask, "protected-paths"},
		{"find . -name '[.]git' -delete", ask, "protected-paths"},
		{"find . -iname .GIT -exec rm -rf {} +", ask, "protected-paths"},
		{"find . -path './.git/*' -exec rm -rf {} +", ask, "protected-paths"},
		{"find . -name .vscode -exec rm -rf {} +", ask, "protected-paths"},
		{"find . -name 'lefthook*' -delete", ask, "protected-paths"},
		// The shell's globs.
		{"rm -rf .git*", ask, "protected-paths"},
		{"rm -rf .vsc*", ask, "protected-paths"},
		{"rm -rf .[a-z]*", ask, "protected-paths"},
		{"rm -rf */.vsc*", ask, "protected-paths"},
		{"sed -i s/a/b/ *.json", ask, "protected-paths"}, // conf.json leads into .vscode
		{"sed -i s/a/b/ *.csv", allow, ""},
		// Split at blanks, a found name may become other paths.
		{"find . -name __pycache__ -print0 | xargs rm -rf", ask, "dynamic"},
	})
}
