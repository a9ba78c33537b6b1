package shellgate_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/shellgate/shellgate/internal/lane"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/envelope"
	"github.com/shellgate/shellgate/internal/checkpoint/checkpointtest"
	"github.com/shellgate/shellgate/internal/sandbox"
	"github.com/shellgate/shellgate/policy"
)

// cpLab is a repository with work to lose and a Gate with checkpoints on,
// everything under /var/tmp.
type cpLab struct {
	root, store string
	g           *shellgate.Gate
}

func newCPLab(t *testing.T, mode sandbox.Mode, mutate func(*shellgate.Config)) *cpLab {
	t.Helper()
	dir, root := checkpointtest.Project(t)
	l := &cpLab{root: root, store: filepath.Join(dir, "store")}
	os.Mkdir(filepath.Join(dir, "tmp"), 0o755)
	cfg := shellgate.Config{Root: l.root, SpillDir: filepath.Join(dir, "spill"), TempDir: filepath.Join(dir, "tmp"),
		Sandbox:     shellgate.SandboxConfig{Mode: mode},
		Checkpoints: shellgate.CheckpointConfig{Dir: l.store},
		Env: map[string]string{"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
			"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}}
	if mutate != nil {
		mutate(&cfg)
	}
	g, err := shellgate.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	l.g = g
	return l
}

// relaxExec lets python3 -c run without a sandbox, where the policy asks
// about it and no one answers here: tests that throw work away with it.
func relaxExec(c *shellgate.Config) { c.Policy.Relax = append(c.Policy.Relax, policy.RuleExecFlags) }

// labState is the root as a user checks it: every file with its mode and
// content, and what git says (status, stashes, branches, tags, HEAD, fsck).
type labState struct{ files, git string }

func (l *cpLab) state(t *testing.T) labState {
	t.Helper()
	return labState{checkpointtest.State(t, l.root), checkpointtest.GitView(t, l.root)}
}

// undo undoes command id and checks that the root is as want.
func (l *cpLab) undo(t *testing.T, id int, want labState) {
	t.Helper()
	cp, err := l.g.Checkpoints()
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := cp.Undo(id); err != nil {
		t.Fatal(err)
	}
	got := l.state(t)
	if got.files != want.files {
		t.Errorf("after undo:\n%s", checkpointtest.DiffLines(want.files, got.files))
	}
	if got.git != want.git {
		t.Errorf("git after undo:\n%s\nwant:\n%s", got.git, want.git)
	}
}

// TestGateUndo runs each way of losing work through the Gate, with the
// sandbox and without — allowed without a question, since checkpoints are
// on — and undoes it.
func TestGateUndo(t *testing.T) {
	lane.Live(t)
	cases := []struct{ name, cmd, text string }{
		{"rm-rf-contents", `rm -rf ./*`, "deleted"},
		{"reset-hard", `git reset --hard`, "modified"},
		{"switch-f", `git switch -f feature`, "added"},
		{"checkout-index", `git checkout-index -a -f`, "modified"},
		{"read-tree-reset", `git read-tree -u --reset HEAD`, "modified"},
		{"branch-gc", `git branch -D feature && git stash clear && git reflog expire --expire=now --all && git gc -q --prune=now`, "in .git"},
		{"rmtree-objects", `python3 -c 'import shutil; shutil.rmtree(".git/objects")'`, "in .git"},
		{"find-delete", `find src -delete`, "deleted"}, // find . -delete asks: the whole project (lose-work)
		{"overwrite", `echo gone > README.md`, "[Changed: modified README.md; "},
		{"sed-i", `sed -i 's/package/pkg/' src/pkg/f3.go`, "modified src/pkg/f3.go"},
		{"clean-fd", `git clean -fd`, "deleted"},
		{"truncate-commit", `: > src/pkg/f3.go && git commit -qam truncated`, "modified src/pkg/f3.go"},
		{"checkout-dot", `git checkout -- .`, "modified src/pkg/f2.go"},
		{"restore-dir", `git restore --staged --worktree src`, "modified"},
		{"stash-drop", `git stash drop`, "in .git"},
		{"rm-r-tracked", `rm -r src`, "deleted"},
	}
	for _, mode := range []sandbox.Mode{sandbox.Off, sandbox.On} {
		for _, c := range cases {
			t.Run("sandbox-"+string(mode)+"/"+c.name, func(t *testing.T) { gateUndo(t, mode, c.cmd, c.text) })
		}
	}
}

// gateUndo runs cmd through a Gate in sandbox mode, expects text in its
// result, and undoes it.
func gateUndo(t *testing.T, mode sandbox.Mode, cmd, text string) {
	if strings.Contains(cmd, "python3") {
		if _, err := exec.LookPath("python3"); err != nil {
			t.Skip("no python3")
		}
	}
	l := newCPLab(t, mode, relaxExec)
	want := l.state(t)
	env := l.g.Run(context.Background(), shellgate.Request{Command: cmd})
	if env.Error != nil && env.Error.Code == envelope.SandboxUnavailable {
		t.Skip("no sandbox here: " + env.Error.Message)
	}
	if env.Error != nil {
		t.Fatalf("%s: %s", cmd, env.Text)
	}
	ch := env.Data.Changed
	if ch == nil || ch.Checkpoint == 0 {
		t.Fatalf("no data.changed: %s", env.Text)
	}
	if !strings.Contains(env.Text, text) || !strings.Contains(env.Text, "shellgate undo") {
		t.Errorf("text does not say %q and how to undo:\n%s", text, env.Text)
	}
	if strings.Contains(cmd, "git reset") || strings.Contains(cmd, "git clean") || strings.Contains(cmd, "branch -D") ||
		strings.Contains(cmd, "checkout --") || strings.Contains(cmd, "restore") || strings.Contains(cmd, "stash drop") {
		if !strings.Contains(env.Text, "rule lose-work") {
			t.Errorf("the lose-work allow does not name the checkpoint:\n%s", env.Text)
		}
	}
	l.undo(t, ch.Checkpoint, want)
}

// Removing ignored files (git clean -x, -X) still asks: checkpoints leave the
// ignored bulk out (node_modules, build output), so undo would not bring it
// back.
func TestGateCleanIgnoredAsks(t *testing.T) {
	lane.Live(t)
	l := newCPLab(t, sandbox.Off, nil)
	for _, cmd := range []string{"git clean -fdx", "git clean -ffdX", "git clean -f -d -x"} {
		env := l.g.Run(context.Background(), shellgate.Request{Command: cmd})
		if env.Error == nil || env.Context.Policy == nil || env.Context.Policy.Rule != "lose-work" {
			t.Errorf("%s ran without asking:\n%s", cmd, env.Text)
		}
	}
}

// TestGateReadOnlyNoCheckpoint: a command that only reads takes none.
func TestGateReadOnlyNoCheckpoint(t *testing.T) {
	lane.Live(t)
	l := newCPLab(t, sandbox.Off, nil)
	for _, cmd := range []string{"git status", "ls -la | grep src", "cat README.md && git log --oneline"} {
		env := l.g.Run(context.Background(), shellgate.Request{Command: cmd})
		if env.Error != nil || env.Data.Changed != nil {
			t.Errorf("%s: changed %+v, %s", cmd, env.Data.Changed, env.Text)
		}
	}
	if _, err := os.Stat(l.store); err == nil {
		t.Errorf("read-only commands made a store")
	}
	env := l.g.Run(context.Background(), shellgate.Request{Command: "touch new.txt"})
	if env.Data.Changed == nil || env.Data.Changed.Added != 1 {
		t.Errorf("touch: %+v", env.Data.Changed)
	}
}

// TestGateCheckpointFails: a checkpoint that cannot be taken stops the
// command before it starts.
func TestGateCheckpointFails(t *testing.T) {
	lane.Live(t)
	l := newCPLab(t, sandbox.Off, nil)
	if err := os.WriteFile(l.store, []byte("not a directory"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := l.g.Run(context.Background(), shellgate.Request{Command: "touch ran.txt"})
	if env.Error == nil || env.Error.Code != envelope.CheckpointFailed {
		t.Fatalf("want CHECKPOINT_FAILED: %s", env.Text)
	}
	if _, err := os.Stat(filepath.Join(l.root, "ran.txt")); err == nil {
		t.Errorf("the command ran")
	}
}

// TestGateRootHoldsStore: a root that holds the checkpoint store (the home
// directory with the default store, /) is refused once, up front
// (Gate.RootProblem), and each command, read-only ones too, with that one
// sentence, where every write failed with its own 520-character
// CHECKPOINT_FAILED; with checkpoints off it is a root as any.
func TestGateRootHoldsStore(t *testing.T) {
	lane.Live(t)
	for _, tc := range []struct {
		name string
		cfg  func(root string) shellgate.CheckpointConfig
		want string
	}{
		{"the home directory", func(root string) shellgate.CheckpointConfig {
			t.Setenv("HOME", root)
			t.Setenv("XDG_STATE_HOME", "")
			t.Setenv(shellgate.CheckpointsEnv, "")
			return shellgate.CheckpointConfig{}
		}, "the project root is your home directory ("},
		{"a store inside", func(root string) shellgate.CheckpointConfig {
			return shellgate.CheckpointConfig{Dir: filepath.Join(root, "state")}
		}, "shellgate's checkpoints ("},
		{"checkpoints off", func(root string) shellgate.CheckpointConfig {
			return shellgate.CheckpointConfig{Dir: filepath.Join(root, "state"), Off: true}
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, root := checkpointtest.Project(t)
			g, err := shellgate.New(shellgate.Config{Root: root, Sandbox: shellgate.SandboxConfig{Mode: sandbox.Off}, Checkpoints: tc.cfg(root)})
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			problem := g.RootProblem()
			for _, cmd := range []string{"touch ran.txt", "ls"} {
				env := g.Run(context.Background(), shellgate.Request{Command: cmd})
				if tc.want == "" {
					if problem != nil || env.Error != nil {
						t.Errorf("%s: %v, %s", cmd, problem, env.Text)
					}
					continue
				}
				if problem == nil || !strings.HasPrefix(problem.Error(), tc.want) || !strings.HasSuffix(problem.Error(), "or turn checkpoints off (--checkpoints off)") || len(problem.Error()) > 300 {
					t.Errorf("RootProblem: %v", problem)
				}
				if env.Error == nil || env.Error.Code != envelope.CheckpointFailed || env.Error.Message != "Not run: "+problem.Error()+"." {
					t.Errorf("%s: %s", cmd, env.Text)
				}
			}
			if _, err := os.Stat(filepath.Join(root, "ran.txt")); (err == nil) != (tc.want == "") {
				t.Errorf("ran.txt: %v", err)
			}
		})
	}
}

// TestGateCheckpointsOff: no checkpoint, and lose-work asks again.
func TestGateCheckpointsOff(t *testing.T) {
	lane.Live(t)
	l := newCPLab(t, sandbox.Off, func(c *shellgate.Config) { c.Checkpoints.Off = true })
	env := l.g.Run(context.Background(), shellgate.Request{Command: "touch x"})
	if env.Data.Changed != nil {
		t.Errorf("changed with checkpoints off: %+v", env.Data.Changed)
	}
	env = l.g.Run(context.Background(), shellgate.Request{Command: "git reset --hard"})
	if env.Error == nil || env.Error.Rule != "lose-work" {
		t.Errorf("git reset --hard without checkpoints: %s", env.Text)
	}
}

// TestGateRmRoot: rm -rf of the root itself is what undo could restore but
// the policy still asks about (without the sandbox its path is only known at
// run time); approved, it is undone.
func TestGateRmRoot(t *testing.T) {
	lane.Live(t)
	l := newCPLab(t, sandbox.Off, nil)
	want := l.state(t)
	for _, cmd := range []string{`rm -rf "$(pwd)"`, `rm -rf .`, `rm -rf ` + l.root} {
		env := l.g.Run(context.Background(), shellgate.Request{Command: cmd})
		if env.Error == nil || env.Error.Code != envelope.ApprovalRequired {
			t.Errorf("%s: want it refused for approval: %s", cmd, env.Text)
		}
	}
	if got := l.state(t); got != want {
		t.Fatalf("a refused command changed the root")
	}
	yes := shellgate.WithApprover(func(context.Context, shellgate.Question) shellgate.Answer { return shellgate.AllowOnce })
	env := l.g.Run(context.Background(), shellgate.Request{Command: `rm -rf "$(pwd)"`}, yes)
	// The checkpoint after it makes the root again, empty.
	if entries, err := os.ReadDir(l.root); err != nil || len(entries) != 0 {
		t.Fatalf("rm -rf $(pwd) left %d entries: %s", len(entries), env.Text)
	}
	if env.Data.Changed == nil {
		t.Fatalf("no data.changed: %s", env.Text)
	}
	l.undo(t, env.Data.Changed.Checkpoint, want)
}

// TestGateRmRootSandboxed: in the sandbox, rm -rf "$(pwd)" is allowed (the
// sandbox contains code known at run time) and undone.
func TestGateRmRootSandboxed(t *testing.T) {
	lane.Live(t)
	l := newCPLab(t, sandbox.On, nil)
	want := l.state(t)
	env := l.g.Run(context.Background(), shellgate.Request{Command: `rm -rf "$(pwd)"`})
	if env.Error != nil && env.Error.Code == envelope.SandboxUnavailable {
		t.Skip("no sandbox here: " + env.Error.Message)
	}
	if env.Data.Changed == nil || env.Data.Changed.Deleted == 0 {
		t.Fatalf("rm -rf $(pwd) in the sandbox: %s", env.Text)
	}
	l.undo(t, env.Data.Changed.Checkpoint, want)
}

// TestSessionTerminalUndo: git reset --hard typed into a shell on a terminal
// job is checkpointed like a command, and undone.
func TestSessionTerminalUndo(t *testing.T) {
	lane.Live(t)
	l := newCPLab(t, sandbox.Off, nil)
	want := l.state(t)
	s := l.g.NewSession(shellgate.SessionConfig{ID: "t"})
	defer s.Close()
	ctx := context.Background()
	env := s.Run(ctx, shellgate.Request{Command: "bash --norc --noprofile", TTY: true}, shellgate.WithApprover(func(context.Context, shellgate.Question) shellgate.Answer { return shellgate.AllowOnce }))
	if env.Data.Job == nil {
		t.Fatalf("no terminal job: %s", env.Text)
	}
	if env.Data.Changed == nil || !env.Data.Changed.Pending {
		t.Errorf("a terminal job's checkpoint: %+v", env.Data.Changed)
	}
	wait := int64(3000)
	in := s.Input(ctx, env.Data.Job.ID, shellgate.JobInput{Text: "git reset -q --hard && echo RESET-DONE\n", WaitMS: &wait})
	out := s.Output(ctx, env.Data.Job.ID, shellgate.JobRead{Until: "^RESET-DONE", WaitMS: 10000})
	if !strings.Contains(out.Text, "RESET-DONE") {
		t.Fatalf("the typed command did not end: %s", out.Text)
	}
	if in.Data.Changed == nil {
		t.Fatalf("input took no checkpoint: %s", in.Text)
	}
	if l.state(t) == want {
		t.Fatalf("the typed git reset --hard changed nothing: %s", in.Text)
	}
	l.undo(t, in.Data.Changed.Checkpoint, want)
}

// TestGateLoseWorkNested: a checkpoint keeps a repository nested in the
// root as the root (its working files and .git), so lose-work is relaxed
// for git there, however the line gets there, and undo brings its work
// back; it still asks where the line does not say for certain that git
// works in a place a checkpoint keeps (find -execdir, a variable), where
// it names one outside the root or ignored, or a worktree whose repository
// is outside the root, and for git clean -x.
func TestGateLoseWorkNested(t *testing.T) {
	lane.Live(t)
	l := newCPLab(t, sandbox.Off, nil)
	outside := filepath.Join(filepath.Dir(l.root), "outside")
	checkpointtest.Sh(t, l.root, `set -e
mkdir vendor && cd vendor && git init -q && echo x > x && git add x && git commit -qm x && echo y > x && echo u > untracked
cd .. && git init -q `+outside+` && git -C `+outside+` commit -q --allow-empty -m o && git -C `+outside+` worktree add -q `+l.root+`/wt
mkdir -p node_modules/dep && cd node_modules/dep && git init -q && echo d > d && git add d && git commit -qm d && echo e > d
cd ../.. && printf 'import os, sys\nos.symlink(sys.argv[1], "link")\n' > mklink.py`)
	decide := func(req shellgate.Request) *envelope.Envelope {
		t.Helper()
		// Check and CheckApproved (an MCP client's question) decide as Run.
		check, approved := l.g.Check(req), l.g.CheckApproved(req, func(string) bool { return false })
		env := l.g.Run(context.Background(), req)
		if env.Error != nil && (check.Code != env.Error.Code || check.Rule != env.Error.Rule || approved.Rule != env.Error.Rule) ||
			env.Error == nil && (check.Decision != policy.Allow || approved.Decision != policy.Allow) {
			t.Errorf("%s in %q: Check %s %s %q, CheckApproved %s %q, Run %s", req.Command, req.Directory, check.Decision, check.Code, check.Rule, approved.Decision, approved.Rule, env.Text)
		}
		return &env
	}
	for _, req := range []shellgate.Request{
		{Command: "git reset --hard", Directory: "vendor"},
		{Command: "cd vendor && git reset --hard"},
		{Command: "git -C vendor reset --hard"},
		{Command: "(cd vendor; git reset --hard)"},
		{Command: `bash -c "cd vendor; git reset --hard"`},
		{Command: "pushd vendor; git reset --hard"},
		{Command: "git -C vendor clean -fd"},
		{Command: `d=vendor; git -C "$d" checkout -- .`}, // the line says what $d is
	} {
		want := l.state(t)
		env := decide(req)
		if env.Error != nil {
			t.Errorf("%s in %q: %s", req.Command, req.Directory, env.Text)
			continue
		}
		if env.Data.Changed == nil || l.state(t) == want {
			t.Errorf("%s in %q changed nothing: %s", req.Command, req.Directory, env.Text)
			continue
		}
		l.undo(t, env.Data.Changed.Checkpoint, want)
	}
	for _, c := range []struct {
		req  shellgate.Request
		rule string // "": asked or refused by another rule first
	}{
		// Where git starts, or which repository it works in, spelled so
		// that the line does not say it for certain, or outside the root,
		// or in what a checkpoint leaves out.
		{shellgate.Request{Command: `find . -name x -path "./vendor/*" -execdir git reset --hard \;`}, "lose-work"},
		{shellgate.Request{Command: `cd "$D"; git reset --hard`}, ""},           // rule dynamic
		{shellgate.Request{Command: `git -C "$D" reset --hard`}, ""},            // rule dynamic or lose-work
		{shellgate.Request{Command: "git -C " + outside + " reset --hard"}, ""}, // confinement
		{shellgate.Request{Command: "git --git-dir=" + outside + "/.git --work-tree=vendor reset --hard"}, ""},
		{shellgate.Request{Command: "git -C wt reset --hard"}, "lose-work"}, // a worktree of a repository outside
		{shellgate.Request{Command: "cd wt && git reset --hard"}, "lose-work"},
		{shellgate.Request{Command: "git reset --hard", Directory: "wt"}, "lose-work"},
		{shellgate.Request{Command: "git -C node_modules/dep reset --hard"}, "lose-work"}, // ignored: not kept
		{shellgate.Request{Command: "git -C vendor clean -fdx"}, "lose-work"},
		// A place the line makes may be a symlink out of the root, which
		// without a sandbox git would follow.
		{shellgate.Request{Command: `python3 mklink.py ` + outside + `; git -C link reset --hard`}, "lose-work"},
		{shellgate.Request{Command: `python3 mklink.py ` + outside + `; cd link && git reset --hard`}, "lose-work"},
		// Without a sandbox, setting GIT_DIR asks already (rule
		// code-execution).
		{shellgate.Request{Command: "GIT_DIR=" + outside + "/.git git reset --hard"}, ""},
		{shellgate.Request{Command: "GIT_DIR=vendor/.git GIT_WORK_TREE=vendor git reset --hard"}, ""},
		{shellgate.Request{Command: "export GIT_DIR=vendor/.git GIT_WORK_TREE=vendor; git reset --hard"}, ""},
	} {
		env := decide(c.req)
		if env.Error == nil || c.rule != "" && env.Error.Rule != c.rule {
			t.Errorf("%s in %q: %s", c.req.Command, c.req.Directory, env.Text)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(l.root, "vendor", "x")); string(b) != "y\n" {
		t.Errorf("the nested repository's change was lost: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(l.root, "node_modules", "dep", "d")); string(b) != "e\n" {
		t.Errorf("the ignored nested repository's change was thrown away: %q", b)
	}
	for _, cmd := range []string{"git reset --hard", "(cd src; git reset --hard)"} {
		env := l.g.Run(context.Background(), shellgate.Request{Command: cmd})
		if env.Error != nil {
			t.Errorf("%s in the root's own repository: %s", cmd, env.Text)
		}
	}
}

// TestGateLoseWorkWorktree: in a worktree (a .git file), whose index, refs
// and objects are outside the root, lose-work asks as without checkpoints.
func TestGateLoseWorkWorktree(t *testing.T) {
	lane.Live(t)
	l := newCPLab(t, sandbox.Off, nil)
	wt := filepath.Join(filepath.Dir(l.root), "wt")
	checkpointtest.Sh(t, l.root, "git worktree add -q ../wt feature")
	g, err := shellgate.New(shellgate.Config{Root: wt, SpillDir: filepath.Join(filepath.Dir(l.root), "spill"), TempDir: filepath.Join(filepath.Dir(l.root), "tmp"),
		Sandbox: shellgate.SandboxConfig{Mode: sandbox.Off}, Checkpoints: shellgate.CheckpointConfig{Dir: l.store}})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	env := g.Run(context.Background(), shellgate.Request{Command: "git reset --hard"})
	if env.Error == nil || env.Error.Rule != "lose-work" {
		t.Errorf("git reset --hard in a worktree: %s", env.Text)
	}
}

// TestSessionBackgroundJobChanges: a background job's checkpoint is taken
// before it starts; what it changed is known once it ends.
func TestSessionBackgroundJobChanges(t *testing.T) {
	lane.Live(t)
	l := newCPLab(t, sandbox.Off, nil)
	s := l.g.NewSession(shellgate.SessionConfig{ID: "bg"})
	defer s.Close()
	ctx := context.Background()
	env := s.Run(ctx, shellgate.Request{Command: "sleep 0.2; rm README.md; echo gone", RunInBackground: true})
	if env.Data.Job == nil || env.Data.Changed == nil || !env.Data.Changed.Pending {
		t.Fatalf("background job: %+v\n%s", env.Data.Changed, env.Text)
	}
	out := s.Output(ctx, env.Data.Job.ID, shellgate.JobRead{Until: "^gone", WaitMS: 10000})
	if !strings.Contains(out.Text, "gone") {
		t.Fatalf("the job did not end: %s", out.Text)
	}
	cp, err := l.g.Checkpoints()
	if err != nil {
		t.Fatal(err)
	}
	sum, err := cp.Changes(env.Data.Changed.Checkpoint)
	if err != nil || sum.Deleted != 1 || sum.Changes[0].Path != "README.md" {
		t.Errorf("the job's changes: %+v %v", sum, err)
	}
}

// TestGateStoreOutOfReach: a sandboxed command cannot write the checkpoint
// store (it could otherwise rewrite what undo restores), and a store placed
// inside the root, where every command may write, is refused before any
// command runs.
func TestGateStoreOutOfReach(t *testing.T) {
	lane.Live(t)
	l := newCPLab(t, sandbox.On, nil)
	env := l.g.Run(context.Background(), shellgate.Request{Command: "touch made.txt"})
	if env.Error != nil && env.Error.Code == envelope.SandboxUnavailable {
		t.Skip("no sandbox here: " + env.Error.Message)
	}
	if env.Data.Changed == nil {
		t.Fatalf("no checkpoint: %s", env.Text)
	}
	cp, err := l.g.Checkpoints()
	if err != nil {
		t.Fatal(err)
	}
	before := checkpointtest.State(t, cp.Dir())
	// The path is known only at run time, so the policy lets the sandbox
	// judge: the commands run, and change nothing in the store.
	for _, cmd := range []string{
		`echo x > "$d/forged"`,
		`rm -rf "$d/git/refs" "$d/git/objects"`,
		`echo {} >> "$d/log.jsonl"`,
	} {
		cmd = "d=$(echo " + cp.Dir() + "); " + cmd
		if env := l.g.Run(context.Background(), shellgate.Request{Command: cmd}); env.Error != nil {
			t.Errorf("%s: want it run in the sandbox:\n%s", cmd, env.Text)
		}
	}
	// What the store held is all there; what changed is only what the
	// commands' own checkpoints wrote (new records, the scan cache).
	after := checkpointtest.State(t, cp.Dir())
	for _, line := range strings.Split(before, "\n") {
		name := strings.Fields(line)[0]
		if !strings.Contains(after, line+"\n") && !strings.HasSuffix(after, line) && !slices.Contains([]string{"last", "log.jsonl", "scan-cache", "modes.json"}, name) {
			t.Errorf("the store lost or changed %s", line)
		}
	}
	if log, _ := os.ReadFile(filepath.Join(cp.Dir(), "log.jsonl")); strings.Contains(after, "forged") || strings.Contains(string(log), "\n{}\n") {
		t.Errorf("a sandboxed command wrote the store:\n%s\n%s", after, log)
	}

	for _, dir := range []string{filepath.Join(l.root, ".checkpoints"), l.root} {
		g, err := shellgate.New(shellgate.Config{Root: l.root, SpillDir: filepath.Join(filepath.Dir(l.root), "spill"), TempDir: filepath.Join(filepath.Dir(l.root), "tmp"),
			Sandbox: shellgate.SandboxConfig{Mode: sandbox.Off}, Checkpoints: shellgate.CheckpointConfig{Dir: dir}})
		if err != nil {
			if !strings.Contains(err.Error(), "inside the project root") {
				t.Errorf("store %s: %v", dir, err)
			}
			continue
		}
		env := g.Run(context.Background(), shellgate.Request{Command: "touch inside.txt"})
		g.Close()
		if env.Error == nil || env.Error.Code != envelope.CheckpointFailed || !strings.Contains(env.Text, "inside the project root") {
			t.Errorf("store %s: want CHECKPOINT_FAILED naming the root:\n%s", dir, env.Text)
		}
		if _, err := os.Stat(filepath.Join(l.root, "inside.txt")); err == nil {
			t.Errorf("store %s: the command ran", dir)
		}
	}
}

// TestGateLoseWorkNotKept: a file over max_file_size (a sparse terabyte a
// command made) is not read into the checkpoint; data.changed says it was
// added and not kept; rule lose-work does not count on undo where git could
// take it (git clean -fd would delete it for good), and asks; and undo
// leaves it, saying so.
func TestGateLoseWorkNotKept(t *testing.T) {
	lane.Live(t)
	l := newCPLab(t, sandbox.Off, nil)
	ctx := context.Background()
	readme, _ := os.ReadFile(filepath.Join(l.root, "README.md"))
	env := l.g.Run(ctx, shellgate.Request{Command: "truncate -s 1T big.img && echo x >> README.md"})
	if env.Error != nil || env.Data.Changed == nil {
		t.Fatalf("truncate: %s", env.Text)
	}
	c := env.Data.Changed
	if c.Added != 1 || c.Modified != 1 || !slices.Contains(c.Paths, "added big.img (not kept, 1.0 TiB)") {
		t.Errorf("data.changed %+v", c)
	}
	for _, cmd := range []string{"git clean -fd", "git reset --hard", "git -C src checkout -- ."} {
		env := l.g.Run(ctx, shellgate.Request{Command: cmd})
		if env.Error == nil || env.Error.Rule != policy.RuleLoseWork {
			t.Errorf("%s beside a file checkpoints do not keep: %s", cmd, env.Text)
		}
	}
	cp, err := l.g.Checkpoints()
	if err != nil {
		t.Fatal(err)
	}
	_, sum, err := cp.Undo(c.Checkpoint)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(l.root, "big.img")); err != nil || fi.Size() != 1<<40 {
		t.Errorf("undo did not leave big.img: %v %v", fi, err)
	}
	if len(sum.NotRestored) != 1 || sum.NotRestored[0].Path != "big.img" || sum.Modified != 1 {
		t.Errorf("undo: %+v", sum)
	}
	if b, _ := os.ReadFile(filepath.Join(l.root, "README.md")); string(b) != string(readme) {
		t.Errorf("README.md not restored: %q", b)
	}
	// Gone, git clean -fd is trusted to undo again.
	os.Remove(filepath.Join(l.root, "big.img"))
	if env := l.g.Run(ctx, shellgate.Request{Command: "git clean -fd"}); env.Error != nil {
		t.Errorf("git clean -fd with no big file: %s", env.Text)
	}
}

// What the model reads after a command that ignores a directory: its files
// are now ignored, not deleted, in data.changed and in the text.
func TestChangedSaysNowIgnored(t *testing.T) {
	lane.Live(t)
	l := newCPLab(t, sandbox.Off, nil)
	checkpointtest.Sh(t, l.root, `mkdir -p notes && echo a > notes/a.txt && echo b > notes/b.txt && git add -A && git commit -qm notes`)
	env := l.g.Run(context.Background(), shellgate.Request{Command: "echo notes/ >> .gitignore"})
	ch := env.Data.Changed
	if env.Error != nil || ch == nil {
		t.Fatalf("no data.changed: %s", env.Text)
	}
	if ch.Ignored != 2 || ch.Deleted != 0 {
		t.Errorf("data.changed: ignored %d, deleted %d; want 2, 0", ch.Ignored, ch.Deleted)
	}
	if !strings.Contains(env.Text, "2 now ignored (not deleted)") || strings.Contains(env.Text, "deleted 2") {
		t.Errorf("the text does not say the files are now ignored:\n%s", env.Text)
	}
}
