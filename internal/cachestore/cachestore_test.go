package cachestore_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/shellgate/shellgate/internal/cachestore"
)

// labDir is a directory outside /tmp, removed after the test.
func labDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("/var/tmp", "cachestore-test-")
	if err != nil {
		d = t.TempDir()
	} else {
		t.Cleanup(func() { os.RemoveAll(d) })
	}
	return d
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// A project's directory holds its root's name, is the same for the same root
// and another for another root.
func TestOpen(t *testing.T) {
	lab := labDir(t)
	store := filepath.Join(lab, "store")
	p, err := cachestore.Open(store, "/work/a")
	must(t, err)
	defer p.Close()
	if p.Dir() != cachestore.DirFor(store, "/work/a") || cachestore.DirFor(store, "/work/a") == cachestore.DirFor(store, "/work/b") {
		t.Errorf("directory %s", p.Dir())
	}
	if b, err := os.ReadFile(filepath.Join(p.Dir(), "root")); err != nil || string(b) != "/work/a\n" {
		t.Errorf("root recorded: %q %v", b, err)
	}
	q, err := cachestore.Open(store, "/work/a") // another process's Gate on the same project
	must(t, err)
	must(t, q.Close())
}

// Sweep removes what no project needs and nothing else.
func TestSweep(t *testing.T) {
	lab := labDir(t)
	store := filepath.Join(lab, "store")
	live := filepath.Join(lab, "live")
	must(t, os.MkdirAll(live, 0o755))
	gone := filepath.Join(lab, "gone")
	made := func(root string) string {
		p, err := cachestore.Open(store, root)
		must(t, err)
		must(t, os.MkdirAll(filepath.Join(p.Dir(), "root%.npm", "work", "work"), 0o755))
		must(t, os.Chmod(filepath.Join(p.Dir(), "root%.npm", "work", "work"), 0)) // as overlayfs leaves it
		must(t, p.Close())
		return p.Dir()
	}
	kept := made(live)
	goneDir := made(gone)
	old := made(live + "/../live/.") // another name for a live root, unused for long
	must(t, os.Chtimes(old, time.Now().Add(-40*24*time.Hour), time.Now().Add(-40*24*time.Hour)))
	legacy := filepath.Join(store, "00112233aabbccdd")
	must(t, os.MkdirAll(filepath.Join(legacy, "root%.npm", "upper"), 0o700))
	heldGone := filepath.Join(lab, "held-gone")
	held, err := cachestore.Open(store, heldGone)
	must(t, err)
	defer held.Close()

	removed := cachestore.Sweep(context.Background(), store, cachestore.MaxUnused)
	slices.Sort(removed)
	want := []string{goneDir, old, legacy}
	slices.Sort(want)
	if !slices.Equal(removed, want) {
		t.Errorf("removed %v, want %v", removed, want)
	}
	for _, d := range want {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("%s is still there (%v)", d, err)
		}
	}
	for _, d := range []string{kept, held.Dir()} {
		if _, err := os.Stat(filepath.Join(d, "root")); err != nil {
			t.Errorf("%s was removed: %v", d, err)
		}
	}
	must(t, held.Close())
	if removed := cachestore.Sweep(context.Background(), store, cachestore.MaxUnused); !slices.Equal(removed, []string{held.Dir()}) {
		t.Errorf("once released, removed %v", removed)
	}
}

// One Sweep removes at most SweepBatch directories; the next goes on.
func TestSweepBatch(t *testing.T) {
	store := filepath.Join(labDir(t), "store")
	for i := range cachestore.SweepBatch + 3 {
		must(t, os.MkdirAll(filepath.Join(store, "legacy"+string(rune('a'+i))), 0o700))
	}
	if n := len(cachestore.Sweep(context.Background(), store, cachestore.MaxUnused)); n != cachestore.SweepBatch {
		t.Errorf("first sweep removed %d", n)
	}
	if n := len(cachestore.Sweep(context.Background(), store, cachestore.MaxUnused)); n != 3 {
		t.Errorf("second sweep removed %d", n)
	}
}

// SweepIfDue looks once a day, and again at once while a backlog is left.
func TestSweepIfDue(t *testing.T) {
	store := filepath.Join(labDir(t), "store")
	legacy := func(n int) {
		for i := range n {
			must(t, os.MkdirAll(filepath.Join(store, "legacy"+string(rune('a'+i))), 0o700))
		}
	}
	legacy(cachestore.SweepBatch + 1)
	if n := len(cachestore.SweepIfDue(context.Background(), store, cachestore.MaxUnused)); n != cachestore.SweepBatch {
		t.Fatalf("first look removed %d", n)
	}
	if n := len(cachestore.SweepIfDue(context.Background(), store, cachestore.MaxUnused)); n != 1 {
		t.Fatalf("the backlog's look removed %d", n)
	}
	legacy(1)
	if n := len(cachestore.SweepIfDue(context.Background(), store, cachestore.MaxUnused)); n != 0 {
		t.Errorf("a look within the day removed %d", n)
	}
	day := time.Now().Add(-cachestore.SweepEvery - time.Minute)
	must(t, os.Chtimes(filepath.Join(store, cachestore.StampFile), day, day))
	if n := len(cachestore.SweepIfDue(context.Background(), store, cachestore.MaxUnused)); n != 1 {
		t.Errorf("a look a day later removed %d", n)
	}
}

// A sweep stops once its context is done (its Gate closes): it removes
// nothing more and records no look. What a stopped or killed sweep left of
// a directory it had taken out of use goes at the next one.
func TestSweepStopped(t *testing.T) {
	store := filepath.Join(labDir(t), "store")
	legacy := filepath.Join(store, "00112233aabbccdd")
	must(t, os.MkdirAll(filepath.Join(legacy, "root%.npm", "upper"), 0o700))
	stopped, cancel := context.WithCancel(context.Background())
	cancel()
	if removed := cachestore.SweepIfDue(stopped, store, cachestore.MaxUnused); len(removed) != 0 || !exists(legacy) {
		t.Errorf("a stopped sweep removed %v", removed)
	}
	if exists(filepath.Join(store, cachestore.StampFile)) {
		t.Error("a stopped sweep recorded a look")
	}
	for i := range cachestore.SweepBatch { // a backlog: the rest still goes first
		must(t, os.MkdirAll(filepath.Join(store, "legacy"+string(rune('a'+i))), 0o700))
	}
	left := filepath.Join(store, "trash-8899aabbccddeeff-1")
	must(t, os.MkdirAll(filepath.Join(left, "root%.npm", "work", "work"), 0o755))
	must(t, os.WriteFile(filepath.Join(left, "root%.npm", "work", "file"), []byte("x"), 0o600))
	must(t, os.Chmod(filepath.Join(left, "root%.npm", "work", "work"), 0)) // as overlayfs leaves it
	if removed := cachestore.SweepIfDue(context.Background(), store, cachestore.MaxUnused); len(removed) != cachestore.SweepBatch || exists(left) {
		t.Errorf("the next sweep removed %d; the stopped one's rest there: %v", len(removed), exists(left))
	}
	if removed := cachestore.SweepIfDue(context.Background(), store, cachestore.MaxUnused); len(removed) != 1 {
		t.Errorf("the backlog's last sweep removed %v", removed)
	}
	if entries, _ := os.ReadDir(store); len(entries) != 1 { // the stamp
		t.Errorf("left in the store: %v", entries)
	}
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
