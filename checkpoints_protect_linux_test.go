package shellgate_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/envelope"
	"github.com/shellgate/shellgate/internal/checkpoint/checkpointtest"
	"github.com/shellgate/shellgate/internal/gitstate"
	"github.com/shellgate/shellgate/internal/lane"
	"github.com/shellgate/shellgate/internal/sandbox"
)

// The checkpoints of a sandboxed session leave out the protected paths its
// guard moves to the quarantine (issue 20): a job that makes
// .vscode/tasks.json (a task run on folder open) and a *.code-workspace again
// and again, faster than the guard moves them, is caught by the next call's
// checkpoint before it; `shellgate undo` of that call, on the host after the
// session, wrote them into the root, where nothing moves them. The protected
// paths the session started with are kept as before: removed on the host,
// undo brings them back.
func TestCheckpointsLeaveWhatTheGuardMoves(t *testing.T) {
	lane.Live(t)
	requireSandbox(t)
	l := newCPLab(t, sandbox.On, nil)
	checkpointtest.Sh(t, l.root, `set -e
mkdir .idea && printf '<run/>\n' > .idea/run.xml
printf '{}\n' > mine.code-workspace
mkdir -p .git/hooks && printf '#!/bin/sh\n' > .git/hooks/pre-push && chmod +x .git/hooks/pre-push`)
	s := l.g.NewSession(shellgate.SessionConfig{ID: "planter"})
	// The script is the session's: the policy would ask about the names it
	// writes, spelled out on the command line.
	planter(t, l.root, `rm -rf .s; mkdir .s && printf '{"tasks":[{"runOptions":{"runOn":"folderOpen"}}]}\n' > .s/tasks.json && mv -T .s .vscode 2>/dev/null
printf '{"tasks":{}}\n' > evil.code-workspace 2>/dev/null`)
	ids := plantedCheckpoints(t, l, s, func(env envelope.Envelope) {
		for _, p := range env.Data.Changed.Paths {
			_, path, _ := strings.Cut(p, " ") // "added .vscode/tasks.json"; the quarantine's copies are its own
			if strings.HasPrefix(path, ".vscode") || strings.HasPrefix(path, "evil") {
				t.Errorf("the call's changes name %q, which its checkpoints leave out", p)
			}
		}
	})

	cp := openLabCheckpoints(t, l)
	for _, id := range ids {
		for _, ref := range []string{fmt.Sprintf("%d-b", id), fmt.Sprintf("%d-a", id)} {
			files := treeFiles(t, cp.Dir(), ref)
			for _, bad := range []string{"work/.vscode/tasks.json", "work/evil.code-workspace"} {
				if strings.Contains(files, bad+"\n") {
					t.Errorf("checkpoint %s holds %s, which the guard moves aside", ref, bad)
				}
			}
			for _, good := range []string{"work/.idea/run.xml", "work/mine.code-workspace", "work/README.md", "git/hooks/pre-push", "git/config"} {
				if !strings.Contains(files, good+"\n") {
					t.Errorf("checkpoint %s lacks %s, there when the session started", ref, good)
				}
			}
		}
	}
	for _, p := range []string{".vscode", "evil.code-workspace"} {
		if _, err := os.Lstat(filepath.Join(l.root, p)); err == nil {
			// The guard's last look at the session's end missed it (a
			// job's rename as it was killed); undo removes it all the same,
			// its checkpoint not holding it.
			t.Logf("%s is in the root after the session", p)
		}
	}
	// The user undoes the first call, on the host.
	if _, _, err := cp.Undo(ids[0]); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{".vscode/tasks.json", ".vscode", "evil.code-workspace"} {
		if _, err := os.Lstat(filepath.Join(l.root, p)); err == nil {
			t.Errorf("undo wrote %s into the root, past the quarantine", p)
		}
	}
	// What the session started with comes back as any file.
	checkpointtest.Sh(t, l.root, `rm -rf .idea mine.code-workspace .git/hooks`)
	if _, _, err := cp.Undo(ids[1]); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{".idea/run.xml", "mine.code-workspace", ".git/hooks/pre-push"} {
		if _, err := os.Lstat(filepath.Join(l.root, p)); err != nil {
			t.Errorf("undo did not bring back %s, there when the session started: %v", p, err)
		}
	}
}

// After `git init` in a sandboxed session whose root had no .git, the guard
// moves the new .git's config, hooks and info aside (git works without
// them); a job writing a hook and a config again and again is left out of
// the checkpoints too, so undo writes neither. The rest of that .git (HEAD,
// objects, refs) is kept.
func TestCheckpointsLeaveGitInitHooks(t *testing.T) {
	lane.Live(t)
	requireSandbox(t)
	l := newCPLab(t, sandbox.On, nil)
	checkpointtest.Sh(t, l.root, `rm -rf .git`)
	s := l.g.NewSession(shellgate.SessionConfig{ID: "init"})
	if env := s.Run(context.Background(), shellgate.Request{Command: "git init -q"}); env.Error != nil {
		t.Fatalf("git init: %s", env.Text)
	}
	planter(t, l.root, `mkdir -p .git/hooks 2>/dev/null && printf '#!/bin/sh\ntouch PWNED\n' > .git/hooks/pre-commit 2>/dev/null && chmod +x .git/hooks/pre-commit 2>/dev/null
printf '[core]\n\tfsmonitor = touch PWNED\n' > .git/config 2>/dev/null`)
	ids := plantedCheckpoints(t, l, s, nil)

	cp := openLabCheckpoints(t, l)
	for _, id := range ids {
		files := treeFiles(t, cp.Dir(), fmt.Sprintf("%d-b", id))
		for _, bad := range []string{"git/hooks/pre-commit", "git/config"} {
			if strings.Contains(files, bad+"\n") {
				t.Errorf("checkpoint %d-b holds %s, which the guard moves aside", id, bad)
			}
		}
		if !strings.Contains(files, "git/HEAD\n") {
			t.Errorf("checkpoint %d-b lacks .git/HEAD", id)
		}
	}
	checkpointtest.Sh(t, l.root, `rm -rf .git`)
	if _, _, err := cp.Undo(ids[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(l.root, ".git", "HEAD")); err != nil {
		t.Errorf("undo did not bring back the new .git's HEAD: %v", err)
	}
	for _, p := range []string{".git/hooks/pre-commit", ".git/config"} {
		if b, err := os.ReadFile(filepath.Join(l.root, p)); err == nil {
			t.Errorf("undo wrote %s into the root, past the quarantine:\n%s", p, b)
		}
	}
}

// A git todo list a job writes in a sandboxed session (an interactive
// rebase's, with an exec line: `git rebase --continue` on the host would run
// it) is what the guard moves aside by its content; the checkpoints leave
// the todo lists out unless the session started with them, so undo on the
// host writes none. A rebase the user had under way is kept as any file.
func TestCheckpointsLeaveJobsTodoList(t *testing.T) {
	lane.Live(t)
	requireSandbox(t)
	l := newCPLab(t, sandbox.On, nil)
	checkpointtest.Sh(t, l.root, `mkdir -p .git/sequencer && printf 'pick 1234567 mine\n' > .git/sequencer/todo
git worktree add -q ../linked`)
	s := l.g.NewSession(shellgate.SessionConfig{ID: "todo"})
	// The linked worktree's todo list is in the root's .git; git runs it
	// at `git rebase --continue` in that worktree.
	planter(t, l.root, `mkdir -p .git/rebase-merge 2>/dev/null && printf 'exec touch PWNED\npick 1234567 x\n' > .git/rebase-merge/git-rebase-todo 2>/dev/null
mkdir -p .git/worktrees/linked/rebase-merge 2>/dev/null && printf 'exec touch PWNED\npick 1234567 x\n' > .git/worktrees/linked/rebase-merge/git-rebase-todo 2>/dev/null`)
	ids := plantedCheckpoints(t, l, s, nil)

	cp := openLabCheckpoints(t, l)
	for _, id := range ids {
		for _, ref := range []string{fmt.Sprintf("%d-b", id), fmt.Sprintf("%d-a", id)} {
			files := treeFiles(t, cp.Dir(), ref)
			for _, todo := range []string{"git/rebase-merge/git-rebase-todo", "git/worktrees/linked/rebase-merge/git-rebase-todo"} {
				// (read as the job truncated it, it holds nothing)
				if b := blobAt(t, cp, ref, todo); strings.Contains(b, "exec") {
					t.Errorf("checkpoint %s holds the job's %s:\n%s", ref, todo, b)
				}
			}
			if strings.Contains(files, ".shellgate-quarantined-") {
				t.Errorf("checkpoint %s holds what the guard moved aside in place:\n%s", ref, files)
			}
			if !strings.Contains(files, "git/sequencer/todo\n") {
				t.Errorf("checkpoint %s lacks the todo list the session started with", ref)
			}
		}
	}
	checkpointtest.Sh(t, l.root, `rm -rf .git/rebase-merge .git/sequencer .git/worktrees/linked/rebase-merge`)
	if _, _, err := cp.Undo(ids[0]); err != nil {
		t.Fatal(err)
	}
	for _, todo := range []string{".git/rebase-merge/git-rebase-todo", ".git/worktrees/linked/rebase-merge/git-rebase-todo"} {
		// A checkpoint may hold the list as the job had just truncated it,
		// empty; what must not come back is a line that runs.
		if b, err := os.ReadFile(filepath.Join(l.root, todo)); err == nil && strings.Contains(string(b), "exec") {
			t.Errorf("undo wrote the job's %s into the root, past the guard:\n%s", todo, b)
		}
	}
	if _, err := os.Stat(filepath.Join(l.root, ".git/sequencer/todo")); err != nil {
		t.Errorf("undo did not bring back the todo list the session started with: %v", err)
	}
}

// A gitlink a job writes into the index, naming a repository it made
// whose config runs a program (core.fsmonitor), makes the user's `git
// status` in the root run it; the guard drops such a gitlink and new
// skip-worktree and assume-unchanged flags (which hide changes) at each
// look, and a checkpoint taken between two looks keeps the index as the
// guard would leave it, so undo on the host writes none of them back. The
// user's own flag stays.
func TestCheckpointsKeepTheIndexAsTheGuardLeavesIt(t *testing.T) {
	lane.Live(t)
	requireSandbox(t)
	l := newCPLab(t, sandbox.On, nil)
	checkpointtest.Sh(t, l.root, `git update-index --skip-worktree link.md`) // the user's own
	s := l.g.NewSession(shellgate.SessionConfig{ID: "index"})
	planter(t, l.root, `[ -d evil/.git ] || { git init -q evil && git -C evil config core.fsmonitor 'touch PWNED; false'; } 2>/dev/null
git update-index --add --cacheinfo 160000,$(git rev-parse HEAD),evil 2>/dev/null
git update-index --assume-unchanged README.md 2>/dev/null`)
	ids := plantedCheckpoints(t, l, s, nil)

	cp := openLabCheckpoints(t, l)
	for _, id := range ids {
		for _, ref := range []string{fmt.Sprintf("%d-b", id), fmt.Sprintf("%d-a", id)} {
			ix, err := gitstate.Parse([]byte(blobAt(t, cp, ref, "git/index")))
			if err != nil {
				t.Fatalf("%s's index: %v", ref, err)
			}
			users := false
			for _, e := range ix.Entries {
				if e.Gitlink() || e.Path == "README.md" && e.AssumeValid {
					t.Errorf("checkpoint %s keeps the job's %+v", ref, e)
				}
				users = users || e.Path == "link.md" && e.SkipWorktree
			}
			if !users {
				t.Errorf("checkpoint %s lost the user's skip-worktree on link.md", ref)
			}
		}
	}
	// The user undoes the first call on the host, then runs git status.
	if _, _, err := cp.Undo(ids[0]); err != nil {
		t.Fatal(err)
	}
	if out := checkpointtest.Sh(t, l.root, `git ls-files -s evil; git status --short >/dev/null; ls evil/PWNED 2>/dev/null; git ls-files -v README.md`); strings.Contains(out, "evil") || strings.HasPrefix(out, "h ") {
		t.Errorf("undo wrote the job's index back:\n%s", out)
	}
}

// A job that replaces .git/index by a symlink to an index of its own (with
// a gitlink naming a repository whose fsmonitor runs) is undone by the
// guard, which removes symlinks in .git; a checkpoint taken between its
// looks leaves the symlink out, so undo on the host brings back neither it
// nor what git would read through it.
func TestCheckpointsLeaveSymlinksInGit(t *testing.T) {
	lane.Live(t)
	requireSandbox(t)
	l := newCPLab(t, sandbox.On, nil)
	s := l.g.NewSession(shellgate.SessionConfig{ID: "index-link"})
	planter(t, l.root, `[ -d evil/.git ] || { git init -q evil && git -C evil config core.fsmonitor 'touch PWNED; false'; } 2>/dev/null
[ -f .evilindex ] || { cp .git/index .evilindex.new && GIT_INDEX_FILE=.evilindex.new git update-index --add --cacheinfo 160000,$(git rev-parse HEAD),evil && mv .evilindex.new .evilindex; } 2>/dev/null
ln -sfn ../.evilindex .git/index 2>/dev/null`)
	ids := plantedCheckpoints(t, l, s, nil)

	cp := openLabCheckpoints(t, l)
	for _, id := range ids {
		for _, ref := range []string{fmt.Sprintf("%d-b", id), fmt.Sprintf("%d-a", id)} {
			out, err := exec.Command("git", "--git-dir", filepath.Join(cp.Dir(), "git"), "ls-tree", "refs/cp/"+ref+":git").Output()
			if err != nil {
				t.Fatalf("%s: %v", ref, err)
			}
			for _, line := range strings.Split(string(out), "\n") {
				if strings.HasPrefix(line, "120000 ") {
					t.Errorf("checkpoint %s keeps a symlink in .git: %s", ref, line)
				}
			}
		}
	}
	for _, id := range ids {
		if _, _, err := cp.Undo(id); err != nil {
			t.Fatal(err)
		}
		out := checkpointtest.Sh(t, l.root, `git status --short >/dev/null 2>&1; ls evil/PWNED 2>/dev/null; test -L .git/index && echo symlinked; true`)
		if strings.Contains(out, "PWNED") || strings.Contains(out, "symlinked") {
			t.Errorf("after undo %d: %s", id, out)
		}
	}
}

// In a session whose commands all ended with their calls, the index between
// two calls is the user's: a flag they set on the host then is in the next
// command's checkpoint, though the guard learns it only as that command
// starts.
func TestCheckpointsKeepTheUsersIndexBetweenCalls(t *testing.T) {
	lane.Live(t)
	requireSandbox(t)
	l := newCPLab(t, sandbox.On, nil)
	s := l.g.NewSession(shellgate.SessionConfig{ID: "users-index"})
	var ids []int
	for i, between := range []string{`git update-index --assume-unchanged README.md`, ""} {
		env := s.Run(context.Background(), shellgate.Request{Command: fmt.Sprintf("echo %d >> notes.txt", i)})
		if env.Error != nil || env.Data.Changed == nil {
			t.Fatalf("%s", env.Text)
		}
		ids = append(ids, env.Data.Changed.Checkpoint)
		if between != "" {
			checkpointtest.Sh(t, l.root, between)
		}
	}
	s.Close()
	l.g.Close()
	cp := openLabCheckpoints(t, l)
	ix, err := gitstate.Parse([]byte(blobAt(t, cp, fmt.Sprintf("%d-b", ids[1]), "git/index")))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ix.Entries {
		if e.Path == "README.md" && !e.AssumeValid {
			t.Errorf("checkpoint %d-b lost the user's assume-unchanged on README.md", ids[1])
		}
	}
}

// A todo list the session started with (the user's rebase under way) is
// kept, but not once a job wrote an exec line into it: the guard moves that
// aside, and a checkpoint between its looks leaves it out.
func TestCheckpointsLeaveAPoisonedTodoList(t *testing.T) {
	lane.Live(t)
	requireSandbox(t)
	l := newCPLab(t, sandbox.On, nil)
	checkpointtest.Sh(t, l.root, `mkdir -p .git/sequencer && printf 'pick 1234567 mine\n' > .git/sequencer/todo`)
	s := l.g.NewSession(shellgate.SessionConfig{ID: "poison"})
	planter(t, l.root, `mkdir -p .git/sequencer 2>/dev/null; printf 'exec touch PWNED\npick 1234567 mine\n' > .git/sequencer/todo 2>/dev/null`)
	ids := plantedCheckpoints(t, l, s, nil)

	cp := openLabCheckpoints(t, l)
	for _, id := range ids {
		for _, ref := range []string{fmt.Sprintf("%d-b", id), fmt.Sprintf("%d-a", id)} {
			if todo := blobAt(t, cp, ref, "git/sequencer/todo"); strings.Contains(todo, "exec") {
				t.Errorf("checkpoint %s holds the job's exec line:\n%s", ref, todo)
			}
		}
	}
	checkpointtest.Sh(t, l.root, `rm -rf .git/sequencer`)
	if _, _, err := cp.Undo(ids[0]); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(l.root, ".git/sequencer/todo")); err == nil && strings.Contains(string(b), "exec") {
		t.Errorf("undo wrote the job's exec line into the root, past the guard:\n%s", b)
	}
}

// Without the sandbox nothing is left out: a protected path removed (the
// whole .git, .vscode) comes back with undo.
func TestCheckpointsKeepProtectedWithoutSandbox(t *testing.T) {
	lane.Live(t)
	l := newCPLab(t, sandbox.Off, relaxExec)
	checkpointtest.Sh(t, l.root, `mkdir .vscode && printf '{}\n' > .vscode/tasks.json
mkdir -p .git/hooks && printf '#!/bin/sh\n' > .git/hooks/pre-push`)
	env := l.g.Run(context.Background(), shellgate.Request{Command: `python3 -c 'import shutil; shutil.rmtree(".git"); shutil.rmtree(".vscode")'`})
	if env.Error != nil || env.Data.Changed == nil {
		t.Fatalf("%s", env.Text)
	}
	cp, err := l.g.Checkpoints()
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := cp.Undo(env.Data.Changed.Checkpoint); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{".vscode/tasks.json", ".git/config", ".git/hooks/pre-push", ".git/HEAD"} {
		if _, err := os.Lstat(filepath.Join(l.root, p)); err != nil {
			t.Errorf("undo did not bring back %s: %v", p, err)
		}
	}
}

// planter writes .planter.sh in root: body every 3 ms, forever.
func planter(t *testing.T, root, body string) {
	t.Helper()
	script := "while :; do\n" + body + "\nsleep 0.003; done\n"
	if err := os.WriteFile(filepath.Join(root, ".planter.sh"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
}

// plantedCheckpoints runs .planter.sh as a job of session s, then three
// calls 300 ms apart, each checked by check if not nil, and returns their
// checkpoints once s and l's Gate are closed.
func plantedCheckpoints(t *testing.T, l *cpLab, s *shellgate.Session, check func(envelope.Envelope)) []int {
	t.Helper()
	job := s.Run(context.Background(), shellgate.Request{RunInBackground: true, Command: "bash .planter.sh"})
	if job.Error != nil {
		t.Fatalf("the job: %s", job.Text)
	}
	time.Sleep(time.Second)
	var ids []int
	for i := range 3 {
		env := s.Run(context.Background(), shellgate.Request{Command: fmt.Sprintf("echo edit %d >> README.md", i)})
		if env.Error != nil || env.Data.Changed == nil {
			t.Fatalf("the call: %s", env.Text)
		}
		if check != nil {
			check(env)
		}
		ids = append(ids, env.Data.Changed.Checkpoint)
		time.Sleep(300 * time.Millisecond)
	}
	s.Close()
	l.g.Close()
	return ids
}

// openLabCheckpoints opens l's checkpoints as `shellgate undo` does, on the
// host, with the sandbox off.
func openLabCheckpoints(t *testing.T, l *cpLab) *shellgate.Checkpoints {
	t.Helper()
	cp, err := shellgate.OpenCheckpoints(shellgate.Config{Root: l.root, Checkpoints: shellgate.CheckpointConfig{Dir: l.store}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cp.Close)
	return cp
}

// blobAt is the file at path in checkpoint ref of cp's store, "" if none.
func blobAt(t *testing.T, cp *shellgate.Checkpoints, ref, path string) string {
	t.Helper()
	out, err := exec.Command("git", "--git-dir", filepath.Join(cp.Dir(), "git"), "cat-file", "blob", "refs/cp/"+ref+":"+path).Output()
	if err != nil {
		return ""
	}
	return string(out)
}

// treeFiles lists the files of checkpoint ref (refs/cp/ref) of the store in
// dir, one a line.
func treeFiles(t *testing.T, dir, ref string) string {
	t.Helper()
	out, err := exec.Command("git", "--git-dir", filepath.Join(dir, "git"), "ls-tree", "-r", "--name-only", "refs/cp/"+ref).CombinedOutput()
	if err != nil {
		t.Fatalf("ls-tree %s: %v\n%s", ref, err, out)
	}
	return string(out)
}

// A protected path the user makes on the host between two commands, with no
// job in the session, is the user's own: the sandbox makes it read-only
// where it is at the next command's start and says so, and the checkpoints
// keep it from then on (the one before that command, taken before the
// sandbox looked, leaves it out).
func TestCheckpointsKeepTheUsersOwnProtected(t *testing.T) {
	lane.Live(t)
	requireSandbox(t)
	l := newCPLab(t, sandbox.On, nil)
	s := l.g.NewSession(shellgate.SessionConfig{ID: "own"})
	run := func(cmd string) int {
		t.Helper()
		env := s.Run(context.Background(), shellgate.Request{Command: cmd})
		if env.Error != nil || env.Data.Changed == nil {
			t.Fatalf("%s: %s", cmd, env.Text)
		}
		return env.Data.Changed.Checkpoint
	}
	run("echo a > x")
	checkpointtest.Sh(t, l.root, `mkdir .claude && printf '{}\n' > .claude/settings.json`)
	before := run("echo b >> x")
	after := run("echo c >> x")
	s.Close()
	l.g.Close()
	if _, err := os.Stat(filepath.Join(l.root, ".claude", "settings.json")); err != nil {
		t.Fatalf("the user's own .claude was moved: %v", err)
	}
	cp := openLabCheckpoints(t, l)
	if files := treeFiles(t, cp.Dir(), fmt.Sprintf("%d-b", before)); strings.Contains(files, "work/.claude/settings.json\n") {
		t.Errorf("checkpoint %d-b, taken before the sandbox looked, holds .claude/settings.json", before)
	}
	if files := treeFiles(t, cp.Dir(), fmt.Sprintf("%d-b", after)); !strings.Contains(files, "work/.claude/settings.json\n") {
		t.Errorf("checkpoint %d-b lacks the user's own .claude/settings.json, which the sandbox kept in place", after)
	}
}
