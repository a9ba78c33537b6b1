package checkpoint_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/shellgate/shellgate/internal/checkpoint"
	"github.com/shellgate/shellgate/internal/checkpoint/checkpointtest"
	"github.com/shellgate/shellgate/internal/protect"
)

// TestQuarantineLeftOut: what the sandbox moved aside during a command —
// into the root's quarantine, or beside itself where it could not (in .git,
// a mount point) — is not among the command's changes, and undo neither
// deletes it (the user's only copy of what the guard took) nor brings back
// what the user cleared; the command's own file goes.
func TestQuarantineLeftOut(t *testing.T) {
	for _, rel := range []string{
		filepath.Join(protect.QuarantineDir, "20260101-000000-ab", ".envrc"),
		filepath.Join(".git", protect.QuarantinedPrefix+"config-ab12cd34"),
		filepath.Join(".git", "rebase-merge", protect.QuarantinedPrefix+"git-rebase-todo-ab12cd34"),
		filepath.Join(".vscode", protect.QuarantinedPrefix+"tasks.json-ab12cd34"),
	} {
		t.Run(rel, func(t *testing.T) {
			lab, root := checkpointtest.Project(t)
			s := open(t, root, filepath.Join(lab, "store"))
			defer s.Close()
			moved := filepath.Join(root, rel)
			top := filepath.Join(root, strings.Split(rel, string(filepath.Separator))[0])
			if !strings.HasPrefix(rel, protect.QuarantineDir) {
				top = moved // beside itself: the user removes the file
			}

			id := snapshot(t, s, "make .envrc and b")
			if err := os.MkdirAll(filepath.Dir(moved), 0o755); err != nil {
				t.Fatal(err)
			}
			for p, body := range map[string]string{moved: "echo moved\n", filepath.Join(root, "b"): "b\n"} {
				if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			sum, err := s.Finish(id)
			if err != nil {
				t.Fatal(err)
			}
			if len(sum.Changes) != 1 || sum.Changes[0].Path != "b" || sum.Added != 1 {
				t.Errorf("changes %+v (added %d), want only b added", sum.Changes, sum.Added)
			}

			undo, _, err := s.Restore(id)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := os.Lstat(filepath.Join(root, "b")); !os.IsNotExist(err) {
				t.Errorf("undo left the command's b: %v", err)
			}
			if b, err := os.ReadFile(moved); err != nil || string(b) != "echo moved\n" {
				t.Errorf("undo took the quarantine's file: %q, %v", b, err)
			}

			// The user clears it; undoing the undo brings b back, not it.
			if err := os.RemoveAll(top); err != nil {
				t.Fatal(err)
			}
			if _, _, err := s.Restore(undo); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Lstat(filepath.Join(root, "b")); err != nil {
				t.Errorf("undoing the undo did not bring b back: %v", err)
			}
			if _, err := os.Lstat(top); !os.IsNotExist(err) {
				t.Errorf("undoing the undo brought the cleared quarantine back: %v", err)
			}
		})
	}
}

// TestNewerFormatRefused: a record a newer shellgate wrote (a checkpoint
// format this build does not know: it might keep files in a way this one
// would misread) is not undone; the root is left as it is, and the error
// says what to do.
func TestNewerFormatRefused(t *testing.T) {
	lab, root := checkpointtest.Project(t)
	store := filepath.Join(lab, "store")
	s := open(t, root, store)
	id := snapshot(t, s, "echo b > b")
	if err := os.WriteFile(filepath.Join(root, "b"), []byte("b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Finish(id); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(s.Dir(), "log.jsonl")
	s.Close()
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	was := regexp.MustCompile(`"format":[0-9]+`)
	if !was.Match(b) {
		t.Fatalf("the record does not say its format:\n%s", b)
	}
	if err := os.WriteFile(log, was.ReplaceAll(b, []byte(`"format":99`)), 0o600); err != nil {
		t.Fatal(err)
	}
	want := checkpointtest.State(t, root)
	s = open(t, root, store)
	defer s.Close()
	_, _, err = s.Restore(id)
	var newer checkpoint.NewerFormatError
	if !errors.As(err, &newer) || !strings.Contains(err.Error(), "upgrade shellgate") {
		t.Fatalf("undo of a newer format: %v", err)
	}
	if got := checkpointtest.State(t, root); got != want {
		t.Errorf("the refused undo changed the root:\n%s", checkpointtest.DiffLines(want, got))
	}
}

// A restore stages its files beside the root, where a command of a session
// still running cannot reach them (and write, later, through a descriptor
// of one that became .git/config); in the root only where it must, and
// either way the root ends as the checkpoint had it.
func TestStageOutsideRoot(t *testing.T) {
	for _, beside := range []bool{true, false} {
		t.Run(fmt.Sprintf("beside=%v", beside), func(t *testing.T) {
			lab, root := checkpointtest.Project(t)
			s := open(t, root, filepath.Join(lab, "store"))
			defer s.Close()
			id := snapshot(t, s, "rewrite the config")
			if err := os.WriteFile(filepath.Join(root, ".git", "config"), []byte("[core]\n\tfsmonitor = touch PWNED\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Finish(id); err != nil {
				t.Fatal(err)
			}
			checkpoint.StageBesideForTest(t, beside)
			var inRoot, besideRoot []string
			checkpoint.CrashHookForTest(t, func(at string) error {
				if at == "stage" {
					inRoot = stages(t, root)
					besideRoot = stages(t, filepath.Dir(root))
				}
				return nil
			})
			if _, _, err := s.Restore(id); err != nil {
				t.Fatal(err)
			}
			if beside && (len(inRoot) != 0 || len(besideRoot) != 1) || !beside && (len(inRoot) != 1 || len(besideRoot) != 0) {
				t.Errorf("stages in the root %q, beside it %q", inRoot, besideRoot)
			}
			if b, _ := os.ReadFile(filepath.Join(root, ".git", "config")); bytes.Contains(b, []byte("fsmonitor")) {
				t.Errorf("the config was not restored:\n%s", b)
			}
			if left := append(stages(t, root), stages(t, filepath.Dir(root))...); len(left) > 0 {
				t.Errorf("stages left: %q", left)
			}
		})
	}
}

// stages lists the restore stages in dir.
func stages(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".shellgate-undo-") {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestUndoRewritesProtectedInPlace: undo writes a protected file (git's
// config, a hook) into the file that is there, which a sandboxed session
// still running keeps read-only by a bind mount of that very file; a new
// file renamed over it would be writable there until the sandbox looked
// again. A file of two names is replaced instead, so the other keeps its
// bytes.
func TestUndoRewritesProtectedInPlace(t *testing.T) {
	lab, root := checkpointtest.Project(t)
	s := open(t, root, filepath.Join(lab, "store"))
	defer s.Close()
	config := filepath.Join(root, ".git", "config")
	hook := filepath.Join(root, ".git", "hooks", "pre-commit")
	if err := os.MkdirAll(filepath.Dir(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hook, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	want := map[string][]byte{}
	for _, p := range []string{config, hook} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		want[p] = b
	}
	id := snapshot(t, s, "rewrite them")
	for _, p := range []string{config, hook} {
		if err := os.WriteFile(p, []byte("[core]\n\tfsmonitor = touch PWNED\n# a longer file than it was, and then some more\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Finish(id); err != nil {
		t.Fatal(err)
	}
	ino := func(p string) os.FileInfo {
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		return fi
	}
	before := map[string]os.FileInfo{config: ino(config), hook: ino(hook)}
	if _, _, err := s.Restore(id); err != nil {
		t.Fatal(err)
	}
	for p, b := range want {
		got, _ := os.ReadFile(p)
		if !bytes.Equal(got, b) {
			t.Errorf("%s: %q, want %q", p, got, b)
		}
		if !os.SameFile(ino(p), before[p]) {
			t.Errorf("%s was replaced by another file, not rewritten", p)
		}
	}
	if fi, _ := os.Stat(hook); fi.Mode().Perm() != 0o755 {
		t.Errorf("the hook's mode %v", fi.Mode().Perm())
	}
}
