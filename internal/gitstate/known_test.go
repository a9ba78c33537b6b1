package gitstate

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestIndexGitDir(t *testing.T) {
	for rel, want := range map[string]string{
		"index":                     ".git",
		"worktrees/w/index":         ".git/worktrees/w",
		"modules/lib/index":         ".git/modules/lib",
		"modules/a/b/index":         ".git/modules/a/b",
		"modules/a/modules/b/index": ".git/modules/a/modules/b",
		"index.lock":                "",
		"myindex":                   "",
		"worktrees/index":           "",
		"worktrees/w/x/index":       "",
		"modules/index":             "",
		"refs/heads/index":          "",
		"objects/ab/index":          "",
	} {
		got, ok := IndexGitDir(rel)
		if got != want || ok != (want != "") {
			t.Errorf("IndexGitDir(%q) = %q, %v; want %q", rel, got, ok, want)
		}
	}
}

// Without keeps an index as a tracker knowing the given keys would leave it:
// what it knows stays, byte for byte when it knows everything.
func TestWithout(t *testing.T) {
	requireGit(t)
	d := repo(t, "2", "sha1")
	data, err := os.ReadFile(filepath.Join(d, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	present := func(string) bool { return false }
	all := []string{flagKey(".git", "gitlink", "dir/link"), flagKey(".git", "skip-worktree", "dir/b.txt"), flagKey(".git", "assume-unchanged", "a.txt")}
	if out, ok := Without(data, ".git", all, present, false); !ok || !bytes.Equal(out, data) {
		t.Errorf("knowing everything, the index changed (ok %v)", ok)
	}
	for _, c := range []struct {
		known []string
		want  string // flagged entries left (describe)
	}{
		{nil, ""},
		{all[1:2], "S 100644 dir/b.txt\n"},
		{all[:1], "H 160000 dir/link\n"},
		{[]string{flagKey(".git/worktrees/w", "gitlink", "dir/link")}, ""}, // another git directory's
	} {
		out, ok := Without(data, ".git", c.known, present, false)
		if !ok {
			t.Fatalf("%q: not ok", c.known)
		}
		ix, err := Parse(out)
		if err != nil {
			t.Fatalf("%q: %v", c.known, err)
		}
		if got := flagged(describe(ix)); got != c.want {
			t.Errorf("knowing %q: flagged entries\n%s\nwant\n%s", c.known, got, c.want)
		}
		if n := len(ix.Entries); n < 4 {
			t.Errorf("knowing %q: %d entries left", c.known, n)
		}
	}
	// A gitlink with no repository at its path stays: git status recurses
	// into none.
	absent := func(p string) bool { return p == "dir/link/.git" }
	if out, ok := Without(data, ".git", all[1:], absent, false); !ok || !bytes.Equal(out, data) {
		t.Errorf("a gitlink with no repository was dropped (ok %v)", ok)
	}
	if _, ok := Without([]byte("DIRC not an index"), ".git", nil, present, false); ok {
		t.Error("a broken index was kept")
	}
}

// DropGitlinks drops the gitlinks keep does not keep, and only them.
func TestDropGitlinks(t *testing.T) {
	requireGit(t)
	d := repo(t, "2", "sha1")
	data, err := os.ReadFile(filepath.Join(d, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	if out, ok := DropGitlinks(data, func(p string) bool { return p == "dir/link" }); !ok || !bytes.Equal(out, data) {
		t.Errorf("keeping its gitlink, the index changed (ok %v)", ok)
	}
	out, ok := DropGitlinks(data, func(string) bool { return false })
	if !ok {
		t.Fatal("not ok")
	}
	ix, err := Parse(out)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := Parse(data)
	if len(ix.Entries) != len(before.Entries)-1 || strings.Contains(describe(ix), "160000") {
		t.Errorf("the gitlink is not dropped alone:\n%s", describe(ix))
	}
	if _, ok := DropGitlinks([]byte("DIRC not an index"), func(string) bool { return true }); ok {
		t.Error("a broken index was kept")
	}
}

func TestIsTodoAndTodoKnown(t *testing.T) {
	for rel, want := range map[string]bool{
		"rebase-merge/git-rebase-todo":             true,
		"sequencer/todo":                           true,
		"worktrees/w/rebase-merge/git-rebase-todo": true,
		"modules/lib/sequencer/todo":               true,
		"rebase-merge/git-rebase-todo.backup":      false,
		"worktrees/w/x/sequencer/todo":             false,
		"refs/sequencer/todo":                      false,
		"index":                                    false,
	} {
		if got := IsTodo(rel); got != want {
			t.Errorf("IsTodo(%q) = %v", rel, got)
		}
	}
	known := []string{execKey("make test"), flagKey(".git", "gitlink", "x")}
	slices.Sort(known) // as Tracker.Known gives it
	for todo, want := range map[string]bool{
		"pick 123 one\n":                   true,
		"pick 123 one\nexec make test\n":   true,
		"x make test\r\n":                  true,
		"pick 123 one\nexec touch PWNED\n": false,
		"exec make test\nx   rm -rf ~\n":   false,
	} {
		if got := TodoKnown([]byte(todo), known); got != want {
			t.Errorf("TodoKnown(%q) = %v", todo, got)
		}
	}
}
