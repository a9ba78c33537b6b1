package repowatch

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// mk makes each path under root: a trailing slash makes a directory, else a
// file.
func mk(t *testing.T, root string, paths ...string) {
	t.Helper()
	for _, p := range paths {
		full := filepath.Join(root, p)
		if p[len(p)-1] == '/' {
			if err := os.MkdirAll(full, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// gitDirShape is what git init leaves in a git directory, enough for a walk.
func gitDirShape(dir string) []string {
	return []string{dir + "/HEAD", dir + "/objects/", dir + "/refs/", dir + "/config"}
}

func TestAtStart(t *testing.T) {
	root := t.TempDir()
	mk(t, root, gitDirShape(".git")...)
	mk(t, root, gitDirShape(".git/modules/lib")...)
	mk(t, root, gitDirShape("sub/.git")...)
	mk(t, root, "lib/.git", ".claude/settings.json", "packages/app/.claude/settings.json",
		"packages/app/.envrc", "packages/app/.gitattributes", "src/main.go")
	mk(t, root, gitDirShape("tools/bare")...)
	mk(t, root, gitDirShape(".shellgate-quarantine/1/x/.git")...)
	mk(t, root, ".git/hooks/.claude/") // inside a git directory: not walked
	tr := Watch(root, ".shellgate-quarantine")
	defer tr.Close()
	want := Found{
		Repos: []Repo{
			{Dir: ".", Git: ".git"},
			{Dir: ".git/modules/lib", Git: ".git/modules/lib"},
			{Dir: "lib", Git: "lib/.git"},
			{Dir: "sub", Git: "sub/.git"},
			{Dir: "tools/bare", Git: "tools/bare"},
		},
		Protected: []string{"packages/app/.claude", "packages/app/.envrc"},
	}
	if diff := cmp.Diff(want, tr.AtStart()); diff != "" {
		t.Errorf("AtStart (-want +got):\n%s", diff)
	}
	if got := tr.Close(); !got.Empty() {
		t.Errorf("Close found %+v, though nothing appeared", got)
	}
}

func TestAppeared(t *testing.T) {
	root := t.TempDir()
	mk(t, root, gitDirShape(".git")...)
	mk(t, root, "src/")
	tr := Watch(root)
	defer tr.Close()
	if got := tr.Appeared(); !got.Empty() {
		t.Fatalf("Appeared before anything was made: %+v", got)
	}
	// A repository made, a bare one, a submodule's git directory, a .git
	// file, an agent's settings in a subproject, and a directory holding a
	// repository moved in whole.
	mk(t, root, gitDirShape("vendor/lib/.git")...)
	mk(t, root, gitDirShape("src/bare")...)
	mk(t, root, gitDirShape(".git/modules/m")...)
	mk(t, root, "w/.git", "packages/app/.claude/settings.json", "src/x.go")
	outside := t.TempDir()
	mk(t, outside, gitDirShape("moved/.git")...)
	if err := os.Rename(filepath.Join(outside, "moved"), filepath.Join(root, "src", "moved")); err != nil {
		t.Fatal(err)
	}
	want := Found{
		Repos: []Repo{
			{Dir: ".git/modules/m", Git: ".git/modules/m"},
			{Dir: "src/bare", Git: "src/bare"},
			{Dir: "src/moved", Git: "src/moved/.git"},
			{Dir: "vendor/lib", Git: "vendor/lib/.git"},
			{Dir: "w", Git: "w/.git"},
		},
		Protected: []string{"packages/app/.claude"},
	}
	if runtime.GOOS != "linux" {
		if got := tr.Appeared(); !got.Empty() {
			t.Errorf("Appeared without a watch: %+v", got)
		}
		if diff := cmp.Diff(want, tr.Close()); diff != "" {
			t.Errorf("Close (-want +got):\n%s", diff)
		}
		return
	}
	if diff := cmp.Diff(want, tr.Appeared()); diff != "" {
		t.Errorf("Appeared (-want +got):\n%s", diff)
	}
	if got := tr.Appeared(); !got.Empty() {
		t.Errorf("Appeared twice: %+v", got)
	}
	mk(t, root, "src/moved/x/.vscode/")
	if got := tr.Close(); !cmp.Equal(got.Protected, []string{"src/moved/x/.vscode"}) || len(got.Repos) != 0 {
		t.Errorf("Close = %+v, want only src/moved/x/.vscode", got)
	}
}

// A HEAD alone is not a repository.
func TestHeadAlone(t *testing.T) {
	root := t.TempDir()
	tr := Watch(root)
	mk(t, root, "HEAD", "docs/HEAD")
	if got := tr.Close(); !got.Empty() {
		t.Errorf("found %+v", got)
	}
}

// BenchmarkWatch is a session's first walk and its close on a tree (the
// BENCH_TREE directory, else /usr/lib), beside filepath.WalkDir of it.
func BenchmarkWatch(b *testing.B) {
	root := os.Getenv("BENCH_TREE")
	if root == "" {
		root = "/usr/lib"
	}
	b.Run("watch", func(b *testing.B) {
		for b.Loop() {
			Watch(root).Close()
		}
	})
	b.Run("WalkDir", func(b *testing.B) {
		for b.Loop() {
			filepath.WalkDir(root, func(string, os.DirEntry, error) error { return nil })
		}
	})
	b.Run("Appeared", func(b *testing.B) {
		tr := Watch(root)
		defer tr.Close()
		for b.Loop() {
			tr.Appeared()
		}
	})
}
