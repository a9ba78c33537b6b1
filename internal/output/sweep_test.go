package output

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/shellgate/shellgate/internal/lane"
)

func TestSweep(t *testing.T) {
	lane.Live(t)
	t.Parallel()
	dir := t.TempDir()
	old := time.Now().Add(-48 * time.Hour)
	const id = "0123456789abcdef0123456789abcdef"
	files := []struct {
		name    string
		old     bool
		removed bool
	}{
		{id + ".stdout.log", true, true},
		{id + ".stderr.log", false, false},
		{"fedcba9876543210fedcba9876543210.output.log", true, true},
		{"notes.txt", true, false},
		{id + ".stdout.txt", true, false},
		{"0123456789ABCDEF0123456789ABCDEF.stdout.log", true, false}, // we write lowercase hex
		{"0123456789abcdef.stdout.log", true, false},                 // id too short
		{id + "..log", true, false},
		{id + ".a.b.log", true, false},
	}
	for _, f := range files {
		path := filepath.Join(dir, f.name)
		if err := os.WriteFile(path, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if f.old {
			if err := os.Chtimes(path, old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A directory and a symlink with our naming pattern are not ours to remove.
	if err := os.Mkdir(filepath.Join(dir, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.dir.log"), 0o700); err != nil {
		t.Fatal(err)
	}
	link := "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb.link.log"
	if err := os.Symlink(filepath.Join(dir, "notes.txt"), filepath.Join(dir, link)); err != nil && !isWindows {
		t.Fatal(err)
	}

	if err := Sweep(dir, 24*time.Hour); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		_, err := os.Stat(filepath.Join(dir, f.name))
		if gone := os.IsNotExist(err); gone != f.removed {
			t.Errorf("%s: removed = %v, want %v (err %v)", f.name, gone, f.removed, err)
		}
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Contains(names, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.dir.log") {
		t.Errorf("Sweep removed a directory: %v", names)
	}
	if !isWindows && !slices.Contains(names, link) {
		t.Errorf("Sweep removed a symlink: %v", names)
	}
}

// TestSweepCaptureFiles sweeps real spill files: fresh ones stay, old ones go.
func TestSweepCaptureFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	spill := func() string {
		c := New(Options{SpillDir: dir, Name: "stdout"})
		c.Write([]byte("\x00\x01binary"))
		return c.Close().SpillPath
	}
	fresh, stale := spill(), spill()
	old := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	if err := Sweep(dir, time.Hour); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("fresh spill file was swept: %v", err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale spill file was kept: %v", err)
	}
}

func TestSweepErrors(t *testing.T) {
	t.Parallel()
	if err := Sweep(filepath.Join(t.TempDir(), "never-created"), time.Hour); err != nil {
		t.Errorf("Sweep of a missing dir = %v, want nil", err)
	}
	if err := Sweep(t.TempDir(), -time.Second); err == nil {
		t.Error("Sweep with negative retention succeeded")
	}
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o600)
	if err := Sweep(file, time.Hour); err == nil {
		t.Error("Sweep of a regular file succeeded")
	}
}
