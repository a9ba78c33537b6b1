package gitstate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A submodule's .git file that a command rewrites in place (the same
// inode) to name another git directory, one whose config runs a program,
// is read again and judged, though a look reads a .git file as the session
// found it no more.
func TestSubmodulesReadAGitFileRewrittenInPlace(t *testing.T) {
	dir := lab(t)
	src, root := filepath.Join(dir, "src"), filepath.Join(dir, "root")
	for _, d := range []string{src, root} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		git(t, d, "init", "-q")
	}
	git(t, src, "commit", "-q", "--allow-empty", "-m", "s")
	git(t, root, "-c", "protocol.file.allow=always", "submodule", "-q", "add", src, "sub")
	git(t, root, "commit", "-q", "-m", "sub")
	s := NewSubmodules(root)
	if _, ok := s.files["sub"]; !ok {
		t.Fatalf("the .git file was not noted: %v", s.files)
	}
	quarantine := func(p string) (string, error) { return p + ".moved", nil }
	if moved, _, _ := s.Check(func() bool { return true }, quarantine); len(moved) != 0 {
		t.Fatalf("moved %v as the session found it", moved)
	}
	evil := filepath.Join(root, ".git", "modules", "evil")
	git(t, root, "init", "-q", "--bare", evil)
	if err := os.WriteFile(filepath.Join(evil, "config"), []byte("[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tfsmonitor = touch PWNED\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(root, "sub", ".git"), os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("gitdir: ../.git/modules/evil\n")
	f.Close()
	moved, notes, _ := s.Check(func() bool { return true }, quarantine)
	if len(moved) != 1 || !strings.Contains(strings.Join(notes, " "), "fsmonitor") {
		t.Errorf("a rewritten .git file: moved %v, notes %v", moved, notes)
	}
}

// Hostile takes a linked worktree of the root's own repository made inside
// the project (git worktree add) for git's, though its git directory has a
// commondir: it names the root's .git, whose config the sandbox keeps. A
// commondir naming any other directory, or a worktree's config.worktree
// that sets what git does not, is hostile.
func TestHostileLinkedWorktreeOfTheRoot(t *testing.T) {
	dir := lab(t)
	root := filepath.Join(dir, "root")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	git(t, root, "init", "-q")
	git(t, root, "commit", "-q", "--allow-empty", "-m", "r")
	git(t, root, "worktree", "add", "-q", ".wt/feature")
	git(t, root, "init", "-q", "plain")
	wt := filepath.Join(root, ".wt", "feature")
	for _, d := range []string{wt, filepath.Join(root, "plain")} {
		if why := Hostile(root, d); why != "" {
			t.Errorf("Hostile(%s) = %q, want \"\"", d, why)
		}
	}
	gd := filepath.Join(root, ".git", "worktrees", "feature")
	if err := os.WriteFile(filepath.Join(gd, "config.worktree"), []byte("[core]\n\tfsmonitor = touch PWNED\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if why := Hostile(root, wt); !strings.Contains(why, "core.fsmonitor") {
		t.Errorf("a worktree's config.worktree with core.fsmonitor: Hostile = %q", why)
	}
	os.Remove(filepath.Join(gd, "config.worktree"))
	git(t, root, "init", "-q", "--bare", "ev")
	if err := os.WriteFile(filepath.Join(gd, "commondir"), []byte("../../../ev\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if why := Hostile(root, wt); !strings.Contains(why, "commondir") {
		t.Errorf("a commondir naming another repository: Hostile = %q", why)
	}
}
