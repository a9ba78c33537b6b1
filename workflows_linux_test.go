package shellgate_test

import (
	"archive/zip"
	"bytes"
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/envelope"
	"github.com/shellgate/shellgate/internal/lane"
)

// workLab is a project under /var/tmp (the sandbox hides the host's /tmp)
// with a base beside it for what is not the project's.
func workLab(t *testing.T) (base, root string) {
	t.Helper()
	base, err := os.MkdirTemp("/var/tmp", "shellgate-work-")
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(base) })
	root = filepath.Join(base, "project")
	must(t, os.MkdirAll(root, 0o755))
	return base, root
}

// host runs a command on the host (not through shellgate) to set the lab up.
func host(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// gitID is who commits in the labs.
var gitID = []string{"GIT_AUTHOR_NAME=U", "GIT_AUTHOR_EMAIL=u@example.com", "GIT_COMMITTER_NAME=U", "GIT_COMMITTER_EMAIL=u@example.com"}

// hostRepo makes a repository at dir on the host, its files committed with
// message msg on branch main.
func hostRepo(t *testing.T, dir, msg string, files map[string]string) {
	t.Helper()
	must(t, os.MkdirAll(dir, 0o755))
	host(t, dir, gitID, "git", "init", "-q", "-b", "main")
	for name, body := range files {
		must(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
	}
	host(t, dir, gitID, "git", "add", ".")
	host(t, dir, gitID, "git", "commit", "-qm", msg)
}

// step is one call an agent makes, and what its output shows when it works.
type step struct{ command, want string }

// works runs the steps in one session of g, in turn, each succeeding.
func works(t *testing.T, g *shellgate.Gate, steps []step) {
	t.Helper()
	for _, s := range steps {
		env := run(t, g, shellgate.Request{Command: s.command, TimeoutMS: ms(180_000)})
		if env.Status != envelope.Success || !strings.Contains(env.Data.Stdout, s.want) {
			t.Fatalf("%s: %s, stdout lacks %q:\n%s", s.command, env.Status, s.want, env.Text)
		}
	}
}

// listing is every path under dir with its size: what a later look compares.
func listing(t *testing.T, dir string) string {
	var b strings.Builder
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil {
			fi, _ := d.Info()
			b.WriteString(p)
			if fi != nil && !d.IsDir() {
				b.WriteString(" " + strings.Repeat("#", int(min(fi.Size(), 64))))
			}
			b.WriteByte('\n')
		}
		return nil
	})
	return b.String()
}

// git's daily work runs in the default sandbox: a branch, a stash, a rebase
// stopped on a conflict and continued in the next call, a submodule worked on
// and its new commit recorded, a test fixture repository with its own config
// — and what it made is the host's, as the user's own git sees it.
func TestGitWorkInTheSandbox(t *testing.T) {
	lane.Live(t)
	requireSandbox(t)
	base, root := workLab(t)
	lib := filepath.Join(base, "lib")
	hostRepo(t, lib, "lib", map[string]string{"lib.txt": "lib\n"})
	hostRepo(t, root, "init", map[string]string{"a.txt": "a\n", ".gitignore": "testdata/fixture/\n"})
	host(t, root, nil, "git", "config", "user.name", "U")
	host(t, root, nil, "git", "config", "user.email", "u@example.com")
	host(t, root, gitID, "git", "-c", "protocol.file.allow=always", "submodule", "add", "-q", lib, "libs/lib")
	host(t, root, gitID, "git", "commit", "-qm", "lib added")
	// As a clone with --recurse-submodules leaves it (core.worktree set in the
	// submodule's config, which the sandbox keeps read-only).
	host(t, root, nil, "git", "submodule", "update")
	fixture := filepath.Join(root, "testdata", "fixture")
	must(t, os.MkdirAll(fixture, 0o755))
	host(t, fixture, nil, "git", "init", "-q", "-b", "main")
	host(t, fixture, nil, "git", "config", "user.name", "Fixture")
	host(t, fixture, nil, "git", "config", "user.email", "f@example.com")
	host(t, fixture, nil, "git", "commit", "-q", "--allow-empty", "-m", "fixture")

	g := gate(t, shellgate.Config{Root: root})
	env := run(t, g, shellgate.Request{Command: "git submodule update --no-fetch"})
	if !strings.Contains(env.Text, "git -C PATH checkout --detach $(git rev-parse HEAD:PATH)") {
		t.Errorf("git submodule update, refused, is not explained:\n%s", env.Text)
	}
	works(t, g, []step{
		{"git checkout -q -b feature && echo b >> a.txt && git commit -qam b && git checkout -q main && " +
			"echo c >> a.txt && git commit -qam c && git rebase feature; git status --short", "UU a.txt"},
		{`printf 'a\nb\nc\n' > a.txt && git add a.txt && GIT_EDITOR=true git rebase --continue && git log --format=%s`, "c\nb\nlib added\ninit\n"},
		{"echo x >> a.txt && git stash -q && git diff --quiet && git stash pop -q && git diff --stat", "a.txt"},
		{"echo y >> a.txt && git stash -q && git stash list && git checkout -q a.txt && git stash pop -q && git commit -qam y && git stash list", "stash@{0}"},
		{"git submodule status && git -C libs/lib checkout -q -b work && echo more >> libs/lib/lib.txt && " +
			"git -C libs/lib commit -qam more && git add libs/lib && git commit -qm 'bump lib' && git submodule status", "libs/lib (heads/work)"},
		{"git submodule foreach -q 'git log --format=%s -1'", "more"},
		// git submodule update rewrites the submodule's config, which stays
		// read-only: the envelope says what to run instead, and that works.
		{"git -C libs/lib checkout -q --detach $(git rev-parse HEAD~:libs/lib) && git -C libs/lib log --format=%s -1", "lib\n"},
		{"git -C libs/lib checkout -q --detach $(git rev-parse HEAD:libs/lib) && git -C libs/lib log --format=%s -1", "more\n"},
		{"git -C testdata/fixture log --format=%an -1 && git -C testdata/fixture commit -q --allow-empty -m more && " +
			"git -C testdata/fixture log --format=%s -1", "Fixture\nmore\n"},
	})
	must(t, g.Close())
	if got := host(t, root, nil, "git", "log", "--format=%s"); got != "bump lib\ny\nc\nb\nlib added\ninit\n" {
		t.Errorf("the host's git log: %q", got)
	}
	if got := host(t, root, nil, "git", "status", "--porcelain"); got != "" {
		t.Errorf("the host's git status: %q", got)
	}
	if got := host(t, fixture, nil, "git", "log", "--format=%s", "-1"); got != "more\n" {
		t.Errorf("the fixture's log on the host: %q", got)
	}
}

// Builds read warm caches in the default sandbox — Go's module cache, npm's
// cache offline, cargo with the user's toolchain, pip from wheels — and the
// host's caches are not written.
func TestBuildsWithWarmCaches(t *testing.T) {
	lane.Live(t)
	requireSandbox(t)
	t.Run("go", func(t *testing.T) {
		_, root := workLab(t)
		must(t, os.WriteFile(filepath.Join(root, "go.mod"), []byte("module example.com/app\n\ngo 1.24\n\nrequire github.com/google/go-cmp v0.7.0\n"), 0o644))
		sum, err := os.ReadFile("go.sum")
		must(t, err)
		var mine bytes.Buffer
		for line := range strings.Lines(string(sum)) {
			if strings.HasPrefix(line, "github.com/google/go-cmp v0.7.0") {
				mine.WriteString(line)
			}
		}
		must(t, os.WriteFile(filepath.Join(root, "go.sum"), mine.Bytes(), 0o644))
		must(t, os.WriteFile(filepath.Join(root, "main.go"), []byte("package main\n\nimport (\n\t\"fmt\"\n\n\t\"github.com/google/go-cmp/cmp\"\n)\n\nfunc main() { fmt.Println(cmp.Equal(1, 1)) }\n"), 0o644))
		g := gate(t, shellgate.Config{Root: root})
		works(t, g, []step{{"GOPROXY=off GOFLAGS=-mod=mod go build -o bin/app . && ./bin/app", "true"}})
	})
	t.Run("npm", func(t *testing.T) {
		base, root := workLab(t)
		cache := filepath.Join(base, "npm-cache")
		warm := exec.Command("npm", "install", "--no-audit", "--no-fund", "--prefix", filepath.Join(base, "warm"), "is-number@7.0.0")
		warm.Env = append(os.Environ(), "npm_config_cache="+cache)
		if out, err := warm.CombinedOutput(); err != nil {
			t.Skipf("npm's registry is out of reach here, so its cache cannot be warmed: %v\n%s", err, out)
		}
		before := listing(t, cache)
		must(t, os.WriteFile(filepath.Join(root, "package.json"), []byte(`{"name":"app","version":"1.0.0","private":true}`), 0o644))
		g := gate(t, shellgate.Config{Root: root, Env: map[string]string{"npm_config_cache": cache}})
		works(t, g, []step{{`npm install --offline --no-audit --no-fund is-number@7.0.0 && node -e 'console.log(require("is-number")(5))'`, "true"}})
		if after := listing(t, cache); after != before {
			t.Errorf("the host's npm cache was written:\n%s", diffLines(before, after))
		}
	})
	t.Run("cargo", func(t *testing.T) {
		if _, err := exec.LookPath("cargo"); err != nil {
			t.Skip("no cargo here")
		}
		_, root := workLab(t)
		must(t, os.WriteFile(filepath.Join(root, "Cargo.toml"), []byte("[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n"), 0o644))
		must(t, os.MkdirAll(filepath.Join(root, "src"), 0o755))
		must(t, os.WriteFile(filepath.Join(root, "src", "main.rs"), []byte("fn main() { println!(\"built by cargo\"); }\n"), 0o644))
		g := gate(t, shellgate.Config{Root: root})
		works(t, g, []step{{"cargo build --offline -q && ./target/debug/app", "built by cargo"}})
	})
	t.Run("pip", func(t *testing.T) {
		_, root := workLab(t)
		must(t, os.MkdirAll(filepath.Join(root, "wheels"), 0o755))
		writeWheel(t, filepath.Join(root, "wheels", "demo_pkg-1.0-py3-none-any.whl"))
		g := gate(t, shellgate.Config{Root: root})
		works(t, g, []step{{"python3 -m venv .venv && .venv/bin/pip install -q --no-index --find-links ./wheels demo-pkg && " +
			".venv/bin/python -c 'import demo_pkg; print(demo_pkg.X)'", "from a wheel"}})
	})
}

// writeWheel writes a pure-Python wheel of package demo_pkg, as a build
// backend would.
func writeWheel(t *testing.T, path string) {
	t.Helper()
	var b bytes.Buffer
	z := zip.NewWriter(&b)
	files := []struct{ name, body string }{
		{"demo_pkg/__init__.py", "X = 'from a wheel'\n"},
		{"demo_pkg-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: demo-pkg\nVersion: 1.0\n"},
		{"demo_pkg-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n"},
		{"demo_pkg-1.0.dist-info/RECORD", "demo_pkg/__init__.py,,\ndemo_pkg-1.0.dist-info/METADATA,,\ndemo_pkg-1.0.dist-info/WHEEL,,\ndemo_pkg-1.0.dist-info/RECORD,,\n"},
	}
	for _, f := range files {
		w, err := z.Create(f.name)
		must(t, err)
		w.Write([]byte(f.body))
	}
	must(t, z.Close())
	must(t, os.WriteFile(path, b.Bytes(), 0o644))
}

// diffLines is what after has that before lacks, and the reverse.
func diffLines(before, after string) string {
	in := func(s string) map[string]bool {
		m := map[string]bool{}
		for l := range strings.Lines(s) {
			m[l] = true
		}
		return m
	}
	b, a := in(before), in(after)
	var out strings.Builder
	for l := range a {
		if !b[l] {
			out.WriteString("+ " + l)
		}
	}
	for l := range b {
		if !a[l] {
			out.WriteString("- " + l)
		}
	}
	return out.String()
}

// An agent working in a linked worktree (`git worktree add`, as agents often
// do) commits, rebases and stashes in the default sandbox: the worktree's
// git directory and the objects, refs and reflogs it shares with the main
// worktree are writable. What would make the user's own git run code or
// write elsewhere is not: its commondir and config.worktree stay read-only
// and symlinks there are removed.
func TestGitWorkInALinkedWorktree(t *testing.T) {
	lane.Live(t)
	requireSandbox(t)
	base, _ := workLab(t)
	main := filepath.Join(base, "main")
	hostRepo(t, main, "init", map[string]string{"a.txt": "a\n"})
	host(t, main, gitID, "git", "worktree", "add", "-q", "../feature", "-b", "feature")
	root := filepath.Join(base, "feature")
	gitDir := filepath.Join(main, ".git", "worktrees", "feature")
	victim := filepath.Join(base, "victim")
	must(t, os.WriteFile(victim, []byte("v\n"), 0o644))
	// As a clone leaves them: refs packed in the main repository's packed-refs.
	host(t, main, gitID, "git", "branch", "old")
	host(t, main, gitID, "git", "pack-refs", "--all")
	packed, err := os.ReadFile(filepath.Join(main, ".git", "packed-refs"))
	must(t, err)

	env := map[string]string{}
	for _, kv := range gitID {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	g := gate(t, shellgate.Config{Root: root, Env: env})
	works(t, g, []step{
		{"echo b >> a.txt && git commit -qam b && git log --format=%s", "b\ninit\n"},
		{"echo c >> a.txt && git stash -q && git stash pop -q && git commit -qam c && git rebase -q HEAD~1 && git log --format=%s -1", "c\n"},
		{"git branch side && git branch --list side", "side"},
	})
	for _, attack := range []string{
		`printf '../../../evil\n' > "$(git rev-parse --git-dir)/commondir"`,
		`python3 -c 'import subprocess, os; d = subprocess.check_output(["git", "rev-parse", "--git-dir"], text=True).strip(); open("c", "w").write("../../../evil\n"); os.replace("c", d + "/commondir")'`,
		`printf '[core]\n\tfsmonitor = touch ` + victim + `.pwned\n' >> "$(git rev-parse --git-dir)/config.worktree"`,
		`python3 -c 'import os, sys; os.symlink(sys.argv[1], sys.argv[2] + "/logs/refs-trap")' ` + victim + ` "$(git rev-parse --git-dir)"`,
		`ln -s ` + victim + ` "$(git rev-parse --git-common-dir)/refs/heads/trap"`,
		`python3 -c 'open(".g" + "it", "w").write("gitdir: evil\n")'`,
		`python3 -c 'import os; open("g", "w").write("gitdir: evil\n"); os.replace("g", ".git")'`,
		// The worktree's own index and todo lists, as the root's .git's.
		`git update-index --skip-worktree a.txt && echo hidden >> a.txt`,
		`python3 -c 'import os, subprocess; d = subprocess.check_output(["git", "rev-parse", "--git-dir"], text=True).strip() + "/rebase-merge"; os.makedirs(d, exist_ok=True); open(d + "/git-rebase-todo", "w").write("exec touch ` + victim + `.todo\n")'`,
		// The main repository's git directory stays read-only but for
		// objects, refs and logs: its packed-refs too (git rewrites it by
		// a lock file and a rename in that directory, which would let a
		// command make anything there), so git pack-refs and a branch
		// deletion fail in a linked worktree rather than write there.
		`printf '[core]\n\tfsmonitor = touch ` + victim + `.main\n' > "$(git rev-parse --git-common-dir)/config.worktree"`,
		`printf '0000000000000000000000000000000000000000 refs/heads/main\n' > p && mv -f p "$(git rev-parse --git-common-dir)/packed-refs"`,
		`git pack-refs --all`,
		`git branch -D old`,
	} {
		env := run(t, g, shellgate.Request{Command: attack})
		// The model is told why, and not to widen the sandbox for it.
		if attack == "git pack-refs --all" && (!strings.Contains(env.Text, "packed-refs read-only in a linked worktree") || strings.Contains(env.Text, "[policy] writable")) {
			t.Errorf("%s: the hint:\n%s", attack, env.Text)
		}
	}
	must(t, g.Close())
	if b, _ := os.ReadFile(filepath.Join(root, ".git")); string(b) != "gitdir: "+gitDir+"\n" {
		t.Errorf("the worktree's .git was changed: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(gitDir, "commondir")); string(b) != "../..\n" {
		t.Errorf("the worktree's commondir was changed: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(gitDir, "config.worktree")); len(b) != 0 {
		t.Errorf("the worktree's config.worktree was written: %q", b)
	}
	for _, p := range []string{filepath.Join(gitDir, "logs", "refs-trap"), filepath.Join(main, ".git", "refs", "heads", "trap")} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("a symlink is left for the user's git: %s", p)
		}
	}
	if got := host(t, root, nil, "git", "ls-files", "-v", "a.txt"); got != "H a.txt\n" {
		t.Errorf("the worktree's index keeps a flag a command set: %q", got)
	}
	if _, err := os.Stat(filepath.Join(gitDir, "rebase-merge", "git-rebase-todo")); err == nil {
		t.Error("a todo list with exec lines is left in the worktree's git directory")
	}
	host(t, root, nil, "git", "-c", "extensions.worktreeConfig=true", "status")
	host(t, main, nil, "git", "-c", "extensions.worktreeConfig=true", "status")
	for _, p := range []string{victim + ".pwned", victim + ".main"} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("the user's git ran a command's fsmonitor: %s", p)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(main, ".git", "packed-refs")); string(b) != string(packed) {
		t.Errorf("the main repository's packed-refs was changed:\n%s", b)
	}
	if got := host(t, main, nil, "git", "log", "--format=%s", "feature"); got != "c\nb\ninit\n" {
		t.Errorf("the feature branch as the main worktree sees it: %q", got)
	}
}
