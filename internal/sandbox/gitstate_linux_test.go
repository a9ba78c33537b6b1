package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shellgate/shellgate/internal/lane"
)

// gitLab is a lab whose root is a real repository: main and side change
// README.md apart (a rebase of main onto side stops there), and main has a
// second commit after it.
func gitLab(t *testing.T) *lab {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git here")
	}
	l := newLab(t)
	must(t, os.RemoveAll(filepath.Join(l.root, ".git")))
	hostGit(t, l.root, "init -q -b main")
	hostGit(t, l.root, "add README.md .vscode")
	hostGit(t, l.root, "commit -qm one")
	hostGit(t, l.root, "checkout -qb side")
	must(t, os.WriteFile(filepath.Join(l.root, "README.md"), []byte("side\n"), 0o644))
	hostGit(t, l.root, "commit -qam side")
	hostGit(t, l.root, "checkout -q main")
	must(t, os.WriteFile(filepath.Join(l.root, "README.md"), []byte("main\n"), 0o644))
	hostGit(t, l.root, "commit -qam main")
	must(t, os.WriteFile(filepath.Join(l.root, "two.txt"), []byte("two\n"), 0o644))
	hostGit(t, l.root, "add two.txt")
	hostGit(t, l.root, "commit -qm two")
	return l
}

// hostGit runs git on the host, as the user.
func hostGit(t *testing.T, dir, args string) string {
	t.Helper()
	return hostSh(t, dir, "git -c user.name=u -c user.email=u@x -c protocol.file.allow=always "+args)
}

// hostSh runs a shell command line on the host.
func hostSh(t *testing.T, dir, command string) string {
	t.Helper()
	cmd := exec.Command("sh", "-c", command)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+filepath.Dir(dir)+"/home", "GIT_EDITOR=true")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", command, err, out)
	}
	return string(out)
}

const gitID = "git -c user.name=a -c user.email=a@b "

// The agent's own git works across calls: a rebase that stops on a conflict
// is continued in a later call, an approved `rebase -x` runs its exec lines
// there too, and commit, checkout, stash and a submodule the project has
// are untouched; only what no approved command left is undone, and told.
func TestGitWorkflowsAcrossCalls(t *testing.T) {
	lane.Live(t)
	resolve := "echo both > README.md && git add README.md && GIT_EDITOR=true " + gitID + "rebase --continue"
	for _, c := range []struct {
		name     string
		first    string
		approved bool
		then     string
		check    string // run on the host: its output
		want     string
	}{
		{"rebase continued later", gitID + "rebase side", false, resolve, "git log --format=%s", "two\nmain\nside\none\n"},
		{"approved rebase -x continued later", gitID + "rebase -x 'echo ran >> ran.log' side", true, resolve, "cat ran.log", "ran\nran\n"},
		{"commit, checkout, stash", "git checkout -qb topic && echo x >> two.txt && " + gitID + "commit -qam topic", false,
			"git checkout -q main && echo y >> two.txt && git stash -q && git stash pop -q && git checkout -q topic 2>&1 || git status --short", "git status --short", " M two.txt\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := gitLab(t)
			s := start(t, quarantineSpec(l))
			var env []string
			if c.approved {
				env = append(env, KeepCreated(nil))
			}
			run(t, s, l.root, c.first, env...)
			l2, out := launch(t, s, l.root, c.then)
			if code, _ := l2.Wait(); code == nil || *code != 0 {
				t.Fatalf("%s: %v\n%s", c.then, code, out())
			}
			if notes := l2.(interface{ Notes() []string }).Notes(); len(notes) > 0 {
				t.Errorf("told of undoing the agent's own git: %q", notes)
			}
			if got := hostSh(t, l.root, c.check); got != c.want {
				t.Errorf("%s: %q, want %q", c.check, got, c.want)
			}
		})
	}
}

// A submodule the project has keeps working: its gitlink is the session's
// from the start, so bumping it in the root is the agent's to do.
func TestGitSubmoduleKept(t *testing.T) {
	lane.Live(t)
	l := gitLab(t)
	lib := filepath.Join(l.base, "shared", "lib")
	must(t, os.MkdirAll(lib, 0o755))
	hostGit(t, lib, "init -q -b main")
	hostGit(t, lib, "commit -q --allow-empty -m lib")
	hostGit(t, l.root, "submodule -q add "+lib+" lib")
	hostGit(t, l.root, "commit -qm lib")
	s := start(t, quarantineSpec(l))
	l2, out := launch(t, s, l.root, gitID+"-C lib commit -q --allow-empty -m bump && git add lib && "+gitID+"commit -qm bump && git submodule status")
	if code, _ := l2.Wait(); code == nil || *code != 0 {
		t.Fatalf("%v\n%s", code, out())
	}
	if notes := l2.(interface{ Notes() []string }).Notes(); len(notes) > 0 {
		t.Errorf("told of undoing the agent's own git: %q", notes)
	}
	if got := hostGit(t, l.root, "ls-files -s lib"); !strings.HasPrefix(got, "160000 ") {
		t.Errorf("the gitlink is gone: %q", got)
	}
	if got := hostGit(t, l.root, "status --short"); got != "" {
		t.Errorf("git status: %q", got)
	}
}
