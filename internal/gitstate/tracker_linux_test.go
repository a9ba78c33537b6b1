package gitstate

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// moveTo is a quarantine that renames into dir, as the sandbox's does.
func moveTo(t *testing.T, dir string) func(string) (string, error) {
	return func(p string) (string, error) {
		to := filepath.Join(dir, filepath.Base(p))
		return to, os.Rename(p, to)
	}
}

func yes() bool { return true }
func no() bool  { return false }

// What the session started with stays; what a command added to the index
// (a gitlink, skip-worktree, assume-unchanged) is undone and told, and git
// status shows the changes again; what an approved command added stays.
func TestTrackerIndex(t *testing.T) {
	requireGit(t)
	d := repo(t, "3", "sha1") // starts with a gitlink, skip-worktree and assume-unchanged
	tr := New(d)
	q := lab(t)
	if _, notes, err := tr.Check(yes, moveTo(t, q)); len(notes) > 0 || err != nil {
		t.Fatalf("the start's own state was undone: %q %v", notes, err)
	}
	// What a command does.
	oid := strings.TrimSpace(git(t, d, "rev-parse", "HEAD"))
	git(t, d, "init", "-q", "sub") // a repository the command made
	git(t, d, "update-index", "--add", "--cacheinfo", "160000,"+oid+",sub")
	git(t, d, "update-index", "--skip-worktree", "dir/sub/c.txt")
	git(t, d, "update-index", "--assume-unchanged", "dir/sub/d.txt")
	os.WriteFile(filepath.Join(d, "dir/sub/c.txt"), []byte("changed"), 0o644)
	os.WriteFile(filepath.Join(d, "dir/sub/d.txt"), []byte("changed"), 0o644)
	if st := git(t, d, "status", "--porcelain"); strings.Contains(st, "c.txt") {
		t.Fatalf("the flags did not hide the change: %s", st)
	}
	_, notes, err := tr.Check(yes, moveTo(t, q))
	if err != nil || len(notes) != 1 || !strings.Contains(notes[0], "dropped the gitlinks sub") || !strings.Contains(notes[0], "skip-worktree on dir/sub/c.txt") || !strings.Contains(notes[0], "assume-unchanged on dir/sub/d.txt") {
		t.Fatalf("notes %q, err %v", notes, err)
	}
	st := git(t, d, "status", "--porcelain")
	if !strings.Contains(st, " M dir/sub/c.txt") || !strings.Contains(st, " M dir/sub/d.txt") || strings.Contains(st, "A  sub") {
		t.Fatalf("git status after the undo:\n%s", st)
	}
	got := lsFiles(t, d)
	for _, want := range []string{"S 100644 dir/b.txt", "h 100644 a.txt", "H 160000 dir/link"} {
		if !strings.Contains(got, want) {
			t.Fatalf("the start's %q is gone:\n%s", want, got)
		}
	}
	// An approved command's flags are kept, then and later.
	git(t, d, "update-index", "--skip-worktree", "dir/sub/c.txt")
	if _, notes, _ := tr.Check(no, moveTo(t, q)); len(notes) > 0 {
		t.Fatalf("an approved change was undone: %q", notes)
	}
	if _, notes, _ := tr.Check(yes, moveTo(t, q)); len(notes) > 0 {
		t.Fatalf("an approved change was undone later: %q", notes)
	}
}

// An index that cannot be read here is moved aside, and a stale index.lock
// left to block the rewrite too.
func TestTrackerIndexUnreadableOrLocked(t *testing.T) {
	requireGit(t)
	d := repo(t, "2", "sha1")
	tr := New(d)
	q := lab(t)
	git(t, d, "update-index", "--skip-worktree", "dir/sub/c.txt")
	os.WriteFile(filepath.Join(d, ".git/index.lock"), nil, 0o644)
	moved, notes, err := tr.Check(yes, moveTo(t, q))
	if err != nil || len(moved) != 1 || !strings.HasSuffix(moved[0], filepath.Join(q, "index.lock")) || len(notes) != 1 {
		t.Fatalf("moved %q notes %q err %v", moved, notes, err)
	}
	if strings.Contains(lsFiles(t, d), "S 100644 dir/sub/c.txt") {
		t.Fatal("the flag stayed")
	}
	os.WriteFile(filepath.Join(d, ".git/index"), []byte("DIRC garbage"), 0o644)
	moved, _, err = tr.Check(yes, moveTo(t, q))
	if err != nil || len(moved) != 1 {
		t.Fatalf("moved %q err %v", moved, err)
	}
	if _, err := os.Stat(filepath.Join(d, ".git/index")); !os.IsNotExist(err) {
		t.Fatal("the unreadable index stayed")
	}
}

// A rebase's todo list with exec lines no approved command left is moved
// aside, by every spelling; the approved ones stay.
func TestTrackerTodo(t *testing.T) {
	requireGit(t)
	for _, tc := range []struct {
		name, gitDir, file, todo string
		approved                 []string
		moved                    bool
	}{
		{"exec", ".git", "rebase-merge/git-rebase-todo", "pick 1 a\nexec sh fmt.sh\n", nil, true},
		{"x short", ".git", "rebase-merge/git-rebase-todo", "pick 1 a\n  x\tsh fmt.sh\r\n", nil, true},
		{"cherry-pick", ".git", "sequencer/todo", "pick 1 a\nexec sh fmt.sh\n", nil, true},
		{"worktree", ".git/worktrees/w", "rebase-merge/git-rebase-todo", "exec sh fmt.sh\n", nil, true},
		{"no exec", ".git", "rebase-merge/git-rebase-todo", "pick 1 a\npick 2 b\n", nil, false},
		{"approved", ".git", "rebase-merge/git-rebase-todo", "pick 1 a\nexec make test\n", []string{"exec make test\n"}, false},
		{"approved and more", ".git", "rebase-merge/git-rebase-todo", "exec make test\nexec sh fmt.sh\n", []string{"exec make test\n"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := lab(t)
			git(t, d, "init", "-q")
			p := filepath.Join(d, tc.gitDir, tc.file)
			os.MkdirAll(filepath.Dir(p), 0o755)
			tr := New(d)
			q := lab(t)
			for _, a := range tc.approved {
				os.WriteFile(p, []byte(a), 0o644)
				tr.Check(no, moveTo(t, q))
			}
			os.WriteFile(p, []byte(tc.todo), 0o644)
			moved, notes, err := tr.Check(yes, moveTo(t, q))
			if err != nil {
				t.Fatal(err)
			}
			_, statErr := os.Stat(p)
			if gone := os.IsNotExist(statErr); gone != tc.moved || (len(moved) == 1) != tc.moved || (len(notes) == 1) != tc.moved {
				t.Fatalf("moved %q notes %q, todo gone %v; want moved %v", moved, notes, gone, tc.moved)
			}
		})
	}
}

// A gitlink with no repository at its path (git checkout of a branch that
// has a submodule) runs nothing and stays; once a command makes a
// repository there, it goes, even though the index did not change again.
// One the session started with stays, repository or not.
func TestTrackerGitlinkByRepository(t *testing.T) {
	requireGit(t)
	d := repo(t, "2", "sha1") // dir/link: a gitlink with no repository, from the start
	tr := New(d)
	q := lab(t)
	oid := strings.TrimSpace(git(t, d, "rev-parse", "HEAD"))
	git(t, d, "update-index", "--add", "--cacheinfo", "160000,"+oid+",vendor/lib")
	if _, notes, _ := tr.Check(yes, moveTo(t, q)); len(notes) > 0 {
		t.Fatalf("a gitlink with no repository was undone: %q", notes)
	}
	git(t, filepath.Join(d), "init", "-q", "vendor/lib")
	git(t, filepath.Join(d), "init", "-q", "dir/link")
	_, notes, _ := tr.Check(yes, moveTo(t, q))
	if len(notes) != 1 || !strings.Contains(notes[0], "dropped the gitlinks vendor/lib (") {
		t.Fatalf("notes %q", notes)
	}
	if got := lsFiles(t, d); strings.Contains(got, "vendor/lib") || !strings.Contains(got, "dir/link") {
		t.Fatalf("git ls-files:\n%s", got)
	}
}

// A submodule's git directory under .git/modules is looked at as the
// root's: the user's git status in the root runs git status in it.
func TestTrackerSubmodule(t *testing.T) {
	requireGit(t)
	src := lab(t)
	git(t, src, "init", "-q")
	os.WriteFile(filepath.Join(src, "f.txt"), []byte("f"), 0o644)
	git(t, src, "add", "f.txt")
	git(t, src, "commit", "-qm", "f")
	d := lab(t)
	git(t, d, "init", "-q")
	git(t, d, "-c", "protocol.file.allow=always", "submodule", "-q", "add", src, "vendor/lib")
	git(t, d, "commit", "-qm", "lib")
	tr := New(d)
	q := lab(t)
	lib := filepath.Join(d, "vendor/lib")
	git(t, lib, "update-index", "--skip-worktree", "f.txt")
	os.WriteFile(filepath.Join(lib, "f.txt"), []byte("changed"), 0o644)
	_, notes, err := tr.Check(yes, moveTo(t, q))
	if err != nil || len(notes) != 1 || !strings.HasPrefix(notes[0], ".git/modules/vendor/lib/index: cleared skip-worktree on f.txt") {
		t.Fatalf("notes %q, err %v", notes, err)
	}
	if st := git(t, d, "status", "--porcelain"); !strings.Contains(st, " M vendor/lib") {
		t.Fatalf("git status in the root: %q", st)
	}
}

// Known lists what the tracker knows, whose count grows as it learns, and
// Without with that list leaves the index as the tracker does; in a sparse
// checkout the skip-worktree flags (git's own, one on every path outside
// it) are not listed, and Without keeps them where the path is absent.
func TestTrackerKnown(t *testing.T) {
	requireGit(t)
	d := repo(t, "2", "sha1") // starts with a gitlink, skip-worktree and assume-unchanged
	tr := New(d)
	known, n := tr.Known()
	if !slices.IsSorted(known) || !slices.Contains(known, flagKey(".git", "skip-worktree", "dir/b.txt")) || !slices.Contains(known, flagKey(".git", "gitlink", "dir/link")) {
		t.Fatalf("known %q", known)
	}
	data, _ := os.ReadFile(filepath.Join(d, ".git", "index"))
	if out, ok := Without(data, ".git", known, func(string) bool { return false }, false); !ok || !bytes.Equal(out, data) {
		t.Errorf("the start's index is not kept as it is by what the tracker knows")
	}
	git(t, d, "update-index", "--skip-worktree", "dir/sub/c.txt")
	tr.Check(no, nil) // an approved command's
	if _, m := tr.Known(); m <= n {
		t.Errorf("count %d after learning, %d before", m, n)
	}

	git(t, d, "sparse-checkout", "set", "--no-cone", "/dir/sub/")
	tr = New(d)
	known, _ = tr.Known()
	for _, k := range known {
		if strings.Contains(k, "\x00skip-worktree\x00") {
			t.Errorf("in a sparse checkout, known lists %q", k)
		}
	}
	data, _ = os.ReadFile(filepath.Join(d, ".git", "index"))
	absent := func(p string) bool { _, err := os.Lstat(filepath.Join(d, p)); return err != nil }
	out, ok := Without(data, ".git", known, absent, true)
	if !ok {
		t.Fatal("not ok")
	}
	ix, _ := Parse(out)
	if !strings.Contains(describe(ix), "S 100644 a.txt") {
		t.Errorf("a sparse checkout's skip-worktree flags are not kept:\n%s", describe(ix))
	}
}
