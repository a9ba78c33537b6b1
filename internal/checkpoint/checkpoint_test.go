package checkpoint_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/shellgate/shellgate/internal/lane"

	"github.com/shellgate/shellgate/internal/checkpoint"
	"github.com/shellgate/shellgate/internal/checkpoint/checkpointtest"
	"github.com/shellgate/shellgate/internal/inotify"
	"github.com/shellgate/shellgate/internal/inotify/inotifytest"
)

func open(t testing.TB, root, dir string) *checkpoint.Store {
	t.Helper()
	s, err := checkpoint.Open(checkpoint.Options{Root: root, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// snapshot takes the checkpoint before command.
func snapshot(t testing.TB, s *checkpoint.Store, command string) int {
	t.Helper()
	id, err := s.Snapshot("run", command, "")
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// restore undoes command id and checks that the root's files are want
// (checkpointtest.State).
func restore(t testing.TB, s *checkpoint.Store, id int, want string) {
	t.Helper()
	if _, _, err := s.Restore(id); err != nil {
		t.Fatal(err)
	}
	if got := checkpointtest.State(t, s.Root()); got != want {
		t.Errorf("after undo:\n%s", checkpointtest.DiffLines(want, got))
	}
}

// TestUndoLoseWork runs each way of losing work in a real repository, then
// restores the checkpoint before it: every file byte for byte with its
// mode, .git included, git fsck clean and git status as before.
func TestUndoLoseWork(t *testing.T) {
	lane.Live(t)
	cases := []struct{ name, cmd string }{
		{"rm-rf-contents", `rm -rf ./* ./.env ./.gitignore`},
		{"reset-hard", `git reset -q --hard`},
		{"switch-f", `git switch -q -f feature`},
		{"checkout-index", `git checkout-index -a -f`},
		{"read-tree-reset", `git read-tree -u --reset HEAD`},
		{"branch-gc", `git branch -q -D feature && git stash clear && git reflog expire --expire=now --all && git gc -q --prune=now`},
		{"rmtree-objects", `python3 -c 'import shutil; shutil.rmtree(".git/objects")'`},
		{"find-delete", `find . -delete`},
		{"overwrite", `echo gone > src/pkg/f2.go && : > README.md`},
		{"sed-i", `sed -i 's/.*/x/' src/pkg/*.go run.sh`},
		{"chmod", `chmod 600 run.sh && chmod 777 .env`},
		{"clean-fdx", `git clean -q -fdx`},
		{"rm-root", `cd .. && rm -rf "$OLDPWD"`},
		{"truncate-commit", `: > src/pkg/f3.go && git commit -qam truncated`},
		{"checkout-dot", `git checkout -- .`},
		{"restore-dir", `git restore --staged --worktree src`},
		{"stash-drop", `git stash drop -q`},
		{"rm-r-tracked", `rm -r src README.md`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if strings.Contains(c.cmd, "python3") {
				if _, err := exec.LookPath("python3"); err != nil {
					t.Skip("no python3")
				}
			}
			lab, root := checkpointtest.Project(t)
			s := open(t, root, filepath.Join(lab, "store"))
			wantFiles, wantGit := checkpointtest.State(t, root), checkpointtest.GitView(t, root)

			id := snapshot(t, s, c.cmd)
			checkpointtest.Sh(t, root, c.cmd)
			if _, err := os.Stat(root); err != nil { // rm -rf of the root itself
				os.Mkdir(root, 0o755)
			}
			sum, err := s.Finish(id)
			if err != nil {
				t.Fatal(err)
			}
			if sum.Empty() {
				t.Fatalf("%s: no change seen", c.cmd)
			}
			if checkpointtest.State(t, root) == wantFiles {
				t.Fatalf("%s changed nothing on disk", c.cmd)
			}
			undo, _, err := s.Restore(id)
			if err != nil {
				t.Fatal(err)
			}
			if got := checkpointtest.State(t, root); got != wantFiles {
				t.Errorf("files after undo differ:\n%s", checkpointtest.DiffLines(wantFiles, got))
			}
			if got := checkpointtest.GitView(t, root); got != wantGit {
				t.Errorf("git after undo:\n%s\nwant:\n%s", got, wantGit)
			}
			// The undo is undone by restoring its own checkpoint.
			broken := checkpointtest.State(t, root)
			if _, _, err := s.Restore(undo); err != nil {
				t.Fatal(err)
			}
			if got := checkpointtest.State(t, root); got == broken {
				t.Errorf("undoing the undo changed nothing")
			}
		})
	}
}

// TestNestedRepositories: a nested repository with no commit, which git add
// refuses, is left out instead of failing every checkpoint; the root's own
// files are restored around it, and it is left as it is.
func TestNestedRepositories(t *testing.T) {
	lane.Live(t)
	lab, root := checkpointtest.Project(t)
	checkpointtest.Sh(t, root, "mkdir empty && cd empty && git init -q && echo e > e")
	s := open(t, root, filepath.Join(lab, "store"))
	want := checkpointtest.State(t, root)
	id := snapshot(t, s, "rm")
	checkpointtest.Sh(t, root, "rm -rf src README.md")
	restore(t, s, id, want)
}

// TestWorktreeGitFile: a worktree's .git is a file pointing to its
// repository; find -delete removes it with everything else, and undo puts
// it back, so git works there again.
func TestWorktreeGitFile(t *testing.T) {
	lane.Live(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	lab := checkpointtest.LabDir(t)
	main := filepath.Join(lab, "main")
	os.Mkdir(main, 0o755)
	checkpointtest.MakeRepo(t, main)
	checkpointtest.Sh(t, main, "git worktree add -q ../wt feature")
	root := filepath.Join(lab, "wt")
	checkpointtest.Sh(t, root, "echo change >> docs/feature.md && echo u > untracked.txt")
	s := open(t, root, filepath.Join(lab, "store"))
	want := checkpointtest.State(t, root)
	wantStatus := checkpointtest.Sh(t, root, "git status --porcelain")
	id := snapshot(t, s, "find -delete")
	checkpointtest.Sh(t, root, "find . -delete")
	sum, err := s.Finish(id)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Git != 1 || sum.Changes[len(sum.Changes)-1] != (checkpoint.Change{Kind: checkpoint.Deleted, Path: ".git"}) {
		t.Errorf("changes %+v: want .git deleted", sum)
	}
	restore(t, s, id, want)
	if got := checkpointtest.Sh(t, root, "git status --porcelain"); got != wantStatus {
		t.Errorf("git status after undo %q, want %q", got, wantStatus)
	}
}

// TestWatchOverflow: when the kernel's queue of inotify events overflowed,
// what it dropped is still seen: the next checkpoint walks the whole root.
func TestWatchOverflow(t *testing.T) {
	lane.Live(t)
	if !inotify.Available() {
		t.Skip("no inotify here")
	}
	lab, root := checkpointtest.Project(t)
	s := open(t, root, filepath.Join(lab, "store"))
	snapshot(t, s, "first") // every directory watched
	id := snapshot(t, s, "flood")
	inotifytest.Overflow(t, filepath.Join(root, "src", "pkg"))
	checkpointtest.Sh(t, root, "echo unseen >> run.sh") // its event is dropped: the queue is full
	sum, err := s.Finish(id)
	if err != nil {
		t.Fatal(err)
	}
	if want := []checkpoint.Change{{Kind: checkpoint.Modified, Path: "run.sh"}}; !slices.Equal(sum.Changes, want) {
		t.Errorf("changes %+v, want %+v", sum.Changes, want)
	}
}
