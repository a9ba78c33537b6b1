// Package checkpointtest has the labs the checkpoint tests share: a real
// repository holding every kind of work a command can lose, and what of it
// an undo must bring back.
package checkpointtest

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
)

// LabDir makes a directory under /var/tmp (not /tmp: the tests leave
// nothing there), removed when the test ends.
func LabDir(t testing.TB) string {
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

func Sh(t testing.TB, dir, script string) string {
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

// Project makes a lab (LabDir) holding MakeRepo's repository in
// lab/project; it skips the test where there is no git.
func Project(t testing.TB) (lab, root string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	lab = LabDir(t)
	root = filepath.Join(lab, "project")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	MakeRepo(t, root)
	return lab, root
}

// MakeRepo fills root with a repository holding every kind of work a
// command can lose: commits on two branches, a tag, a stash, a staged and an
// unstaged change, an untracked file, an executable, a symlink, an ignored
// .env (0600) and ignored bulk.
func MakeRepo(t testing.TB, root string) {
	t.Helper()
	Sh(t, root, `set -e
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

// State is what a restore must bring back: every file's mode and content
// (node_modules aside: ignored bulk is not kept), and git's view. A file
// over 64 MiB is told by its size and time.
func State(t testing.TB, root string) string {
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
		} else if fi.Size() > 64<<20 {
			// a big (sparse) file: by its size and time, never read
			sum = fmt.Sprintf("size=%d mtime=%d", fi.Size(), fi.ModTime().UnixNano())
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

func GitView(t testing.TB, root string) string {
	return Sh(t, root, `git status --porcelain=v1 --branch; git stash list; git branch -a; git tag; git rev-parse HEAD; git fsck --strict --no-dangling 2>&1`)
}

// DiffLines lists the lines of want missing from got (-) and the extra ones (+).
func DiffLines(want, got string) string {
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
