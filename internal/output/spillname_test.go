package output

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TestSpillNamesInASessionDir: in a Gate's own directory a spill file is
// named by a number (3.stdout.log), the path a model reads and types 31
// characters shorter than with a 32-digit id; a name taken already is
// stepped over, never written; elsewhere the id stays random.
func TestSpillNamesInASessionDir(t *testing.T) {
	d := NewSessionDir(t.TempDir())
	if err := d.Make(); err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	taken := filepath.Join(d.Path, strconv.FormatUint(spillSeq.Load()+1, 10)+".stdout.log")
	if err := os.WriteFile(taken, []byte("someone's"), 0o600); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for range 3 {
		f, err := createSpill(d.Path, "stdout")
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		name := filepath.Base(f.Name())
		if filepath.Dir(f.Name()) != d.Path || len(name) > len("99999.stdout.log") || !isSpillName(name, true) || seen[name] || f.Name() == taken {
			t.Errorf("spill file %s (%d characters), taken %v", f.Name(), len(f.Name()), seen)
		}
		seen[name] = true
		os.Remove(f.Name())
	}
	if b, _ := os.ReadFile(taken); string(b) != "someone's" {
		t.Errorf("the file taken already was written: %q", b)
	}
	other := t.TempDir()
	f, err := createSpill(other, "stdout")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if name := filepath.Base(f.Name()); len(name) != spillIDLen+len(".stdout.log") || !isSpillName(name, false) {
		t.Errorf("outside a session directory: %s", name)
	}
}

// TestSweepNumberedOnlyInSessionDirs: a numbered spill file is shellgate's
// in a Gate's own directory, swept past its retention; the same name in the
// spill directory itself, which a user may have chosen, is not ours.
func TestSweepNumberedOnlyInSessionDirs(t *testing.T) {
	spill := t.TempDir()
	sess := filepath.Join(spill, SessionDirPrefix+"abc")
	if err := os.Mkdir(sess, 0o700); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-48 * time.Hour)
	files := []struct {
		path    string
		removed bool
	}{
		{filepath.Join(sess, "3.stdout.log"), true},
		{filepath.Join(sess, "12.job-stderr.log"), true},
		{filepath.Join(sess, "03.stdout.log"), false},
		{filepath.Join(sess, "3.a.b.log"), false},
		{filepath.Join(sess, "x3.stdout.log"), false},
		{filepath.Join(spill, "3.stdout.log"), false},
	}
	for _, f := range files {
		if err := os.WriteFile(f.path, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(f.path, old, old); err != nil {
			t.Fatal(err)
		}
	}
	if err := Sweep(spill, 24*time.Hour); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if _, err := os.Stat(f.path); os.IsNotExist(err) != f.removed {
			t.Errorf("%s: removed %v, want %v", f.path, os.IsNotExist(err), f.removed)
		}
	}
}
