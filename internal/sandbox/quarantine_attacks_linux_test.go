package sandbox

// Attacks on the session helper's quarantine and protection of
// paths created while commands run. Tests named TestAttack… that fail show a
// way through; those marked "blocked" are regression tests for attacks that
// fail today.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shellgate/shellgate/internal/lane"
	"golang.org/x/sys/unix"
)

// waitFor polls until cond holds or 5s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func exists(p string) bool { _, err := os.Lstat(p); return err == nil }

// FINDING: .git/commondir (not protected) points git at another directory for
// its config and hooks, so .git/config and .git/hooks being read-only protect
// nothing: after the session, plain `git status` on the host runs the
// command's core.fsmonitor.
func TestAttackGitCommondir(t *testing.T) {
	lane.Live(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git here")
	}
	l := newLab(t)
	must(t, os.RemoveAll(filepath.Join(l.root, ".git")))
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", l.root, "-c", "user.email=a@b", "-c", "user.name=a"}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+l.home)
		cmd.Run()
	}
	git("init", "-q")
	git("commit", "-q", "--allow-empty", "-m", "x")
	s := start(t, quarantineSpec(l))
	pwned := filepath.Join(l.root, "PWNED")
	run(t, s, l.root, `mkdir evil && cp -r .git/objects .git/refs evil/ &&
printf '[core]\n\trepositoryformatversion = 0\n\tfsmonitor = "touch `+pwned+`; false"\n' > evil/config &&
echo ../evil > .git/commondir`)
	s.Close()
	git("status")
	if exists(pwned) {
		t.Error("git on the host ran the command's fsmonitor through .git/commondir")
	}
}

// FINDING: a .git that is a file ("gitdir: …") in a project that had no .git
// does the same: nothing protected is ever created.
func TestAttackGitFile(t *testing.T) {
	lane.Live(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git here")
	}
	l := newLab(t)
	must(t, os.RemoveAll(filepath.Join(l.root, ".git")))
	s := start(t, quarantineSpec(l))
	pwned := filepath.Join(l.root, "PWNED")
	run(t, s, l.root, `git init -q --bare evil && git -C evil config core.fsmonitor "touch `+pwned+`; false" &&
git -C evil config core.bare false && echo 'gitdir: evil' > .git`)
	s.Close()
	cmd := exec.Command("git", "-C", l.root, "status")
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+l.home)
	cmd.Run()
	if exists(pwned) {
		t.Error("git on the host ran the command's fsmonitor through a .git file")
	}
}

// FINDING: when the quarantine cannot be made (.shellgate-quarantine is a file,
// or the predictable item name is taken), the new protected path falls back to
// being protected in place: the command's .vscode stays in the project.
func TestAttackQuarantineUnusable(t *testing.T) {
	lane.Live(t)
	for _, c := range []struct{ name, prep string }{
		{"file", "touch .shellgate-quarantine"},
		{"item taken", `mkdir .shellgate-quarantine && for s in 0 1 2 3 4 5; do mkdir -p .shellgate-quarantine/$(date -d "+$s sec" +%Y%m%d-%H%M%S)-1-1; done`},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := newLab(t)
			must(t, os.RemoveAll(filepath.Join(l.root, ".vscode")))
			s := start(t, quarantineSpec(l))
			run(t, s, l.root, c.prep+` && mkdir .vscode && echo '{"evil": 1}' > .vscode/tasks.json`)
			s.Close()
			if b, err := os.ReadFile(filepath.Join(l.root, ".vscode/tasks.json")); err == nil {
				t.Errorf("the command's .vscode/tasks.json stayed in the root: %q", b)
			}
			l.outsideIntact(t, c.name)
		})
	}
}

// FINDING: a job that creates a protected path after its command ended and then
// exits is taken for the user's own: kept in place at the next command, and
// left in the project if the session just closes.
func TestAttackJobThenExit(t *testing.T) {
	lane.Live(t)
	for _, next := range []string{"next command", "close"} {
		t.Run(next, func(t *testing.T) {
			l := newLab(t)
			must(t, os.RemoveAll(filepath.Join(l.root, ".vscode")))
			spec := quarantineSpec(l)
			s := start(t, spec)
			run(t, s, l.root, `(sleep 0.3; mkdir .vscode; echo '{"evil": 1}' > .vscode/tasks.json; touch job-done) >/dev/null 2>&1 &`)
			// The guard may have moved .vscode already, even before the job
			// wrote into it: it acts while jobs run. The job says when it is done.
			waitFor(t, "the job's end", func() bool { return exists(filepath.Join(l.root, "job-done")) })
			time.Sleep(100 * time.Millisecond) // the job's shell exits after its last command
			if next == "next command" {
				run(t, s, l.root, "true")
			}
			s.Close()
			if exists(filepath.Join(l.root, ".vscode/tasks.json")) {
				t.Error("the job's .vscode stayed in the root")
			}
		})
	}
}

// FINDING: a job of an earlier command that creates a protected path while an
// approved (KeepCreated) command runs has it kept in place as the approved
// command's.
func TestAttackKeepCreatedLaundering(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	must(t, os.RemoveAll(filepath.Join(l.root, ".claude")))
	s := start(t, quarantineSpec(l))
	run(t, s, l.root, `(while [ ! -e go ]; do sleep 0.02; done; mkdir .claude; echo '{"evil": 1}' > .claude/settings.json; sleep 30) >/dev/null 2>&1 &`)
	run(t, s, l.root, "touch go; sleep 0.5", KeepCreated([]string{filepath.Join(l.root, ".claude")}))
	if exists(filepath.Join(l.root, ".claude/settings.json")) {
		t.Error("the job's .claude was kept in place under the approval of another command")
	}
}

// FINDING (.git/config): a protected path that is a FIFO makes the helper block
// forever in open(2) in plainGitConfig, holding the mounter's lock: the
// command's exit is never reported, nor is any later command started.
// Blocked (.git/hooks): os.ReadDir opens with O_DIRECTORY.
func TestAttackFIFOHangsHelper(t *testing.T) {
	lane.Live(t)
	for _, name := range []string{".git/config", ".git/hooks"} {
		t.Run(name, func(t *testing.T) {
			l := newLab(t)
			must(t, os.RemoveAll(filepath.Join(l.root, name)))
			s := start(t, quarantineSpec(l))
			cmd, out := launch(t, s, l.root, "mkfifo "+name)
			done := make(chan struct{})
			go func() { cmd.Wait(); out(); close(done) }()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Error("the command's exit was never reported")
				s.Close()
				<-done
			}
		})
	}
}

// FINDING: quarantining a path from a pinned directory (.git) copies it with
// path names through .shellgate-quarantine, which the command can still change
// while the copy runs: a job that swaps the copy's destination for a symlink
// makes the helper write the command's files outside the writable paths.
func TestAttackCopyTreeRace(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	must(t, os.Remove(filepath.Join(l.root, ".git/config"))) // .git stays pinned by its hooks
	s := start(t, quarantineSpec(l))
	script := `
import os, sys, time, glob
os.makedirs(".git/config")
for i in range(4000):
    with open(".git/config/f%05d" % i, "w") as f: f.write("x" * 4096)
if os.fork() == 0:
    os.setsid()
    for fd in (0, 1, 2): os.close(fd)
    deadline = time.time() + 20
    while time.time() < deadline:
        for d in glob.glob(".shellgate-quarantine/*/.git/config"):
            if not os.path.islink(d):
                os.rename(d, d + ".x")
                os.symlink(sys.argv[1], d)
                os._exit(0)
    os._exit(0)
`
	run(t, s, l.root, "python3 -c '"+script+"' "+l.outside)
	time.Sleep(2 * time.Second)
	s.Close()
	if entries, _ := os.ReadDir(l.outside); len(entries) > 1 {
		t.Errorf("the helper wrote %d files outside the root", len(entries)-1)
	}
	l.outsideIntact(t, "copyTree race")
}

// FINDING: a sparse file quarantined out of a pinned .git is copied in full:
// the command spends nothing, the helper fills the disk.
func TestAttackSparseCopy(t *testing.T) {
	l := newLab(t)
	must(t, os.Remove(filepath.Join(l.root, ".git/config")))
	s := start(t, quarantineSpec(l))
	run(t, s, l.root, "truncate -s 64M .git/config")
	// .git is pinned: the config is moved aside within it, not copied.
	got, _ := filepath.Glob(filepath.Join(l.root, ".git", ".shellgate-quarantined-config-*"))
	if len(got) != 1 {
		t.Fatalf("quarantined %v", got)
	}
	var st unix.Stat_t
	must(t, unix.Stat(got[0], &st))
	if st.Blocks*512 > 1<<20 {
		t.Errorf("the copy of a 64M sparse file takes %d bytes", st.Blocks*512)
	}
}

// Blocked (regression): a .shellgate-quarantine that is a symlink to a
// directory of the root (or the root itself) does not make the helper move the
// command's .vscode there or make that directory read-only.
func TestAttackQuarantineSymlinkInRootBlocked(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	must(t, os.RemoveAll(filepath.Join(l.root, ".vscode")))
	must(t, os.MkdirAll(filepath.Join(l.root, "src"), 0o755))
	s := start(t, quarantineSpec(l))
	run(t, s, l.root, "ln -s src .shellgate-quarantine && mkdir .vscode")
	if got, code := run(t, s, l.root, "echo ok > src/x && echo ok > y && cat src/x y"); code != 0 || got != "ok\nok\n" {
		t.Errorf("the project is no longer writable: %d %q", code, got)
	}
	if entries, _ := os.ReadDir(filepath.Join(l.root, "src")); len(entries) != 1 {
		t.Errorf("src holds %v", entries)
	}
}

// FINDING (fixed: what appears in .git is moved whole to the quarantine,
// never judged and kept): when git's .git/hooks was judged by its content and
// then bound where it was, a job that kept adding and removing a hook while
// git init's command ended got it frozen read-only in place.
func TestAttackHooksCheckRace(t *testing.T) {
	lane.Live(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git here")
	}
	script := `
import os, time
os.makedirs(".git/hooks", exist_ok=True)
open(".git/evil", "w").write("#!/bin/sh\necho pwned\n")
if os.fork() == 0:
    os.setsid()
    for fd in (0, 1, 2): os.close(fd)
    deadline = time.time() + 3
    while time.time() < deadline:
        try:
            os.link(".git/evil", ".git/hooks/pre-commit")
            os.unlink(".git/hooks/pre-commit")
        except OSError:
            pass
    os._exit(0)
time.sleep(0.2)
`
	for attempt := 0; attempt < 10; attempt++ {
		l := newLab(t)
		must(t, os.RemoveAll(filepath.Join(l.root, ".git")))
		s := start(t, quarantineSpec(l))
		run(t, s, l.root, "git init -q && python3 -c '"+script+"'")
		time.Sleep(50 * time.Millisecond)
		hooks := filepath.Join(l.root, ".git/hooks")
		frozen := exists(filepath.Join(hooks, "pre-commit"))
		time.Sleep(3 * time.Second) // the job is done
		s.Close()
		if frozen && exists(filepath.Join(hooks, "pre-commit")) {
			t.Fatalf("attempt %d: the job's pre-commit hook is in .git/hooks, protected in place", attempt)
		}
		os.RemoveAll(l.base)
	}
}

// A job holding git's new .git/hooks or .git/config open writes, after the
// command ended, into what was moved to the quarantine (or not at all: what
// it holds was staged, and the mount that showed it is detached), never
// into what git on the host reads.
func TestAttackWriteThroughHeldOpen(t *testing.T) {
	lane.Live(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git here")
	}
	for name, c := range map[string]struct{ open, write, path string }{
		"hooks directory": {`os.open(".git/hooks", os.O_RDONLY | os.O_DIRECTORY)`,
			`h = os.open("pre-commit", os.O_CREAT | os.O_WRONLY, 0o755, dir_fd=fd); os.write(h, b"#!/bin/sh\necho pwned\n")`, ".git/hooks/pre-commit"},
		"config file": {`os.open(".git/config", os.O_WRONLY | os.O_APPEND)`,
			`os.write(fd, b"[core]\n\tfsmonitor = touch pwned\n")`, ".git/config"},
	} {
		t.Run(name, func(t *testing.T) {
			for _, closeFirst := range []bool{false, true} {
				l := newLab(t)
				must(t, os.RemoveAll(filepath.Join(l.root, ".git")))
				s := start(t, quarantineSpec(l))
				script := `
import os, time
fd = ` + c.open + `
if os.fork() == 0:
    os.setsid()
    for std in (0, 1, 2): os.close(std)
    time.sleep(0.3)
    try:
        ` + c.write + `
    except OSError:
        pass
    open("written", "w").close()
    time.sleep(60)
`
				run(t, s, l.root, "git init -q && python3 -c '"+script+"'")
				written := filepath.Join(l.root, "written")
				waitFor(t, "the job's write", func() bool { return exists(written) })
				if !closeFirst {
					run(t, s, l.root, "true")
				}
				b, _ := os.ReadFile(filepath.Join(l.root, c.path))
				if !closeFirst && strings.Contains(string(b), "pwned") {
					t.Errorf("%s holds the job's code after the next command started", c.path)
				}
				s.Close()
				if b, _ := os.ReadFile(filepath.Join(l.root, c.path)); strings.Contains(string(b), "pwned") {
					t.Errorf("%s holds the job's code after the session (close first: %v)", c.path, closeFirst)
				}
				os.RemoveAll(l.base)
			}
		})
	}
}

// FINDING: a quarantine whose copy fails (a path deeper than PATH_MAX under a
// .git/hooks created in a pinned .git) falls back to protecting the hooks in
// place, pre-commit hook and all.
func TestAttackDeepTreeCopyFails(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	must(t, os.RemoveAll(filepath.Join(l.root, ".git/hooks"))) // .git stays pinned by its config
	s := start(t, quarantineSpec(l))
	run(t, s, l.root, `mkdir .git/hooks && printf '#!/bin/sh\necho pwned\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit &&
python3 -c 'import os
os.chdir(".git/hooks")
for i in range(200):
    os.mkdir("d" * 40); os.chdir("d" * 40)'`)
	s.Close()
	if exists(filepath.Join(l.root, ".git/hooks/pre-commit")) {
		t.Error("the command's pre-commit hook stayed in .git/hooks")
	}
}

// FINDING (minor, fixed: unlinkOthers): a file quarantined with another hard
// link in the root could still be changed through that link: the read-only
// item did not freeze what the user will review.
func TestAttackQuarantineHardLink(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	must(t, os.RemoveAll(filepath.Join(l.root, ".vscode")))
	s := start(t, quarantineSpec(l))
	run(t, s, l.root, `mkdir .vscode && echo '{}' > .vscode/tasks.json && ln .vscode/tasks.json keep`)
	run(t, s, l.root, `echo '{"evil": 1}' > keep`)
	got, _ := filepath.Glob(filepath.Join(l.root, ".shellgate-quarantine", "[0-9]*", ".vscode", "tasks.json"))
	if len(got) != 1 {
		t.Fatalf("quarantined %v", got)
	}
	if b, _ := os.ReadFile(got[0]); string(b) != "{}\n" {
		t.Errorf("the quarantined file changed after it was quarantined: %q", b)
	}
}

// Not reproduced (kept as a regression test): bind resolves a protected symlink
// by name and then opens the result by name, so a job swapping a directory on
// the way for a symlink could make the helper bind a directory outside the
// writable paths read-only in the session (~/.cache/go-build would break its
// builds). The window between EvalSymlinks and open is too short to hit here.
func TestAttackBindResolveRace(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	must(t, os.RemoveAll(filepath.Join(l.root, ".vscode")))
	s := start(t, quarantineSpec(l))
	script := `
import os, ctypes, time
libc = ctypes.CDLL(None, use_errno=True)
os.makedirs("d/outside")
os.symlink("` + l.base + `", "e")
if os.fork() == 0:
    os.setsid()
    for fd in (0, 1, 2): os.close(fd)
    deadline = time.time() + 20
    while time.time() < deadline:
        libc.syscall(316, -100, b"d", -100, b"e", 2)  # renameat2 RENAME_EXCHANGE
    os._exit(0)
`
	run(t, s, l.root, "touch .shellgate-quarantine && python3 -c '"+script+"'")
	for i := 0; i < 200; i++ {
		if i%2 == 0 {
			run(t, s, l.root, "ln -sfn d/outside .vscode")
		} else {
			run(t, s, l.root, "true")
		}
		if got, _ := run(t, s, l.root, "grep -c ' "+l.outside+" ' /proc/self/mountinfo"); strings.TrimSpace(got) != "0" {
			t.Fatalf("after %d commands, the helper bound %s (outside the root) in the session", i+1, l.outside)
		}
	}
}

// FINDING (session 29): a protected file the host replaces while the session
// runs — `git config` on the host renames config.lock over .git/config, and
// so does `shellgate undo` putting back an older config — takes its read-only
// bind with it (the kernel detaches the mounts of a name renamed over in
// another namespace), and the next command wrote .git/config: the user's
// `git status` ran its core.fsmonitor. Now each look binds such a file again.
func TestAttackProtectedReplacedOnHost(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	s := start(t, l.spec())
	cfg := filepath.Join(l.root, ".git/config")
	if out, code := run(t, s, l.root, "echo x >> .git/config"); code == 0 {
		t.Fatalf(".git/config writable from the start: %s", out)
	}
	// The user, on the host, between commands, as git writes its config.
	must(t, os.WriteFile(cfg+".lock", []byte("[core]\n[user]\n\tname = u\n"), 0o644))
	must(t, os.Rename(cfg+".lock", cfg))
	for i, c := range []string{
		"printf '[core]\\n\\tfsmonitor = touch pwned\\n' >> .git/config",
		"python3 -c 'open(\".git/config\", \"a\").write(\"[core]\\n\\tfsmonitor = touch pwned\\n\")'",
	} {
		run(t, s, l.root, c)
		if b, _ := os.ReadFile(cfg); strings.Contains(string(b), "pwned") {
			t.Fatalf("command %d wrote .git/config after the host replaced it:\n%s", i, b)
		}
	}
	if b, _ := os.ReadFile(cfg); !strings.Contains(string(b), "name = u") {
		t.Errorf("the user's own config was not kept: %q", b)
	}
}

// FINDING (session 29): the same for a nested repository's config, kept
// read-only because it was there when the session started: `git -C sub
// config` on the host took its bind, and every later command could write it.
func TestAttackKeptReplacedOnHost(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	cfg := filepath.Join(l.root, "sub/.git/config")
	must(t, os.MkdirAll(filepath.Dir(cfg), 0o755))
	must(t, os.WriteFile(cfg, []byte("[core]\n"), 0o644))
	s := start(t, l.spec())
	s.KeepReadOnly([]string{cfg})
	write := "printf '[core]\\n\\tfsmonitor = touch pwned\\n' >> sub/.git/config"
	if out, code := run(t, s, l.root, write); code == 0 {
		t.Fatalf("sub/.git/config writable from the start: %s", out)
	}
	must(t, os.WriteFile(cfg+".lock", []byte("[core]\n[user]\n\tname = u\n"), 0o644))
	must(t, os.Rename(cfg+".lock", cfg))
	run(t, s, l.root, "true")
	run(t, s, l.root, write)
	if b, _ := os.ReadFile(cfg); strings.Contains(string(b), "pwned") {
		t.Fatalf("a command wrote sub/.git/config after the host replaced it:\n%s", b)
	}
}

// FINDING: protected names were compared byte for byte, so where the root's
// directory folds case (ext4 or f2fs casefold, vfat, exfat, a Windows drive
// under WSL) a command's .VSCODE/tasks.json — the .vscode/tasks.json an
// editor opens there — was neither staged nor moved aside. Names are folded
// wherever protected paths are matched: on this case-sensitive file system
// too, where the test can see it, a name in another case is staged (the host
// sees an empty entry while the command runs) and moved aside when it ends.
func TestAttackProtectedNameInAnotherCase(t *testing.T) {
	lane.Live(t)
	for _, c := range []struct{ name, make, made string }{
		{"directory", `mkdir .VSCODE && echo '{"evil": 1}' > .VSCODE/tasks.json`, ".VSCODE/tasks.json"},
		{"mixed", `mkdir -p .VsCode && cp /dev/stdin .VsCode/tasks.json <<< '{"evil": 1}'`, ".VsCode/tasks.json"},
		{"file", `echo 'touch PWNED' > .EnvRC`, ".EnvRC"},
		{"pattern", `echo '{"evil": 1}' > Proj.CODE-WORKSPACE`, "Proj.CODE-WORKSPACE"},
		{"long s", `mkdir .vſcode && echo '{"evil": 1}' > .vſcode/tasks.json`, ".vſcode/tasks.json"},
		{"renamed in", `mkdir d && echo '{"evil": 1}' > d/tasks.json && mv d .Claude`, ".Claude/tasks.json"},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := newLab(t)
			spec := quarantineSpec(l)
			spec.Patterns = []string{"*.code-workspace"}
			s := start(t, spec)
			made, goOn := filepath.Join(l.root, c.made), filepath.Join(l.root, "go-on")
			launched, out := launch(t, s, l.root, c.make+` && touch made && until [ -e go-on ]; do sleep 0.02; done`)
			waitFor(t, "the command's entry", func() bool { return exists(filepath.Join(l.root, "made")) })
			if b, err := os.ReadFile(made); err == nil && len(b) > 0 {
				t.Errorf("the host reads the command's %s while it runs: %q", c.made, b)
			}
			must(t, os.WriteFile(goOn, nil, 0o644))
			if code, sig := launched.Wait(); code == nil || *code != 0 {
				t.Fatalf("%s: %v %v\n%s", c.make, code, sig, out())
			}
			s.Close()
			if b, err := os.ReadFile(made); err == nil {
				t.Errorf("the command's %s stayed in the root: %q", c.made, b)
			}
			got, _ := filepath.Glob(filepath.Join(l.root, ".shellgate-quarantine", "[0-9]*", c.made))
			if len(got) != 1 {
				t.Errorf("the command's %s is not in the quarantine: %v", c.made, got)
			}
		})
	}
}

// FINDING: a repository below the root's top is judged by names compared
// byte for byte (.git, config, hooks …): where the directory folds case,
// sub/.GIT is sub/.git to the host's git and sub/.git/CONFIG its config, and
// neither was judged. No command makes .git or git's own files in another
// case; git's own spellings work as before.
func TestAttackGitNamesInAnotherCase(t *testing.T) {
	lane.Live(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git here")
	}
	l := newLab(t)
	s := start(t, quarantineSpec(l))
	git := "git -c user.email=a@b -c user.name=a "
	run(t, s, l.root, git+"init -q sub && "+git+"-C sub commit -q --allow-empty -m x && mkdir d && touch d/f")
	for _, c := range []string{
		"mkdir sub2 && mkdir sub2/.GIT",
		"mkdir -p sub3 && cp -r sub/.git sub3/.Git",
		"mv d sub/.GIT",
		"printf '[core]\\n\\tfsmonitor = touch PWNED\\n' > sub/.git/CONFIG",
		"mkdir sub/.git/Hooks",
		"printf '#!/bin/sh\\ntouch PWNED\\n' > sub/.git/hooks/Post-Index-Change",
		"echo ../../d > sub/.git/COMMONDIR",
	} {
		if out, code := run(t, s, l.root, c+" 2>&1"); code == 0 || !strings.Contains(out, "not permitted") {
			t.Errorf("%s: made (exit %d): %s", c, code, out)
		}
	}
	if out, code := run(t, s, l.root, git+"-C sub branch Config && "+git+"-C sub checkout -q Config && "+git+"-C sub commit -q --allow-empty -m y && "+git+"init -q Objects && ls sub/.git/refs/heads"); code != 0 || !strings.Contains(out, "Config") {
		t.Errorf("git's own names failed (exit %d): %s", code, out)
	}
	s.Close()
	for _, p := range []string{"sub2/.GIT", "sub3/.Git", "sub/.GIT", "sub/.git/CONFIG", "sub/.git/Hooks", "sub/.git/hooks/Post-Index-Change", "sub/.git/COMMONDIR"} {
		if exists(filepath.Join(l.root, p)) {
			t.Errorf("%s is in the root", p)
		}
	}
}

// FINDING: a directory with no .git is made a git directory by a HEAD
// beside objects/ and refs/, judged by those names as spelled: where the
// directory folds case, docs/g/head is its HEAD and docs/g/CONFIG its
// config. A head in another case is judged as a HEAD (the directory is
// kept as a git directory a command made), and git's own files in another
// case are not made in a kept one. (Here, on a case-sensitive file system,
// the look at a command's end finds no HEAD there and lets the directory
// go: each attempt makes its head in the same command.)
func TestAttackBareGitDirInAnotherCase(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	s := start(t, quarantineSpec(l))
	for i, c := range []string{
		"printf '[core]\\n\\tfsmonitor = touch PWNED\\n' > CONFIG",
		"mkdir Hooks",
		"echo ../.. > Commondir",
		"mkdir hooks && printf '#!/bin/sh\\ntouch PWNED\\n' > hooks/Post-Index-Change",
	} {
		dir := fmt.Sprintf("docs/g%d", i)
		made := "mkdir -p " + dir + "/objects " + dir + "/refs && echo 'ref: refs/heads/main' > " + dir + "/head && cd " + dir + " && "
		if out, code := run(t, s, l.root, made+c+" 2>&1"); code == 0 || !strings.Contains(out, "not permitted") {
			t.Errorf("%s: made (exit %d): %s", c, code, out)
		}
	}
	if out, code := run(t, s, l.root, "mkdir -p docs/h/objects docs/h/refs && echo 'ref: refs/heads/main' > docs/h/head && echo '[core]' > docs/h/Config.txt && mkdir -p src/Hooks src/Config 2>&1"); code != 0 {
		t.Errorf("ordinary names refused (exit %d): %s", code, out)
	}
	s.Close()
	for _, p := range []string{"docs/g0/CONFIG", "docs/g1/Hooks", "docs/g2/Commondir", "docs/g3/hooks/Post-Index-Change"} {
		if exists(filepath.Join(l.root, p)) {
			t.Errorf("%s is in the root", p)
		}
	}
}
