//go:build unix

package quarantinelog

import (
	"os"
	"path/filepath"
	"testing"
)

// What the helper wrote is taken once, as long as what it moved is still
// there: an item removed, or replaced by another file, is not reported; the
// log is never opened through a symlink.
func TestWriteTake(t *testing.T) {
	lab := t.TempDir()
	root := filepath.Join(lab, "root")
	q := filepath.Join(root, ".shellgate-quarantine", "20260101-000000-x")
	for _, d := range []string{filepath.Join(q, ".vscode"), filepath.Join(root, ".git")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{filepath.Join(q, ".envrc"), filepath.Join(q, "Makefile"), filepath.Join(root, ".git", ".shellgate-quarantined-config-ab12"), filepath.Join(lab, "other")} {
		if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := Path(filepath.Join(lab, "state"), root)
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	err = Write(f, root, []string{
		root + "/.envrc → .shellgate-quarantine/20260101-000000-x/.envrc",
		root + "/.vscode → .shellgate-quarantine/20260101-000000-x/.vscode",
		root + "/Makefile → .shellgate-quarantine/20260101-000000-x/Makefile",
		root + "/.git/config → .git/.shellgate-quarantined-config-ab12",
		root + "/gone → .shellgate-quarantine/20260101-000000-x/gone",
	})
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	// After the session: one item reviewed and removed, one replaced.
	if err := os.RemoveAll(filepath.Join(q, ".vscode")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(lab, "other"), filepath.Join(q, "Makefile")); err != nil {
		t.Fatal(err)
	}
	got, err := Take(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{q + "/.envrc", root + "/.git/.shellgate-quarantined-config-ab12"}
	if len(got) != len(want) {
		t.Fatalf("Take = %+v, want entries at %q", got, want)
	}
	for i, e := range got {
		if e.To != want[i] || filepath.Dir(e.From) != root && filepath.Dir(e.From) != root+"/.git" {
			t.Errorf("entry %d: %+v, want one moved to %s", i, e, want[i])
		}
	}
	if again, err := Take(path); err != nil || len(again) != 0 {
		t.Errorf("taken twice: %+v %v", again, err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(lab, "elsewhere"), path); err != nil {
		t.Fatal(err)
	}
	if f, err := Open(path); err == nil {
		f.Close()
		t.Error("the log was opened through a symlink")
	}
}
