package checkpoint_test

import (
	"fmt"
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

// TestUndoNestedLoseWork: a repository nested in the root is kept as the
// root is — its working files, tracked or not, its small ignored files and
// its .git — so each way of losing work there is undone byte for byte, with
// git fsck clean and git status as before; the changes are told as the
// nested repository's files and its .git's.
func TestUndoNestedLoseWork(t *testing.T) {
	lane.Live(t)
	cases := []struct{ name, cmd string }{
		{"rm-uncommitted", `rm vendor/lib/notes.txt vendor/lib/src/pkg/f2.go vendor/lib/.env`},
		{"checkout-dot-piped", `echo "cd vendor/lib; git checkout -- ." | bash`},
		{"reset-hard-C", `git -C vendor/lib reset -q --hard`},
		{"clean-fd", `(cd vendor/lib; git clean -q -fd)`},
		{"rm-objects", `rm -rf vendor/lib/.git/objects`},
		{"rm-git", `rm -rf vendor/lib/.git`},
		{"branch-gc", `cd vendor/lib && git branch -q -D feature && git stash clear && git reflog expire --expire=now --all && git gc -q --prune=now`},
		{"stash-drop", `git -C vendor/lib stash drop -q`},
		{"chmod", `chmod 644 vendor/lib/.env && chmod 600 vendor/lib/run.sh`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lab, root := checkpointtest.Project(t)
			lib := filepath.Join(root, "vendor", "lib")
			os.MkdirAll(lib, 0o755)
			checkpointtest.MakeRepo(t, lib)
			s := open(t, root, filepath.Join(lab, "store"))
			// a first checkpoint, so that the one before the command is
			// the watch's incremental one
			snapshot(t, s, "first")
			checkpointtest.Sh(t, lib, "echo later >> notes.txt")
			wantFiles, wantGit := checkpointtest.State(t, root), checkpointtest.GitView(t, lib)
			id := snapshot(t, s, c.cmd)
			checkpointtest.Sh(t, root, c.cmd)
			sum, err := s.Finish(id)
			if err != nil {
				t.Fatal(err)
			}
			if sum.Empty() {
				t.Fatalf("%s: no change seen", c.cmd)
			}
			for _, ch := range sum.Changes {
				if !strings.HasPrefix(ch.Path, "vendor/lib/") {
					t.Errorf("%s: change %+v outside the nested repository", c.cmd, ch)
				}
			}
			if checkpointtest.State(t, root) == wantFiles {
				t.Fatalf("%s changed nothing on disk", c.cmd)
			}
			if _, _, err := s.Restore(id); err != nil {
				t.Fatal(err)
			}
			if got := checkpointtest.State(t, root); got != wantFiles {
				t.Errorf("files after undo differ:\n%s", checkpointtest.DiffLines(wantFiles, got))
			}
			if got := checkpointtest.GitView(t, lib); got != wantGit {
				t.Errorf("git in the nested repository after undo:\n%s\nwant:\n%s", got, wantGit)
			}
			checkpointtest.Sh(t, lab, "git --git-dir '"+filepath.Join(s.Dir(), "git")+"' fsck --strict --no-dangling")
		})
	}
}

// TestUndoSubmodule: a submodule's checkout (a .git file naming the root's
// .git/modules) is kept as a nested repository: its uncommitted work, its
// .git file and its repository come back after they were thrown away.
func TestUndoSubmodule(t *testing.T) {
	lane.Live(t)
	lab, root := checkpointtest.Project(t)
	up := filepath.Join(lab, "upstream")
	os.Mkdir(up, 0o755)
	checkpointtest.MakeRepo(t, up)
	checkpointtest.Sh(t, root, "git -c protocol.file.allow=always submodule add -q '"+up+"' sub && git commit -qm sub && echo work >> sub/README.md && echo u > sub/untracked.txt")
	if b, err := os.ReadFile(filepath.Join(root, "sub", ".git")); err != nil || !strings.HasPrefix(string(b), "gitdir: ../.git/modules/") {
		t.Fatalf("sub/.git: %q %v", b, err)
	}
	s := open(t, root, filepath.Join(lab, "store"))
	want, wantGit := checkpointtest.State(t, root), checkpointtest.GitView(t, filepath.Join(root, "sub"))
	id := snapshot(t, s, "lose")
	checkpointtest.Sh(t, root, "git -C sub reset -q --hard && git -C sub clean -qfd && rm sub/.git")
	if _, err := s.Finish(id); err != nil {
		t.Fatal(err)
	}
	restore(t, s, id, want)
	if got := checkpointtest.GitView(t, filepath.Join(root, "sub")); got != wantGit {
		t.Errorf("git in the submodule after undo:\n%s\nwant:\n%s", got, wantGit)
	}
	if !checkpoint.Covers(root, filepath.Join(root, "sub"), 0) {
		t.Error("Covers: the submodule is not covered")
	}
}

// TestUndoOldGitlink: a checkpoint of the old format, which kept a nested
// repository as a gitlink (its checked-out commit), still restores: the
// root's files come back, and the nested repository's directory is left as
// it is, its working files and .git untouched.
func TestUndoOldGitlink(t *testing.T) {
	lane.Live(t)
	lab, root := checkpointtest.Project(t)
	lib := filepath.Join(root, "vendor", "lib")
	os.MkdirAll(lib, 0o755)
	checkpointtest.MakeRepo(t, lib)
	s := open(t, root, filepath.Join(lab, "store"))
	r, err := s.Record(snapshot(t, s, "new format"))
	if err != nil {
		t.Fatal(err)
	}
	// The same checkpoint as the old format wrote it: vendor/lib a gitlink,
	// no "nested" tree.
	old := strings.TrimSpace(checkpointtest.Sh(t, lab, `set -e
g() { git --git-dir '`+filepath.Join(s.Dir(), "git")+`' "$@"; }
head=$(git -C '`+lib+`' rev-parse HEAD)
vendor=$(g ls-tree `+r.Before+`:work/vendor | sed "s/^040000 tree [0-9a-f]*\tlib$/160000 commit $head\tlib/" | g mktree)
work=$(g ls-tree `+r.Before+`:work | sed "s/^\(040000 tree \)[0-9a-f]*\(\tvendor\)$/\1$vendor\2/" | g mktree)
g ls-tree `+r.Before+` | awk -F'\t' '$2 != "nested"' | sed "s/^\(040000 tree \)[0-9a-f]*\(\twork\)$/\1$work\2/" | g mktree
`))
	if strings.Contains(checkpointtest.Sh(t, lab, "git --git-dir '"+filepath.Join(s.Dir(), "git")+"' ls-tree -r "+old), "\tnested/") {
		t.Fatal("the old-format tree has a nested tree")
	}
	f, err := os.OpenFile(filepath.Join(s.Dir(), "log.jsonl"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, `{"id":%d,"time":"2026-01-01T00:00:00Z","label":"run","command":"old","before":%q}`+"\n", r.ID+1, old)
	f.Close()

	checkpointtest.Sh(t, root, "rm README.md src/pkg/f1.go && echo lib-change >> vendor/lib/notes.txt && rm vendor/lib/src/pkg/f2.go")
	wantLib, wantGit := checkpointtest.State(t, lib), checkpointtest.GitView(t, lib)
	if _, _, err := s.Restore(r.ID + 1); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"README.md", "src/pkg/f1.go"} {
		if _, err := os.Stat(filepath.Join(root, f)); err != nil {
			t.Errorf("%s not restored: %v", f, err)
		}
	}
	if got := checkpointtest.State(t, lib); got != wantLib {
		t.Errorf("the nested repository's files changed:\n%s", checkpointtest.DiffLines(wantLib, got))
	}
	if got := checkpointtest.GitView(t, lib); got != wantGit {
		t.Errorf("git in the nested repository:\n%s\nwant:\n%s", got, wantGit)
	}
}

// TestNestedRepositories: a nested repository with no commit (which git add
// refuses as a gitlink) is kept as any other; the root's own files are
// restored around it.
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

// TestCovers: what a checkpoint keeps whole, where git may work: the root,
// a nested repository, what does not exist yet; not a directory the root
// ignores, a worktree of a repository outside the root, a symlink, a place
// outside the root.
func TestCovers(t *testing.T) {
	lane.Live(t)
	lab, root := checkpointtest.Project(t)
	out := filepath.Join(lab, "outside")
	checkpointtest.Sh(t, root, `set -e
mkdir -p vendor/lib && git -C vendor/lib init -q && mkdir vendor/lib/src
mkdir -p node_modules/dep && git -C node_modules/dep init -q
git init -q `+out+` && git -C `+out+` commit -q --allow-empty -m o && git -C `+out+` worktree add -q `+root+`/wt
ln -s vendor link`)
	for p, want := range map[string]bool{
		"": true, "src/pkg": true, "vendor/lib": true, "vendor/lib/src": true, "vendor/lib/.git": true,
		".git": true, "new/dir": true, "node_modules/new/dir": false, "build.log": false, "node_modules/dep": false, "wt": false, "link/lib": false, "..": false,
	} {
		if got := checkpoint.Covers(root, filepath.Join(root, p), 0); got != want {
			t.Errorf("Covers(%q) = %v, want %v", p, got, want)
		}
	}
}

// TestNestedWorktree: a worktree inside the root of a repository outside
// it keeps its files and its .git file, which is never followed: nothing of
// the outside repository is read into the checkpoint, and undo puts the
// files and the .git file back.
func TestNestedWorktree(t *testing.T) {
	lane.Live(t)
	lab, root := checkpointtest.Project(t)
	out := filepath.Join(lab, "outside")
	os.Mkdir(out, 0o755)
	checkpointtest.MakeRepo(t, out)
	checkpointtest.Sh(t, out, "git worktree add -q '"+root+"/wt' feature && echo change >> '"+root+"/wt/docs/feature.md' && printf 'secret-outside\\n' > .git/info/exclude")
	s := open(t, root, filepath.Join(lab, "store"))
	want := checkpointtest.State(t, root)
	id := snapshot(t, s, "rm")
	checkpointtest.Sh(t, root, "rm -rf wt/docs wt/.git")
	restore(t, s, id, want)
	store := filepath.Join(s.Dir(), "git")
	r, err := s.Record(id)
	if err != nil {
		t.Fatal(err)
	}
	listing := checkpointtest.Sh(t, lab, "git --git-dir '"+store+"' ls-tree -r --name-only "+r.Before)
	if !strings.Contains(listing, "\nnested/wt\n") || strings.Contains(listing, "nested/wt/") {
		t.Errorf("the worktree's .git file is not kept as a blob, or something behind it was read:\n%s", listing)
	}
	if checkpointtest.Sh(t, filepath.Join(root, "wt"), "git status --porcelain") != " M docs/feature.md\n" {
		t.Error("git in the worktree after undo does not see its change")
	}
}

// A command number the store does not hold: the error says which it holds,
// with no package prefix (it is shown to users as it is).
func TestNoRecordError(t *testing.T) {
	for _, tc := range []struct {
		err  checkpoint.NoRecordError
		want string
	}{
		{checkpoint.NoRecordError{ID: 3}, "no command 3: there are no checkpoints yet"},
		{checkpoint.NoRecordError{ID: 99, First: 1, Last: 5}, "no command 99: the checkpoints hold commands 1 to 5"},
		{checkpoint.NoRecordError{ID: 2, First: 7, Last: 7}, "no command 2: it was pruned; the checkpoints hold command 7"},
		{checkpoint.NoRecordError{ID: 4, First: 1, Last: 9, Why: "dropped 2026-01-02 15:04:05 to hold the store to max_size (2.0 GiB)"},
			"no command 4: it was dropped 2026-01-02 15:04:05 to hold the store to max_size (2.0 GiB); the checkpoints hold commands 1 to 9"},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.err, got, tc.want)
		}
	}
}

// A store inside the root is refused, and the error says what the user can
// do about it, by name: a root in a project (a shellgate started in the home
// directory has the default store inside its root), or [checkpoints] dir.
func TestStoreInsideRootSaysHow(t *testing.T) {
	root := t.TempDir()
	_, err := checkpoint.Open(checkpoint.Options{Root: root, Dir: filepath.Join(root, ".local", "state", "shellgate", "checkpoints")})
	if err == nil {
		t.Fatal("a store inside the root was opened")
	}
	for _, want := range []string{"is inside the project root " + root, "--root DIR", "[checkpoints] dir"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}
