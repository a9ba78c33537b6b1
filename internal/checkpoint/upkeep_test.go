package checkpoint

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/shellgate/shellgate/internal/checkpoint/checkpointtest"
	"github.com/shellgate/shellgate/internal/lane"
)

// TestDeferredUpkeep: under DeferUpkeep the checkpoints leave the bounds'
// upkeep alone — the records past MaxCount stay, the 64th command takes no
// look at the store's size (MaxSize is 1 byte: the look would shrink it),
// the scan cache file is not written — and Upkeep then does it all. A
// checkpoint asked for while Upkeep looks at the size (held there) is taken
// without waiting for it.
func TestDeferredUpkeep(t *testing.T) {
	lane.Live(t)
	lab, root := checkpointtest.Project(t)
	s, err := Open(Options{Root: root, Dir: filepath.Join(lab, "store"), MaxCount: 50, MaxSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.DeferUpkeep()
	command := func(i int) {
		t.Helper()
		id, err := s.Snapshot("run", "edit "+strconv.Itoa(i), "")
		if err != nil {
			t.Fatal(err)
		}
		checkpointtest.Sh(t, root, "echo "+strconv.Itoa(i)+" >> notes.txt")
		if _, err := s.Finish(id); err != nil {
			t.Fatal(err)
		}
	}
	for i := range sizeEvery {
		command(i)
	}
	if recs, _ := s.Records(); len(recs) != sizeEvery {
		t.Fatalf("%d records after %d commands without Upkeep: pruned in the commands' path", len(recs), sizeEvery)
	}
	if _, err := os.Stat(s.scanCachePath()); err == nil {
		t.Fatal("the scan cache file was written in a command's path")
	}
	if d := s.due; !d.records || !d.size || !d.cache {
		t.Fatalf("due %+v: all three should be", d)
	}

	// Upkeep held between its two locked steps: a command goes through.
	held, release := make(chan struct{}), make(chan struct{})
	upkeepHook = func(step string) {
		if step == "looked" {
			close(held)
			<-release
		}
	}
	defer func() { upkeepHook = func(string) {} }()
	done := make(chan error, 1)
	go func() { done <- s.Upkeep() }()
	select {
	case <-held:
	case err := <-done:
		t.Fatalf("Upkeep ended (%v) without looking at the size", err)
	}
	if recs, _ := s.Records(); len(recs) != 50-50/pruneSlack {
		t.Errorf("%d records once Upkeep pruned them, MaxCount 50: want %d", len(recs), 50-50/pruneSlack)
	}
	command(sizeEvery) // would wait for the lock if Upkeep held it
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	recs, _ := s.Records()
	if len(recs) >= 50 {
		t.Errorf("%d records after Upkeep, MaxSize 1 byte: the size bound was not applied", len(recs))
	}
	if _, err := os.Stat(s.scanCachePath()); err != nil {
		t.Errorf("no scan cache file after Upkeep: %v", err)
	}
	if !s.due.records || s.due.size {
		t.Errorf("due %+v after Upkeep; want the records of the command taken meanwhile, not the size", s.due)
	}
	// and the store restores as before
	if _, _, err := s.Restore(recs[len(recs)-1].ID); err != nil {
		t.Fatal(err)
	}
}
