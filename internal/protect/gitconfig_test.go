package protect

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// What the root's and the user's git config make git run from the root is
// protected too: core.hooksPath, an fsmonitor script, included files and
// what they name, and any word of any key that names a path in the root (a
// filter's or textconv's script, an fsmonitor script in .git); not what lies
// outside the root, options, URLs, a bare word naming nothing there or a
// value of one bare word (a branch, a mode: main, input), and a
// config that is not a regular file is not read (nor waited on).
func TestGitRunsFrom(t *testing.T) {
	root, home := t.TempDir(), t.TempDir()
	write := func(p, s string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(root, ".git/config"), "[core]\n\thooksPath = .githooks\n\tfsmonitor = tools/fsmon.sh\n[include]\n\tpath = ../ci/git.inc\n"+
		"[filter \"strip\"]\n\tclean = ./scripts/clean.sh --flag\n[diff \"conv\"]\n\ttextconv = sh conv.sh\n[alias]\n\tb = !.git/b.sh\n"+
		"[remote \"origin\"]\n\turl = https://example.com/x/y.git\n[user]\n\tname = nobody\n"+
		"[init]\n\tdefaultBranch = main\n[core]\n\tautocrlf = input\n\thooksPath = githooks\n")
	write(filepath.Join(root, "main"), "") // a build output, named as the branch
	write(filepath.Join(root, "input/data.csv"), "")
	write(filepath.Join(root, "githooks/pre-commit"), "")
	write(filepath.Join(root, "conv.sh"), "")
	write(filepath.Join(root, "ci/git.inc"), "[core]\n\tpager = x\n[include]\n\tpath = more.inc\n")
	write(filepath.Join(root, "ci/more.inc"), "")
	write(filepath.Join(home, ".gitconfig"), "[core]\n\thooksPath = hooks/local\n\tfsmonitor = true\n[include]\n\tpath = /etc/elsewhere\n")
	got := GitRunsFrom(root, home, Linked{})
	slices.Sort(got)
	want := []string{filepath.Join(root, ".git/b.sh"), filepath.Join(root, ".githooks"), filepath.Join(root, "ci/git.inc"), filepath.Join(root, "ci/more.inc"),
		filepath.Join(root, "conv.sh"), filepath.Join(root, "githooks"), filepath.Join(root, "hooks/local"), filepath.Join(root, "scripts/clean.sh"), filepath.Join(root, "tools/fsmon.sh")}
	if !slices.Equal(got, want) {
		t.Errorf("GitRunsFrom = %q\nwant %q", got, want)
	}
}

// In a linked worktree, what git runs from the root is named by the main
// repository's config and the worktree's config.worktree, as LinkedGitDir
// read them at the session's start: the root's .git is not read again, so a
// .git file changed meanwhile does not make the protected paths disagree with
// the rest of the view.
func TestGitRunsFromLinked(t *testing.T) {
	base := t.TempDir()
	root, common := filepath.Join(base, "feature"), filepath.Join(base, "main", ".git")
	gitDir := filepath.Join(common, "worktrees", "feature")
	for p, s := range map[string]string{
		filepath.Join(root, ".git"):                     "gitdir: " + gitDir + "\n",
		filepath.Join(gitDir, "commondir"):              "../..\n",
		filepath.Join(gitDir, "config.worktree"):        "[core]\n\tfsmonitor = tools/fsmon.sh\n",
		filepath.Join(common, "config"):                 "[core]\n\thooksPath = .githooks\n",
		filepath.Join(base, "other", "config"):          "[core]\n\thooksPath = other-hooks\n",
		filepath.Join(base, "other", "config.worktree"): "",
	} {
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(s), 0o644))
	}
	l, ok := LinkedGitDir(root)
	if !ok {
		t.Fatal("the worktree's git directory is not found")
	}
	must(t, os.WriteFile(filepath.Join(root, ".git"), []byte("gitdir: "+filepath.Join(base, "other")+"\n"), 0o644))
	got := GitRunsFrom(root, "", l)
	slices.Sort(got)
	if want := []string{filepath.Join(root, ".githooks"), filepath.Join(root, "tools/fsmon.sh")}; !slices.Equal(got, want) {
		t.Errorf("GitRunsFrom = %q\nwant %q", got, want)
	}
}

// A nested repository's config names paths in its own work tree, whether its
// git directory is its .git or the one its .git file names (a submodule's).
func TestNestedRunsFrom(t *testing.T) {
	root := t.TempDir()
	for p, s := range map[string]string{
		"a/.git/config":                  "[core]\n\thooksPath = .githooks\n",
		"b/.git":                         "gitdir: ../.git/modules/b\n",
		".git/modules/b/config":          "[filter \"s\"]\n\tclean = ./clean.sh\n",
		".git/modules/b/config.worktree": "",
	} {
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755))
		must(t, os.WriteFile(filepath.Join(root, p), []byte(s), 0o644))
	}
	for dir, want := range map[string]string{"a": "a/.githooks", "b": "b/clean.sh"} {
		if got := NestedRunsFrom(filepath.Join(root, dir), ""); !slices.Equal(got, []string{filepath.Join(root, want)}) {
			t.Errorf("NestedRunsFrom(%s) = %q, want %s", dir, got, want)
		}
	}
}
