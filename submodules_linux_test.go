package shellgate_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/internal/lane"
)

// A submodule of the user's (a gitlink of the root's index) that was not
// populated when the session started: git status in the root recurses into
// whatever repository a command puts there and runs its core.fsmonitor on
// the host. A clone as git makes it stays; one whose config (or a nested
// submodule's) sets more is moved aside and the envelope says why.
func TestUnpopulatedSubmoduleFilledByACommand(t *testing.T) {
	lane.Live(t)
	requireSandbox(t)
	base, root := workLab(t)
	lib := filepath.Join(base, "lib")
	hostRepo(t, lib, "lib", map[string]string{"lib.txt": "lib\n"})
	hostRepo(t, root, "init", map[string]string{"a.txt": "a\n"})
	host(t, root, gitID, "git", "-c", "protocol.file.allow=always", "submodule", "add", "-q", lib, "libs/lib")
	host(t, root, gitID, "git", "commit", "-qm", "lib added")
	host(t, root, nil, "git", "submodule", "deinit", "-q", "-f", "libs/lib")
	must(t, os.RemoveAll(filepath.Join(root, ".git", "modules")))
	// A source inside the project, for a clone with no network.
	src := filepath.Join(root, "vendor", "lib-src")
	hostRepo(t, src, "lib", map[string]string{"lib.txt": "lib\n"})
	pwned := filepath.Join(base, "PWNED")

	g := gate(t, shellgate.Config{Root: root})
	works(t, g, []step{{"git clone -q vendor/lib-src libs/lib && git -C libs/lib log --format=%s", "lib\n"}})
	if _, err := os.Stat(filepath.Join(root, "libs", "lib", ".git")); err != nil {
		t.Fatalf("a clone as git makes it was moved: %v", err)
	}
	// The same made hostile by a later command: its config is not the
	// command's to write (the host's git status would obey it at once).
	env := run(t, g, shellgate.Request{Command: "python3 -c 'import subprocess; subprocess.run([\"git\", \"-C\", \"libs/lib\", \"config\", \"core.fsmon\" + \"itor\", \"touch " + pwned + "\"])'"})
	if b, _ := os.ReadFile(filepath.Join(root, "libs", "lib", ".git", "config")); strings.Contains(string(b), "fsmonitor") {
		t.Errorf("a later command set the accepted submodule's core.fsmonitor:\n%s", env.Text)
	}
	// A clone made hostile by the command that made it, while its .git is
	// staged: git config's rename there is judged as it is made, refused,
	// and told.
	env = run(t, g, shellgate.Request{Command: "rm -rf libs/lib && git clone -q vendor/lib-src libs/lib && python3 -c 'import subprocess; subprocess.run([\"git\", \"-C\", \"libs/lib\", \"config\", \"core.fsmon\" + \"itor\", \"touch " + pwned + "\"])'"})
	if !strings.Contains(env.Text, "libs/lib/.git/config: a command's config set core.fsmonitor") {
		t.Errorf("not told:\n%s", env.Text)
	}
	// Nested: a clean submodule holding a hostile one of its own.
	env = run(t, g, shellgate.Request{Command: "rm -rf libs/lib && git clone -q vendor/lib-src libs/lib && cd libs/lib && mkdir -p x && git -C x init -q && " +
		"git -C x -c user.name=a -c user.email=a@b commit -q --allow-empty -m x && git add x 2>/dev/null; " +
		"python3 -c 'import subprocess; subprocess.run([\"git\", \"-C\", \"x\", \"config\", \"core.fsmon\" + \"itor\", \"touch " + pwned + "\"])' && git ls-files -s x"})
	// x's .git, made empty in place, is judged as it fills: git config's
	// core.fsmonitor there is refused, and told.
	if !strings.Contains(env.Text, "libs/lib/x/.git/config: a command's config set core.fsmonitor") {
		t.Errorf("the nested one is not told:\n%s", env.Text)
	}
	must(t, g.Close())
	host(t, root, nil, "git", "status", "--short")
	if _, err := os.Stat(pwned); err == nil {
		t.Error("git status in the root ran a command's core.fsmonitor through the user's submodule")
	}
}

// The user's submodule work still works while a command's steps toward a
// repository git status in the root would enter are judged as they are
// taken: a clone (the policy asks before `git submodule update --init`,
// which fetches) fills an unpopulated submodule (its .git staged while the
// command runs, kept at its end), the agent bumps it
// and commits in the root in one command, and the host's git sees all of
// it, clean.
func TestSubmoduleWorkWithJudgedIndex(t *testing.T) {
	lane.Live(t)
	requireSandbox(t)
	base, root := workLab(t)
	lib := filepath.Join(base, "lib")
	hostRepo(t, lib, "lib", map[string]string{"lib.txt": "lib\n"})
	hostRepo(t, root, "init", map[string]string{"a.txt": "a\n"})
	host(t, root, gitID, "git", "-c", "protocol.file.allow=always", "submodule", "add", "-q", lib, "libs/lib")
	host(t, root, gitID, "git", "commit", "-qm", "lib added")
	host(t, root, nil, "git", "submodule", "deinit", "-q", "-f", "libs/lib")
	must(t, os.RemoveAll(filepath.Join(root, ".git", "modules")))
	hostRepo(t, filepath.Join(root, "vendor", "lib-src"), "lib", map[string]string{"lib.txt": "lib\n"})

	g := gate(t, shellgate.Config{Root: root})
	works(t, g, []step{
		{"git clone -q vendor/lib-src libs/lib && git -C libs/lib log --format=%s", "lib\n"},
		{"git -C libs/lib -c user.name=a -c user.email=a@b commit -q --allow-empty -m more && echo b >> a.txt && " +
			"git add a.txt libs/lib && git -c user.name=a -c user.email=a@b commit -qm bump && git status --short && git log --format=%s -1", "bump\n"},
	})
	must(t, g.Close())
	if got := host(t, root, nil, "git", "status", "--porcelain"); got != "?? vendor/\n" {
		t.Errorf("the host's git status: %q", got)
	}
	if got := host(t, root, nil, "git", "ls-files", "-s", "libs/lib"); !strings.HasPrefix(got, "160000 ") {
		t.Errorf("the gitlink is gone: %q", got)
	}
	if got := host(t, filepath.Join(root, "libs", "lib"), nil, "git", "log", "--format=%s", "-1"); got != "more\n" {
		t.Errorf("the submodule's log on the host: %q", got)
	}
}
