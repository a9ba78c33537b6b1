package protect

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// A linked worktree's and a submodule's git directory are found from the
// root's .git file, with what commits write and what stays read-only; a .git
// directory, or a gitdir inside the root, is no linked one.
func TestLinkedGitDir(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	base := t.TempDir()
	git := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=u", "GIT_AUTHOR_EMAIL=u@x", "GIT_COMMITTER_NAME=u", "GIT_COMMITTER_EMAIL=u@x")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	main := filepath.Join(base, "main")
	must(t, os.MkdirAll(main, 0o755))
	git(main, "init", "-q")
	git(main, "commit", "-q", "--allow-empty", "-m", "init")
	git(main, "worktree", "add", "-q", "../feature", "-b", "feature")
	feature := filepath.Join(base, "feature")

	if _, ok := LinkedGitDir(main); ok {
		t.Error("a .git directory is taken for a linked one")
	}
	l, ok := LinkedGitDir(feature)
	if !ok {
		t.Fatal("the worktree's git directory is not found")
	}
	common := filepath.Join(main, ".git")
	gitDir := filepath.Join(common, "worktrees", "feature")
	if l.GitDir != gitDir || l.Common != common {
		t.Errorf("git dir %s, common %s", l.GitDir, l.Common)
	}
	want := []string{gitDir, common + "/objects", common + "/refs", common + "/logs"}
	if !slices.Equal(l.Writable, want) {
		t.Errorf("writable %v, want %v", l.Writable, want)
	}
	if slices.Contains(l.Swept(), common+"/objects") || !slices.Contains(l.Swept(), gitDir) {
		t.Errorf("swept %v", l.Swept())
	}
	for _, p := range []string{filepath.Join(feature, ".git"), gitDir + "/config.worktree", gitDir + "/commondir", gitDir + "/config", gitDir + "/hooks"} {
		if !slices.Contains(l.Protected, p) {
			t.Errorf("%s is not protected: %v", p, l.Protected)
		}
	}
	must(t, l.Prepare())
	if b, err := os.ReadFile(filepath.Join(gitDir, "config.worktree")); err != nil || len(b) != 0 {
		t.Errorf("config.worktree not made empty: %q %v", b, err)
	}
	must(t, os.WriteFile(filepath.Join(gitDir, "config.worktree"), []byte("[core]\n"), 0o644))
	must(t, l.Prepare())
	if b, _ := os.ReadFile(filepath.Join(gitDir, "config.worktree")); string(b) != "[core]\n" {
		t.Errorf("the user's config.worktree was changed: %q", b)
	}

	// A submodule opened as a project: its git directory is its own common one.
	sub := filepath.Join(base, "sub")
	module := filepath.Join(base, "super", ".git", "modules", "sub")
	must(t, os.MkdirAll(sub, 0o755))
	must(t, os.MkdirAll(filepath.Join(module, "objects"), 0o755))
	must(t, os.WriteFile(filepath.Join(sub, ".git"), []byte("gitdir: ../super/.git/modules/sub\n"), 0o644))
	if l, ok := LinkedGitDir(sub); !ok || l.GitDir != module || l.Common != module || !slices.Equal(l.Writable, []string{module}) {
		t.Errorf("a submodule's: %+v %v", l, ok)
	}
	// A gitdir inside the root is the root's to protect.
	inside := filepath.Join(base, "inside")
	must(t, os.MkdirAll(filepath.Join(inside, "gd"), 0o755))
	must(t, os.WriteFile(filepath.Join(inside, ".git"), []byte("gitdir: gd\n"), 0o644))
	if _, ok := LinkedGitDir(inside); ok {
		t.Error("a git directory inside the root is taken for a linked one")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// A root that is itself a git directory has its config, hooks and the
// rest protected as a .git directory's are; any other root has none of
// them protected so (a config/ or hooks/ of a project's own stays its own).
func TestBareRoot(t *testing.T) {
	for _, c := range []struct {
		name  string
		files map[string]string // name → content; "" for a directory
		bare  bool
	}{
		{"bare repository", map[string]string{"HEAD": "ref: refs/heads/main\n", "objects": "", "refs": "", "config": "[core]\n"}, true},
		{"with a .git", map[string]string{".git": "", "HEAD": "ref: refs/heads/main\n", "objects": "", "refs": ""}, false},
		{"no refs", map[string]string{"HEAD": "ref: refs/heads/main\n", "objects": ""}, false},
		{"a HEAD directory", map[string]string{"HEAD": "", "objects": "", "refs": ""}, false},
		{"a project", map[string]string{"config": "", "hooks": "", "README.md": "x"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			for name, content := range c.files {
				var err error
				if content == "" {
					err = os.Mkdir(filepath.Join(root, name), 0o755)
				} else {
					err = os.WriteFile(filepath.Join(root, name), []byte(content), 0o644)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			got := BareRoot(root)
			if !c.bare {
				if got != nil {
					t.Errorf("BareRoot = %v, want nil", got)
				}
				return
			}
			for _, name := range []string{"config", "config.worktree", "commondir", "hooks", "info"} {
				if !slices.Contains(got, filepath.Join(root, name)) {
					t.Errorf("BareRoot lacks %s: %v", name, got)
				}
			}
		})
	}
}
