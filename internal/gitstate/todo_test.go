package gitstate

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Every spelling git's sequencer takes for an exec is found, and nothing
// it takes for another command.
func TestExecLines(t *testing.T) {
	todo := "pick 1234 one\nexec make test\nx sh fmt.sh\n  \texec\tindented\r\nx\ttab\nexecute nothing\nxx nothing\n# exec a comment is still found\nedit 1234\nexec\n"
	want := []string{"make test", "sh fmt.sh", "indented", "tab", ""}
	if got := ExecLines([]byte(todo)); !slices.Equal(got, want) {
		t.Fatalf("ExecLines = %q, want %q", got, want)
	}
}

// What git itself writes for `rebase -x` is found, in the todo list of a
// rebase stopped on a conflict.
func TestExecLinesAsGitWritesThem(t *testing.T) {
	requireGit(t)
	d := lab(t)
	git(t, d, "init", "-q")
	os.WriteFile(filepath.Join(d, "f"), []byte("1\n"), 0o644)
	git(t, d, "add", "f")
	git(t, d, "commit", "-qm", "1")
	git(t, d, "checkout", "-qb", "side")
	os.WriteFile(filepath.Join(d, "f"), []byte("A\n"), 0o644)
	git(t, d, "commit", "-qam", "a")
	git(t, d, "checkout", "-q", "main")
	os.WriteFile(filepath.Join(d, "f"), []byte("B\n"), 0o644)
	git(t, d, "commit", "-qam", "b")
	os.WriteFile(filepath.Join(d, "g"), []byte("C\n"), 0o644)
	git(t, d, "add", "g")
	git(t, d, "commit", "-qm", "c")
	gitFails(t, d, "rebase", "-x", "echo ran", "side")
	data, err := os.ReadFile(filepath.Join(d, ".git/rebase-merge/git-rebase-todo"))
	if err != nil {
		t.Fatal(err)
	}
	if got := ExecLines(data); !slices.Equal(got, []string{"echo ran", "echo ran"}) {
		t.Fatalf("ExecLines(%q) = %q", data, got)
	}
}

func gitFails(t *testing.T, dir string, args ...string) {
	t.Helper()
	out := runGit(dir, args...)
	if !strings.Contains(out, "CONFLICT") {
		t.Fatalf("git %v did not stop on a conflict: %s", args, out)
	}
}
