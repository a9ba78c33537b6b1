package shellgate_test

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shellgate/shellgate/envelope"
	"github.com/shellgate/shellgate/internal/lane"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/internal/audit"
)

// What runs code later below the root's top level: a nested repository's git
// config and hooks, and a subproject's agent settings, are read-only in the
// sandbox when they are there at the start (however a command writes); what
// appears is told once, in the envelope of the command after which it was
// seen, and in the audit log, never moved.
func TestNestedAtStartAndAppeared(t *testing.T) {
	lane.Live(t)
	requireSandbox(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git here")
	}
	base := visibleTempDir(t)
	root := filepath.Join(base, "root")
	gitEnv := append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+base)
	for _, dir := range []string{root, filepath.Join(root, "vendor/old")} {
		must(t, os.MkdirAll(dir, 0o755))
		cmd := exec.Command("git", "init", "-q", dir)
		cmd.Env = gitEnv
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git init: %v %s", err, out)
		}
	}
	claude := filepath.Join(root, "packages/app/.claude/settings.json")
	must(t, os.MkdirAll(filepath.Dir(claude), 0o755))
	must(t, os.WriteFile(claude, []byte("{}\n"), 0o644))
	oldConfig := filepath.Join(root, "vendor/old/.git/config")
	before, err := os.ReadFile(oldConfig)
	must(t, err)
	log := filepath.Join(base, "audit.jsonl")
	g := gate(t, shellgate.Config{Root: root, SpillDir: filepath.Join(base, "spill"),
		Env: map[string]string{"HOME": base, "GIT_CONFIG_NOSYSTEM": "1"}, Audit: shellgate.AuditConfig{Path: log}})

	// Spellings the policy cannot read: the kernel is the wall.
	for _, c := range []string{
		`python3 -c 'open("vendor/old/.git/config", "a").write("[core]\n\tfsmonitor = touch PWNED\n")'`,
		`python3 -c 'import os; os.makedirs("vendor/old/.git/hooks", exist_ok=True); open("vendor/old/.git/hooks/pre-commit", "w").write("#!/bin/sh\n")'`,
		`python3 -c 'open("packages/app/.claude/settings.json", "w").write("{\"hooks\": 1}")'`,
		`python3 -c 'import os; os.rename("vendor/old/.git/config", "vendor/old/c")'`,
		// git itself, from a script on stdin: config.lock renamed over config.
		`echo 'git -C vendor/old config core.fsmonitor "touch PWNED"' | bash`,
		`python3 -c 'import os; os.link("vendor/old/.git/config", "keep")'; echo x >> keep`,
	} {
		run(t, g, shellgate.Request{Command: c})
	}
	if after, _ := os.ReadFile(oldConfig); string(after) != string(before) {
		t.Errorf("the nested repository's config changed:\n%s", after)
	}
	if _, err := os.Stat(filepath.Join(root, "vendor/old/.git/hooks/pre-commit")); err == nil {
		t.Error("a hook was written into the nested repository")
	}
	if b, _ := os.ReadFile(claude); string(b) != "{}\n" {
		t.Errorf("the subproject's .claude/settings.json is now %q", b)
	}
	// The rest of that repository works.
	if env := run(t, g, shellgate.Request{Command: "cd vendor/old && echo a > a && git add a && git -c user.name=a -c user.email=a@b commit -qm x && git log --format=%s"}); env.Data.Stdout != "x\n" {
		t.Errorf("git in the nested repository:\n%s", env.Text)
	}

	env := run(t, g, shellgate.Request{Command: `git init -q vendor/new && python3 -c 'import os; os.makedirs("packages/b/.vscode")'`})
	notes := env.Text
	if !strings.Contains(notes, "New git repository in the project: vendor/new —") || !strings.Contains(notes, "New in a subdirectory: packages/b/.vscode —") {
		t.Errorf("what appeared was not told:\n%s", env.Text)
	}
	if _, err := os.Stat(filepath.Join(root, "vendor/new/.git/config")); err != nil {
		t.Errorf("the new repository was moved or changed: %v", err)
	}
	if env := run(t, g, shellgate.Request{Command: "true"}); strings.Contains(env.Text, "New ") {
		t.Errorf("told again:\n%s", env.Text)
	}
	// A background job's repository, made after its call: told at the close.
	run(t, g, shellgate.Request{Command: "(sleep 0.3; git init -q late) >/dev/null 2>&1 &"})
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(root, "late/.git/HEAD")); err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatal("the job made no repository")
		}
	}
	must(t, g.Close())

	var appeared []string
	f, err := os.Open(log)
	must(t, err)
	defer f.Close()
	for lines := bufio.NewScanner(f); lines.Scan(); {
		var e audit.Entry
		must(t, json.Unmarshal(lines.Bytes(), &e))
		if e.Event == audit.EventAppeared {
			appeared = append(appeared, e.Appeared...)
		}
	}
	want := []string{"repository vendor/new", "packages/b/.vscode", "repository late"}
	if !slices.Equal(appeared, want) {
		t.Errorf("audit log's appeared lines: %q, want %q", appeared, want)
	}
}

// A repository a command makes below the root's top is judged before the
// host's git sees more than an empty .git, wherever it is (not only at a
// gitlink's path): git on the host enters it at a shell prompt, in an
// editor, or through a gitlink a later commit names. One as git makes it
// stays and works, its config written by git config as git writes it; one
// whose config runs code is moved aside; a kept one's config takes nothing
// that runs code later, and a kept one moved elsewhere is judged again
// there. git worktree add inside the project works.
func TestNestedRepositoriesCommandsMake(t *testing.T) {
	lane.Live(t)
	requireSandbox(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git here")
	}
	base := visibleTempDir(t)
	root := filepath.Join(base, "root")
	out := filepath.Join(base, "out")
	must(t, os.MkdirAll(out, 0o755))
	gitEnv := append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+base, "GIT_AUTHOR_NAME=u", "GIT_AUTHOR_EMAIL=u@u", "GIT_COMMITTER_NAME=u", "GIT_COMMITTER_EMAIL=u@u")
	hostGit := func(dir string, args ...string) (string, error) {
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = gitEnv
		b, err := cmd.CombinedOutput()
		return string(b), err
	}
	must(t, os.MkdirAll(root, 0o755))
	if o, err := hostGit(root, "init", "-q"); err != nil {
		t.Fatal(o)
	}
	if o, err := hostGit(root, "commit", "-q", "--allow-empty", "-m", "r"); err != nil {
		t.Fatal(o)
	}
	g := gate(t, shellgate.Config{Root: root, SpillDir: filepath.Join(base, "spill"),
		Env: map[string]string{"HOME": base, "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "u", "GIT_AUTHOR_EMAIL": "u@u", "GIT_COMMITTER_NAME": "u", "GIT_COMMITTER_EMAIL": "u@u"}})
	// What a core.fsmonitor would run: a script in the project (the policy
	// reads a command line that names a path outside it).
	evil := filepath.Join(root, "x.sh")
	must(t, os.WriteFile(evil, []byte("#!/bin/sh\ntouch "+filepath.Join(out, "PWNED")+"\nexit 1\n"), 0o755))

	works(t, g, []step{
		{"git init -q tools/sub && git -C tools/sub commit -q --allow-empty -m one && git -C tools/sub log --format=%s", "one\n"},
		{"git -C tools/sub remote add origin https://example.com/x.git && git -C tools/sub config user.name N && git -C tools/sub commit -q --allow-empty -m two && git -C tools/sub remote", "origin\n"},
		{"mv tools/sub tools/moved && git -C tools/moved log --format=%s", "two\none\n"},
		{"git clone -q --bare tools/moved mirror.git && git init -q --bare empty.git && git -C mirror.git log --format=%s -1", "two\n"},
		{"git worktree add -q .wt/feature && echo f > .wt/feature/f && git -C .wt/feature add f && git -C .wt/feature commit -qm f && git -C .wt/feature log --format=%s -1", "f\n"},
	})
	if o, err := hostGit(filepath.Join(root, "tools/moved"), "log", "--format=%s"); err != nil || o != "two\none\n" {
		t.Errorf("the host's git log in the kept repository: %q %v", o, err)
	}
	if o, err := hostGit(filepath.Join(root, "tools/moved"), "config", "remote.origin.url"); err != nil || o != "https://example.com/x.git\n" {
		t.Errorf("the host's git config there: %q %v", o, err)
	}
	if o, err := hostGit(filepath.Join(root, ".wt/feature"), "status", "--short"); err != nil || o != "" {
		t.Errorf("the host's git status in the worktree: %q %v", o, err)
	}

	// What would run code: refused by git config in a kept repository, a
	// copied one's (mv's copy) included; a config written by hand in a new
	// one is judged at the command's end, and the repository moved aside.
	env := run(t, g, shellgate.Request{Command: "git -C tools/moved config core.fsmonitor '" + evil + "'"})
	if env.Status == envelope.Success || !strings.Contains(env.Text, "core.fsmonitor") {
		t.Errorf("core.fsmonitor set in a kept repository:\n%s", env.Text)
	}
	env = run(t, g, shellgate.Request{Command: "mv tools/moved tools/again && git -C tools/again log --format=%s -1 && git -C tools/again config core.hooksPath h; " +
		"git init -q evil && rm evil/.git/config && printf '[core]\\n\\tfsmonitor = %s\\n' '" + evil + "' > evil/.git/config"})
	if env.Data.Stdout != "two\n" || !strings.Contains(env.Text, "evil: the repository a command made here sets core.fsmonitor") {
		t.Errorf("a repository moved by a copy, or one whose config runs code:\n%s", env.Text)
	}
	// A project directory made a git directory (HEAD, objects, refs)
	// whose core.worktree is itself: git config's core.fsmonitor there is
	// refused, and a config written by hand moved aside at the end.
	must(t, os.MkdirAll(filepath.Join(root, "docs/guide"), 0o755))
	must(t, os.WriteFile(filepath.Join(root, "docs/guide/README.md"), []byte("# Guide\n"), 0o644))
	env = run(t, g, shellgate.Request{Command: "git init -q --bare docs/guide && git -C docs/guide config core.bare false && git -C docs/guide config core.worktree . && git -C docs/guide config core.fsmonitor '" + evil + "'"})
	if env.Status == envelope.Success || !strings.Contains(env.Text, "docs/guide/config: a command's config set core.fsmonitor") {
		t.Errorf("core.fsmonitor set where a HEAD made a git directory:\n%s", env.Text)
	}
	env = run(t, g, shellgate.Request{Command: "printf '[core]\\n\\tfsmonitor = %s\\n' '" + evil + "' >> docs/guide/config; rm -f docs/guide/config && printf '[core]\\n\\tbare = false\\n\\tworktree = .\\n\\tfsmonitor = %s\\n' '" + evil + "' > docs/guide/config"})
	if !strings.Contains(env.Text, "docs/guide: a command made this directory a git directory (HEAD, objects, refs) whose config sets core.fsmonitor") {
		t.Errorf("a hand-written config there was not moved aside, or not told:\n%s", env.Text)
	}
	if _, err := os.Stat(filepath.Join(root, "docs/guide/README.md")); err != nil {
		t.Errorf("the project's files there went with it: %v", err)
	}
	hostGit(filepath.Join(root, "docs/guide"), "status")

	// A hook written into a kept repository: moved aside at the end.
	env = run(t, g, shellgate.Request{Command: "printf '#!/bin/sh\\n%s\\n' '" + evil + "' > tools/again/.git/hooks/pre-commit && chmod +x tools/again/.git/hooks/pre-commit"})
	if !strings.Contains(env.Text, "tools/again: the hook pre-commit in the repository a command made here") {
		t.Errorf("a hook in a kept repository was not moved aside, or not told:\n%s", env.Text)
	}
	if o, err := hostGit(filepath.Join(root, "tools/again"), "commit", "-q", "--allow-empty", "-m", "user"); err != nil {
		t.Errorf("the user's commit there: %v %s", err, o)
	}
	for _, d := range []string{"tools/moved", "tools/again", "evil"} {
		dir := filepath.Join(root, d)
		if _, err := os.Stat(dir); err != nil {
			continue
		}
		if o, _ := hostGit(dir, "config", "--local", "--list"); strings.Contains(o, "fsmonitor") || strings.Contains(o, "hookspath") {
			t.Errorf("%s: the host's git obeys %q", d, o)
		}
		hostGit(dir, "status")
	}
	if _, err := os.Stat(filepath.Join(out, "PWNED")); err == nil {
		t.Error("the host's git ran a command's core.fsmonitor")
	}
}
