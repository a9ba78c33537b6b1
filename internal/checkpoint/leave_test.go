package checkpoint_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/shellgate/shellgate/internal/checkpoint"
	"github.com/shellgate/shellgate/internal/checkpoint/checkpointtest"
)

// A checkpoint leaves out what SetLeave says — protected paths, a root
// pattern, a .git file — and keeps what it names Kept; it follows the
// Leave in force when it is taken, whatever the last checkpoint (its
// watch's plan, its scan cache) took: a path a checkpoint kept is not taken
// as it was by the next, which leaves it out, nor is one a checkpoint left
// out missing from the next, which keeps it. Undo to a checkpoint that left
// a path out removes it, as any file made since.
func TestLeave(t *testing.T) {
	lab, root := checkpointtest.Project(t)
	checkpointtest.Sh(t, root, `set -e
mkdir -p .vscode .idea && printf '{}\n' > .vscode/tasks.json && printf 'x\n' > .idea/run.xml
printf '{}\n' > a.code-workspace && printf '{}\n' > b.code-workspace
mkdir -p .git/hooks && printf '#!/bin/sh\n' > .git/hooks/pre-commit
mkdir -p .github/workflows && printf 'on: push\n' > .github/workflows/ci.yml && printf 'x\n' > .github/CODEOWNERS`)
	s := open(t, root, filepath.Join(lab, "store"))
	defer s.Close()
	leave := &checkpoint.Leave{Paths: []string{".vscode", ".idea", ".git/hooks", ".github/workflows"}, Patterns: []string{"*.code-workspace"},
		Kept: []string{".idea", "b.code-workspace"}}
	out := []string{"work/.vscode/tasks.json", "work/a.code-workspace", "git/hooks/pre-commit", "work/.github/workflows/ci.yml"}
	in := []string{"work/.idea/run.xml", "work/b.code-workspace", "work/README.md", "git/HEAD", "work/.github/CODEOWNERS"}
	check := func(id int, left bool) {
		t.Helper()
		files := storeFiles(t, s.Dir(), id)
		for _, p := range out {
			if got := strings.Contains(files, p+"\n"); got == left {
				t.Errorf("checkpoint %d: %s kept %v, want %v", id, p, got, !left)
			}
		}
		for _, p := range in {
			if !strings.Contains(files, p+"\n") {
				t.Errorf("checkpoint %d lacks %s", id, p)
			}
		}
	}
	check(snapshot(t, s, "all"), false)
	s.SetLeave(leave)
	check(snapshot(t, s, "leaving"), true) // nothing changed: the watch's plan would reuse the last
	left := snapshot(t, s, "leaving again")
	check(left, true)
	s.SetLeave(nil)
	check(snapshot(t, s, "all again"), false)

	// A new process (the scan cache file) leaving out, then keeping.
	s.Close()
	s = open(t, root, filepath.Join(lab, "store"))
	id, err := s.SnapshotLeaving(leave, "run", "new process", "")
	if err != nil {
		t.Fatal(err)
	}
	check(id, true)
	s.SetLeave(nil) // SnapshotLeaving's stays in force until then
	check(snapshot(t, s, "and keeping"), false)

	// Undo to a checkpoint that left them out, on the host: they go, as
	// files made since; the kept ones stay.
	if _, _, err := s.Restore(left); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{".vscode/tasks.json", "a.code-workspace", ".git/hooks/pre-commit", ".github/workflows/ci.yml"} {
		if _, err := os.Lstat(filepath.Join(root, p)); err == nil {
			t.Errorf("%s is still there after undo to a checkpoint that left it out", p)
		}
	}
	for _, p := range []string{".idea/run.xml", "b.code-workspace", ".git/HEAD"} {
		if _, err := os.Lstat(filepath.Join(root, p)); err != nil {
			t.Errorf("undo removed %s: %v", p, err)
		}
	}
}

// A .git file at the root's top is left out with Leave.GitFile.
func TestLeaveGitFile(t *testing.T) {
	lab, root := checkpointtest.Project(t)
	checkpointtest.Sh(t, root, `rm -rf .git && printf 'gitdir: /elsewhere\n' > .git`)
	s := open(t, root, filepath.Join(lab, "store"))
	defer s.Close()
	id, err := s.SnapshotLeaving(&checkpoint.Leave{GitFile: true}, "run", "gitfile", "")
	if err != nil {
		t.Fatal(err)
	}
	if out, _ := exec.Command("git", "--git-dir", filepath.Join(s.Dir(), "git"), "cat-file", "-e", refOf(id)+":gitfile").CombinedOutput(); len(out) == 0 {
		t.Errorf("checkpoint %d keeps the .git file", id)
	}
	s.SetLeave(nil)
	id = snapshot(t, s, "gitfile kept")
	if out, err := exec.Command("git", "--git-dir", filepath.Join(s.Dir(), "git"), "cat-file", "-e", refOf(id)+":gitfile").CombinedOutput(); err != nil {
		t.Errorf("checkpoint %d lacks the .git file: %v %s", id, err, out)
	}
}

// refOf is the ref of the checkpoint before command id.
func refOf(id int) string { return "refs/cp/" + strconv.Itoa(id) + "-b" }

// storeFiles lists the files of the checkpoint before command id.
func storeFiles(t *testing.T, dir string, id int) string {
	t.Helper()
	out, err := exec.Command("git", "--git-dir", filepath.Join(dir, "git"), "ls-tree", "-r", "--name-only", refOf(id)).CombinedOutput()
	if err != nil {
		t.Fatalf("ls-tree: %v\n%s", err, out)
	}
	return string(out)
}
