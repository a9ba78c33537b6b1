package checkpoint_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/shellgate/shellgate/internal/checkpoint"
)

// labDir makes a directory under /var/tmp (not /tmp: the tests leave
// nothing there), removed when the test ends.
func labDir(t testing.TB) string {
	t.Helper()
	base := "/var/tmp"
	if _, err := os.Stat(base); err != nil {
		base = os.TempDir()
	}
	d, err := os.MkdirTemp(base, "shellgate-cp-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err == nil && e.IsDir() {
				os.Chmod(p, 0o755)
			}
			return nil
		})
		os.RemoveAll(d)
	})
	return d
}

func sh(t testing.TB, dir, script string) string {
	t.Helper()
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
	return string(out)
}

// MakeRepo fills root with a repository holding every kind of work a
// command can lose: commits on two branches, a tag, a stash, a staged and an
// unstaged change, an untracked file, an executable, a symlink, an ignored
// .env (0600) and ignored bulk.
func makeRepo(t testing.TB, root string) {
	t.Helper()
	sh(t, root, `set -e
git init -q -b main
printf 'node_modules/\n.env\n*.log\n' > .gitignore
mkdir -p src/pkg docs
for i in 1 2 3 4 5; do printf 'package pkg\n// %d\n' $i > src/pkg/f$i.go; done
printf '#!/bin/sh\necho hi\n' > run.sh && chmod 755 run.sh
printf 'readme\n' > README.md
ln -s README.md link.md
git add -A && git commit -qm one
git switch -q -c feature && printf 'feature\n' > docs/feature.md && git add -A && git commit -qm feature && git switch -q main
git tag v1
printf 'stashed\n' >> README.md && git stash -q
printf 'staged\n' >> src/pkg/f1.go && git add src/pkg/f1.go
printf 'unstaged\n' >> src/pkg/f2.go
printf 'untracked\n' > notes.txt
printf 'SECRET=1\n' > .env && chmod 600 .env
printf 'private\n' > private.txt && chmod 640 private.txt
mkdir -p node_modules/dep && printf 'bulk\n' > node_modules/dep/index.js
printf 'log\n' > build.log
`)
}

// state is what a restore must bring back: every file's mode and content
// (node_modules aside: ignored bulk is not kept), and git's view.
func state(t testing.TB, root string) string {
	t.Helper()
	var lines []string
	filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		if rel == "node_modules" {
			return filepath.SkipDir
		}
		if e.IsDir() {
			return nil
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return nil
		}
		var sum string
		if fi.Mode()&fs.ModeSymlink != 0 {
			sum, _ = os.Readlink(p)
		} else {
			b, _ := os.ReadFile(p)
			h := sha256.Sum256(b)
			sum = hex.EncodeToString(h[:8])
		}
		lines = append(lines, fmt.Sprintf("%s %v %s", rel, fi.Mode(), sum))
		return nil
	})
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func gitView(t testing.TB, root string) string {
	return sh(t, root, `git status --porcelain=v1 --branch; git stash list; git branch -a; git tag; git rev-parse HEAD; git fsck --strict --no-dangling 2>&1`)
}

func open(t testing.TB, root, dir string) *checkpoint.Store {
	t.Helper()
	s, err := checkpoint.Open(checkpoint.Options{Root: root, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestUndoLoseWork runs each way of losing work in a real repository, then
// restores the checkpoint before it: every file byte for byte with its
// mode, .git included, git fsck clean and git status as before.
func TestUndoLoseWork(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
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
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if strings.Contains(c.cmd, "python3") {
				if _, err := exec.LookPath("python3"); err != nil {
					t.Skip("no python3")
				}
			}
			lab := labDir(t)
			root := filepath.Join(lab, "project")
			os.Mkdir(root, 0o755)
			makeRepo(t, root)
			s := open(t, root, filepath.Join(lab, "store"))
			wantFiles, wantGit := state(t, root), gitView(t, root)

			id, err := s.Snapshot("run", c.cmd, "")
			if err != nil {
				t.Fatal(err)
			}
			sh(t, root, c.cmd)
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
			if state(t, root) == wantFiles {
				t.Fatalf("%s changed nothing on disk", c.cmd)
			}
			undo, _, err := s.Restore(id)
			if err != nil {
				t.Fatal(err)
			}
			if got := state(t, root); got != wantFiles {
				t.Errorf("files after undo differ:\n%s", diffLines(wantFiles, got))
			}
			if got := gitView(t, root); got != wantGit {
				t.Errorf("git after undo:\n%s\nwant:\n%s", got, wantGit)
			}
			// The undo is undone by restoring its own checkpoint.
			broken := state(t, root)
			if _, _, err := s.Restore(undo); err != nil {
				t.Fatal(err)
			}
			if got := state(t, root); got == broken {
				t.Errorf("undoing the undo changed nothing")
			}
		})
	}
}

func diffLines(want, got string) string {
	w, g := map[string]bool{}, map[string]bool{}
	for _, l := range strings.Split(want, "\n") {
		w[l] = true
	}
	for _, l := range strings.Split(got, "\n") {
		g[l] = true
	}
	var out []string
	for l := range w {
		if !g[l] {
			out = append(out, "- "+l)
		}
	}
	for l := range g {
		if !w[l] {
			out = append(out, "+ "+l)
		}
	}
	sort.Strings(out)
	if len(out) > 40 {
		out = append(out[:40], "…")
	}
	return strings.Join(out, "\n")
}
