package checkpoint_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/shellgate/shellgate/internal/checkpoint"
	"github.com/shellgate/shellgate/internal/checkpoint/checkpointtest"
	"github.com/shellgate/shellgate/internal/lane"
)

// TestRestoreStageSymlink: a command that leaves a symlink to a directory
// outside the root at the names undo stages its files in
// (.shellgate-undo-N, N predictable: the undo's own record) does not make
// undo write there — git's checkout-index --prefix follows a symlink at its
// prefix — and undo still brings the root back.
func TestRestoreStageSymlink(t *testing.T) {
	lane.Live(t)
	lab, root := checkpointtest.Project(t)
	outside := filepath.Join(lab, "outside")
	if err := os.Mkdir(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	s := open(t, root, filepath.Join(lab, "store"))
	want := checkpointtest.State(t, root)
	id := snapshot(t, s, "plant")
	checkpointtest.Sh(t, root, "rm -rf README.md src")
	for i := 1; i <= 5; i++ {
		if err := os.Symlink(outside, filepath.Join(root, fmt.Sprintf(".shellgate-undo-%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Finish(id); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Restore(id); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadDir(outside); len(got) != 0 {
		t.Errorf("undo wrote outside the root, through a planted stage symlink: %v", got)
	}
	if got := checkpointtest.State(t, root); got != want {
		t.Errorf("after undo:\n%s", checkpointtest.DiffLines(want, got))
	}
}

// TestRestoreModeHardLink: a command that puts, in place of a file kept at
// 0600, a hard link to a file outside the root with the same bytes (a
// package store's) leaves undo only a mode to restore: the outside file
// keeps its own, and the root's file gets the checkpoint's.
func TestRestoreModeHardLink(t *testing.T) {
	lane.Live(t)
	lab, root := checkpointtest.Project(t)
	store := filepath.Join(lab, "outside", "index.js")
	if err := os.MkdirAll(filepath.Dir(store), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(store, []byte("module.exports = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	checkpointtest.Sh(t, root, "cp "+store+" lp.js && chmod 600 lp.js")
	s := open(t, root, filepath.Join(lab, "store"))
	want := checkpointtest.State(t, root)
	id := snapshot(t, s, "link")
	checkpointtest.Sh(t, root, "rm lp.js && ln "+store+" lp.js")
	if sum, err := s.Finish(id); err != nil || sum.Empty() {
		t.Fatalf("finish: %v, %+v", err, sum)
	}
	if _, _, err := s.Restore(id); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(store); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("undo changed the mode of a file outside the root through a hard link: %v %v", fi.Mode(), err)
	}
	if got := checkpointtest.State(t, root); got != want {
		t.Errorf("after undo:\n%s", checkpointtest.DiffLines(want, got))
	}
}

// TestNestedRepoSpecialFiles: a command that leaves a nested repository
// whose HEAD, commondir or packed-refs is a FIFO, or a symlink to /dev/zero
// does not make the next checkpoint wait forever
// (holding the store's lock: every later run, changes and undo of the
// project would wait behind it) nor read without end.
func TestNestedRepoSpecialFiles(t *testing.T) {
	lane.Live(t)
	for _, c := range []struct{ name, sh string }{
		{"fifo-head", "mkfifo sub/g/HEAD"},
		{"devzero-head", "ln -s /dev/zero sub/g/HEAD"},
		{"fifo-commondir", "echo 'ref: refs/heads/main' > sub/g/HEAD && mkfifo sub/g/commondir"},
		{"fifo-ref", "echo 'ref: refs/heads/main' > sub/g/HEAD && mkdir -p sub/g/refs/heads && mkfifo sub/g/refs/heads/main"},
		{"fifo-packed-refs", "echo 'ref: refs/heads/main' > sub/g/HEAD && mkfifo sub/g/packed-refs"},
		{"devzero-packed-refs", "echo 'ref: refs/heads/main' > sub/g/HEAD && ln -s /dev/zero sub/g/packed-refs"},
		{"fifo-gitfile", "rm sub/.git && mkfifo sub/.git"},
		{"fifo-exclude", "mkdir -p sub/g/info && mkfifo sub/g/info/exclude"},
		{"devzero-exclude", "mkdir -p sub/g/info && ln -s /dev/zero sub/g/info/exclude"},
	} {
		t.Run(c.name, func(t *testing.T) {
			lab, root := checkpointtest.Project(t)
			s := open(t, root, filepath.Join(lab, "store"))
			id := snapshot(t, s, c.name)
			checkpointtest.Sh(t, root, "mkdir -p sub/g/objects sub/g/refs && echo 'gitdir: g' > sub/.git && "+c.sh)
			done := make(chan error, 1)
			go func() { _, err := s.Finish(id); done <- err }()
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(60 * time.Second):
				t.Fatal("the checkpoint after the command did not end in 60 s")
			}
		})
	}
}

// TestShowPath: a name holding terminal control is quoted for display; an
// ordinary one (spaces, non-ASCII letters) is shown as it is.
func TestShowPath(t *testing.T) {
	for in, want := range map[string]string{
		"src/a b.go":         "src/a b.go",
		"docs/café.md":       "docs/café.md",
		"x\x1b]52;c;cHc=\ay": `"x\x1b]52;c;cHc=\ay"`,
		"a\u009bb":           `"a\u009bb"`,
		"bad\xffname":        `"bad\xffname"`,
		"\u202egnp.exe":      `"\u202egnp.exe"`,
		"a\u200bb":           `"a\u200bb"`,
		"日本語/ファイル.txt":       "日本語/ファイル.txt",
	} {
		if got := checkpoint.ShowPath(in); got != want {
			t.Errorf("ShowPath(%q) = %s, want %s", in, got, want)
		}
	}
}
