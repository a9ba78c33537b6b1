package helper

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/shellgate/shellgate/internal/copyup"
	"github.com/shellgate/shellgate/internal/gitstate"
	"golang.org/x/sys/unix"
)

// TestJudgeGitRedirects: in a root whose .git directory was there at the
// start, a command cannot make the names that send the host's git to
// another repository's config, however it makes them; git's own names
// there, and a linked worktree's commondir, are made as asked.
func TestJudgeGitRedirects(t *testing.T) {
	root := "/var/tmp/lab/root"
	m := &mounter{spec: &Spec{Writable: []string{root}, Quarantine: root + "/.shellgate-quarantine"},
		gitAtStart: true, gitDirAtStart: true, configAtStart: true}
	tests := []struct {
		path string
		op   copyup.Op
		want copyup.Verdict
	}{
		{".git/commondir", copyup.OpMake, copyup.Refused},
		{".git/commondir", copyup.OpRename, copyup.Refused}, // a file renamed over it
		{".git/commondir", copyup.OpLink, copyup.Refused},   // a symlink or a hard link
		{".git/commondir", copyup.OpWrite, copyup.Refused},
		{".git", copyup.OpRename, copyup.Crossed}, // a filled directory renamed onto .git
		{".git/modules/sub/commondir", copyup.OpMake, copyup.Refused},
		{".git/modules/a/b/commondir", copyup.OpRename, copyup.Refused},
		{".git/config", copyup.OpRename, copyup.Refused},
		{".git/config.worktree", copyup.OpMake, copyup.Refused}, // read where the config sets extensions.worktreeConfig
		{".git/config.worktree", copyup.OpRename, copyup.Refused},
		{".git/modules/sub/config.worktree", copyup.OpRename, copyup.Refused},
		// git's own
		{".git/worktrees/wt/commondir", copyup.OpMake, copyup.Free},
		{".git/modules/sub/worktrees/wt/commondir", copyup.OpMake, copyup.Free},
		{".git/worktrees/wt/config.worktree", copyup.OpMake, copyup.Free},
		{".git/index.lock", copyup.OpMake, copyup.Free},
		{".git/refs/heads/main", copyup.OpRename, copyup.Free},
		{".git/objects/pack", copyup.OpMakeDir, copyup.Free},
		{"commondir", copyup.OpMake, copyup.Free},
		{"src/commondir", copyup.OpMake, copyup.Free},
	}
	if !m.Watched("commondir") {
		t.Fatal("commondir is not watched: its calls never reach Judge")
	}
	for _, tt := range tests {
		if got := m.Judge(root+"/"+tt.path, tt.op); got != tt.want {
			t.Errorf("Judge(%s, %v) = %v, want %v", tt.path, tt.op, got, tt.want)
		}
	}
	// A root whose .git is a worktree's file: its commondir is elsewhere.
	m = &mounter{spec: m.spec, gitAtStart: true}
	if got := m.Judge(root+"/.git", copyup.OpRename); got != copyup.Free {
		t.Errorf("with a .git file: Judge(.git, rename) = %v, want Free", got)
	}
}

// TestJudgeRepositorySteps: each step toward a repository the host's git
// status in the root would enter is judged as a command takes it, however
// it is spelled: an index is only replaced by a rename, which stageIndex
// judges (never written in place, made or linked); a .git at a gitlink's
// path is staged (stageRepo), never linked; a directory is not renamed
// onto a gitlink's path; a submodule's git directory is not made again,
// nor its config written. An approved command's index is its own.
func TestJudgeRepositorySteps(t *testing.T) {
	root := filepath.Join(t.TempDir(), "root")
	for _, d := range []string{".git/modules/lib", "lib"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, ".git/sharedindex.0123"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// A project directory a command made a git directory's config,
	// objects and refs in first, to make it one with a HEAD later; one
	// that had a HEAD (and such a config) at the start, to make it one
	// with objects and refs later; one given a commondir and a
	// config.worktree (git status there obeys its core.fsmonitor).
	for _, d := range []string{"bad/objects", "bad/refs", "docs/guide/objects", "docs/guide/refs", "had/objects", "wt2/objects", "wt2/refs", ".git/ev2/objects", ".git/ev2/refs"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"bad/config", "had/config", "had/HEAD", "wt2/config.worktree", "cd/HEAD", ".git/ev2/config", ".git/worktrees/wt/commondir", ".git/worktrees/wt3/commondir", ".git/worktrees/wt3/config.worktree"} {
		if err := os.MkdirAll(filepath.Join(root, filepath.Dir(f)), 0o755); err != nil {
			t.Fatal(err)
		}
		data := "[core]\n\tbare = false\n\tfsmonitor = x\n"
		if filepath.Base(f) == "commondir" {
			data = "../..\n"
		}
		if err := os.WriteFile(filepath.Join(root, f), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	approved := false
	m := &mounter{spec: &Spec{Writable: []string{root}, Quarantine: root + "/.shellgate-quarantine"},
		gitAtStart: true, gitDirAtStart: true, configAtStart: true, git: gitstate.New(root),
		approved: func() bool { return approved }}
	m.repos = repoSets{links: map[string]bool{root + "/lib": true}, ancestors: map[string]bool{},
		names: map[string]bool{"lib": true}, gitDirs: map[string]bool{root + "/.git/modules/lib": true, root + "/ev/.git": true, root + "/.gd/w": true},
		// Kept at the end of the commands that made them (acceptRepo): a
		// .git directory, and a .git file naming a directory elsewhere.
		accepted: map[string]acceptedRepo{root + "/ev/.git": {worktree: root + "/ev"}, root + "/.gd/w": {worktree: root + "/w"}}}
	tests := []struct {
		path string
		op   copyup.Op
		want copyup.Verdict
	}{
		{".git/index", copyup.OpRename, copyup.Staged}, // index.lock, a file made earlier, GIT_INDEX_FILE's
		{".git/index", copyup.OpWrite, copyup.Refused}, // cp, >, dd, r+, through a symlink or /proc/self/fd
		{".git/index", copyup.OpMake, copyup.Refused},
		{".git/index", copyup.OpLink, copyup.Refused},
		{".git/modules/lib/index", copyup.OpRename, copyup.Staged},
		{".git/worktrees/wt/index", copyup.OpWrite, copyup.Refused},
		{".git/sharedindex.0123", copyup.OpRename, copyup.Refused}, // the one a split index names
		{".git/sharedindex.4567", copyup.OpRename, copyup.Free},    // a new one
		{"lib/.git", copyup.OpMake, copyup.Staged},
		{"lib/.git", copyup.OpRename, copyup.Staged},
		{"lib/.git", copyup.OpLink, copyup.Refused},
		{"lib", copyup.OpRename, copyup.Crossed},
		{"lib", copyup.OpLink, copyup.Refused},
		{".git/modules/lib", copyup.OpMakeDir, copyup.Refused},
		{".git/modules/lib", copyup.OpRename, copyup.Refused},
		{".git/modules", copyup.OpRename, copyup.Refused},
		{".git/modules/lib/config", copyup.OpRename, copyup.Refused},
		{".git/modules/lib/config.lock", copyup.OpMake, copyup.Refused},
		// A .git anywhere below the root's top is judged (a shell
		// prompt's git status runs its core.fsmonitor; a commit may name
		// it by a gitlink): staged, or an empty directory kept at once;
		// never linked; a kept one's config is
		// written only by a rename that is judged, never in place, its
		// .git file is not rewritten, and it is not renamed away from
		// where it was judged (mv copies it, each name judged).
		{"tools/sub/.git", copyup.OpMake, copyup.Staged}, // a .git file
		{"tools/sub/.git", copyup.OpRename, copyup.Staged},
		{"tools/sub/.git", copyup.OpMakeDir, copyup.Free}, // made in place, kept at once:
		{"tools/sub/.git/config.lock", copyup.OpMake, copyup.Free},
		{"tools/sub/.git/config", copyup.OpRename, copyup.Staged},
		{"tools/sub/.git/commondir", copyup.OpMake, copyup.Refused},
		// Its hooks made by hand: staged (a git status on the host runs
		// post-index-change), never linked, nor a directory renamed onto
		// hooks; git init's samples and a project's src/hooks are free.
		{"tools/sub/.git/hooks/post-index-change", copyup.OpMake, copyup.Staged},
		{"tools/sub/.git/hooks/post-index-change", copyup.OpLink, copyup.Refused},
		{"tools/sub/.git/hooks/pre-commit", copyup.OpRename, copyup.Staged},
		{"tools/sub/.git/hooks/pre-commit.sample", copyup.OpMake, copyup.Free},
		{"tools/sub/.git/hooks", copyup.OpRename, copyup.Crossed},
		{"tools/sub/.git/hooks", copyup.OpLink, copyup.Refused},
		{"src/hooks/pre-commit", copyup.OpMake, copyup.Free},
		{"ev/.git/hooks/post-index-change", copyup.OpMake, copyup.Staged}, // one kept where a command put it
		// A .git directory staged now (renamed into place): its config
		// only by git config's judged rename; the helper's copies by
		// no command.
		{"st/.git/config", copyup.OpRename, copyup.Staged},
		{"st/.git/config", copyup.OpMake, copyup.Refused},
		{"st/.git/config", copyup.OpLink, copyup.Refused},
		{"st/.git/config", copyup.OpWrite, copyup.Free}, // absent: made (OpMake), refused
		{"ev/.git/.shellgate-put-x", copyup.OpWrite, copyup.Refused},
		{".git/.shellgate-put-y", copyup.OpMake, copyup.Refused},
		{"tools/sub", copyup.OpMoveAway, copyup.Crossed},
		{"lib/.git", copyup.OpMakeDir, copyup.Staged}, // a gitlink's path
		// A HEAD makes a directory a git directory (git init --bare, or
		// a project's docs/guide given HEAD, objects, refs): refused
		// beside a hostile config, else kept as a .git made in place.
		{"bad/HEAD", copyup.OpRename, copyup.Refused},
		{"had/refs", copyup.OpMakeDir, copyup.Refused}, // the HEAD came first
		{"had/refs", copyup.OpLink, copyup.Refused},
		{"had/commondir", copyup.OpMake, copyup.Refused},
		{"wt2/HEAD", copyup.OpMake, copyup.Refused}, // a config.worktree there
		{"cd/commondir", copyup.OpMake, copyup.Refused},
		{"src/refs", copyup.OpMakeDir, copyup.Free}, // no HEAD: no git directory
		// Inside a .git too (shown elsewhere by a symlink), but not a
		// linked worktree's; and no directory leaves a .git by a rename
		// (mv copies it, each name judged where it is made).
		{".git/ev2/HEAD", copyup.OpMake, copyup.Refused},
		{".git/worktrees/wt/HEAD", copyup.OpMake, copyup.Free}, // git worktree add's, kept
		{".git/worktrees/wt/config.worktree", copyup.OpMake, copyup.Refused},
		{".git/worktrees/wt3/HEAD", copyup.OpMake, copyup.Refused}, // a config.worktree there
		{".git/ev2", copyup.OpMoveAway, copyup.Crossed},
		{"docs/guide/HEAD", copyup.OpRename, copyup.Free},
		{"docs/guide/config", copyup.OpRename, copyup.Staged},
		{"docs/guide/config", copyup.OpWrite, copyup.Free},  // absent: made new (OpMake, below)
		{"docs/guide/config", copyup.OpMake, copyup.Staged}, // by hand: the host sees an empty one until the end
		{"docs/guide/commondir", copyup.OpMake, copyup.Refused},
		{"docs", copyup.OpMoveAway, copyup.Crossed},
		{"tools/sub/.git/refs/remotes/origin/HEAD", copyup.OpRename, copyup.Free},
		{"src/HEAD", copyup.OpWrite, copyup.Free},
		{"tools/sub/.git", copyup.OpLink, copyup.Refused},
		{"ev/.git/config", copyup.OpRename, copyup.Staged}, // git config: judged (stageConfig)
		{"ev/.git/config", copyup.OpWrite, copyup.Refused},
		{"ev/.git/config", copyup.OpMake, copyup.Refused},
		{"ev/.git/config.lock", copyup.OpMake, copyup.Free},
		{".gd/w/config.lock", copyup.OpMake, copyup.Free},
		{".gd/w/commondir", copyup.OpMake, copyup.Refused},
		{".gd/w/config.worktree", copyup.OpRename, copyup.Refused},
		{"w/.git", copyup.OpWrite, copyup.Refused},
		{"ev", copyup.OpMoveAway, copyup.Crossed},
		{"ev/.git", copyup.OpMoveAway, copyup.Crossed},
		{"w", copyup.OpMoveAway, copyup.Crossed},
		{".gd", copyup.OpMoveAway, copyup.Crossed},
		{"src", copyup.OpMoveAway, copyup.Free},
		{"tools", copyup.OpMoveAway, copyup.Crossed}, // tools/sub/.git lies in it
		// what git and builds do elsewhere
		{".git/index.lock", copyup.OpMake, copyup.Free},
		{"src/index", copyup.OpWrite, copyup.Free},
		{"src/lib", copyup.OpRename, copyup.Free},
		{".git/modules/other", copyup.OpMakeDir, copyup.Free},
	}
	m.judge.setStaged(root+"/st/.git", true)
	for _, name := range []string{"index", ".git", "lib", "sharedindex.4567", "config.worktree", "objects", "refs", "hooks", "post-index-change", ".shellgate-put-x"} {
		if !m.Watched(name) {
			t.Fatalf("%s is not watched: its calls never reach Judge", name)
		}
	}
	for _, tt := range tests {
		if got := m.Judge(root+"/"+tt.path, tt.op); got != tt.want {
			t.Errorf("Judge(%s, %v) = %v, want %v", tt.path, tt.op, got, tt.want)
		}
	}
	approved = true
	if got := m.Judge(root+"/.git/index", copyup.OpRename); got != copyup.Free {
		t.Errorf("approved: Judge(.git/index, rename) = %v, want Free", got)
	}
}

// TestNothingStagedAfterTheEnd: once the session's end has killed its
// processes (endStaging), a call the supervisor still holds for a protected
// path (.envrc, a nested repository's .git) is refused and makes nothing,
// neither at its path on the host nor in the quarantine: the end's last
// look has been, and nothing would remove it (kill9-root-envrc did harm
// once at load).
func TestNothingStagedAfterTheEnd(t *testing.T) {
	lab, err := os.MkdirTemp("/var/tmp", "shellgate-stage-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(lab) })
	root := filepath.Join(lab, "root")
	if err := os.MkdirAll(filepath.Join(root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	m := newMounter(&Spec{Writable: []string{root}, Quarantine: filepath.Join(root, ".shellgate-quarantine")})
	m.ready = true
	m.endStaging()
	made := 0
	mk := func(dir int, name string) unix.Errno {
		made++
		return 0
	}
	for _, p := range []string{filepath.Join(root, ".envrc"), filepath.Join(root, "sub", ".git")} {
		errno, staged := m.Stage(p, copyup.OpMake, mk)
		if !staged || errno != unix.EPERM {
			t.Errorf("Stage(%s) after the end: %v, staged %v; want EPERM, staged", p, errno, staged)
		}
		if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s after the end: %v; want nothing there", p, err)
		}
	}
	if made != 0 {
		t.Errorf("the command's entry made %d times after the end", made)
	}
	if _, err := os.Lstat(m.spec.Quarantine); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("quarantine after the end: %v; want none made", err)
	}
}

// gitNameInAnotherCase: .git, and git's own files at a git directory's top
// and in its hooks, in another case, which a directory that folds case
// takes for git's; not the names git itself writes, nor refs and files
// elsewhere that merely share a name.
func TestGitNameInAnotherCase(t *testing.T) {
	for rel, want := range map[string]bool{
		".GIT":                                true,
		"sub/.Git":                            true,
		"sub/.GIT/config":                     true,
		"sub/.git/CONFIG":                     true,
		"sub/.git/Commondir":                  true,
		"sub/.git/head":                       true,
		"sub/.git/Hooks/post-commit":          true,
		"sub/.git/hooks/Post-Index-Change":    true,
		".git/modules/lib/CONFIG":             true,
		".git/modules/a/modules/b/Config":     true,
		".git/worktrees/w/CommonDir":          true,
		".vſcode/.gıt":                        false, // dotless ı folds to no ASCII letter
		".git/config":                         false,
		"sub/.git/HEAD":                       false,
		"sub/.git/hooks/post-commit":          false,
		".git/refs/heads/Config":              false,
		".git/logs/refs/heads/HEAD":           false,
		".git/modules/Config/config":          false,
		"src/Config/app.php":                  false,
		"src/Hooks/useThing.ts":               false,
		"HEAD":                                false,
		"Head":                                false, // a bare HEAD in another case: not judged here
		"docs/.github/workflows/ci.yml":       false,
		"sub/.git/objects/pack/pack-1.idx":    false,
		"sub/.git/hooks/pre-commit.sample":    false,
		"sub/.git/Hooks.bak/x":                false,
		"sub/.git/info/exclude":               false,
		"sub/.git/Info/exclude":               true,
		"sub/.git/worktrees/w/gitdir":         false,
		"sub/.git/worktrees/w/GITDIR":         true,
		".git/modules/lib/hooks/Pre-Push":     true, // a submodule's git directory's hooks
		".git/worktrees/w/hooks/pre-commit":   false,
		"a/b/c":                               false,
		"sub/.git/index.lock":                 false,
		"sub/.git/INDEX.lock":                 true,
		"sub/.git/config.worktree":            false,
		"sub/.git/Config.Worktree":            true,
		"sub/.git/MERGE_HEAD":                 false,
		"sub/.git/refs/heads/feature/Objects": false,
	} {
		if got := gitNameInAnotherCase(rel); got != want {
			t.Errorf("gitNameInAnotherCase(%q) = %v, want %v", rel, got, want)
		}
	}
}
