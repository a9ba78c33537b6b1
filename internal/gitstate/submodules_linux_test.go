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
