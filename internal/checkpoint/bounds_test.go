package checkpoint_test

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shellgate/shellgate/internal/lane"

	"github.com/shellgate/shellgate/internal/checkpoint"
	"github.com/shellgate/shellgate/internal/checkpoint/checkpointtest"
)

// TestSizeBoundAcrossProcesses: a store used only by one-shot processes
// (`shellgate run`, the hook's `shellgate exec`: one Open and one command
// each) is held to MaxSize too, and git packs it, not only a store one long
// session fills.
func TestSizeBoundAcrossProcesses(t *testing.T) {
	lane.Live(t)
	lab, root := checkpointtest.Project(t)
	const commands = 70 // past the size check every 64 checkpoints
	for i := range commands {
		s, err := checkpoint.Open(checkpoint.Options{Root: root, Dir: filepath.Join(lab, "store"), MaxSize: 1})
		if err != nil {
			t.Fatal(err)
		}
		id := snapshot(t, s, "edit")
		checkpointtest.Sh(t, root, "echo "+strconv.Itoa(i)+" >> notes.txt")
		if _, err := s.Finish(id); err != nil {
			t.Fatal(err)
		}
		s.Close()
	}
	s := open(t, root, filepath.Join(lab, "store"))
	defer s.Close()
	recs, err := s.Records()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) >= commands/2 {
		t.Errorf("%d records kept of %d, with MaxSize 1 byte: the size bound was never looked at", len(recs), commands)
	}
	loose := checkpointtest.Sh(t, lab, "git --git-dir '"+filepath.Join(s.Dir(), "git")+"' count-objects -v | sed -n 's/^count: //p'")
	if n, _ := strconv.Atoi(strings.TrimSpace(loose)); n > 100 {
		t.Errorf("%d loose objects: the store past its size was not packed", n)
	}
}

// TestPruneByAge: records older than MaxAge go at the next checkpoint; the
// oldest one left still restores.
func TestPruneByAge(t *testing.T) {
	lane.Live(t)
	lab, root := checkpointtest.Project(t)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s, err := checkpoint.Open(checkpoint.Options{Root: root, Dir: filepath.Join(lab, "store"), MaxAge: 24 * time.Hour,
		Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	states := map[int]string{}
	for i, step := range []time.Duration{0, time.Hour, 20 * time.Hour, 10 * time.Hour} {
		now = now.Add(step)
		states[i+1] = checkpointtest.State(t, root)
		id := snapshot(t, s, "edit")
		checkpointtest.Sh(t, root, "echo "+strconv.Itoa(i)+" >> notes.txt")
		if _, err := s.Finish(id); err != nil {
			t.Fatal(err)
		}
	}
	recs, err := s.Records()
	if err != nil {
		t.Fatal(err)
	}
	// At 31 h, the commands of 0 h and 1 h are past a day; those of 21 h and 31 h stay.
	if len(recs) != 2 || recs[0].ID != 3 {
		t.Fatalf("records %+v: want 3 and 4", recs)
	}
	restore(t, s, 3, states[3])
}

// TestIgnoredKept: of what .gitignore ignores, a checkpoint keeps the files
// up to IgnoredMaxSize and those KeepIgnored names (.env.* by default)
// whatever their size, and the others up to LinkMaxSize by a hard link; undo brings those back and leaves the rest — the
// ignored bulk — as it finds it, neither restored nor removed.
func TestIgnoredKept(t *testing.T) {
	lane.Live(t)
	cases := []struct {
		name     string
		o        checkpoint.Options
		restored []string // deleted by the command, back after undo
		lost     []string // deleted by the command, still gone after undo
	}{
		// (the bigger ones by a hard link: links_linux_test.go)
		{"defaults", checkpoint.Options{},
			[]string{"small.log", ".env.local", "big.bin", "my.key"}, nil},
		{"no links", checkpoint.Options{LinkMaxSize: -1},
			[]string{"small.log", ".env.local"}, []string{"big.bin", "my.key"}},
		{"links up to less", checkpoint.Options{LinkMaxSize: 50 << 10},
			[]string{"small.log", ".env.local"}, []string{"big.bin", "my.key"}},
		{"larger threshold", checkpoint.Options{IgnoredMaxSize: 200 << 10, LinkMaxSize: -1},
			[]string{"small.log", ".env.local", "big.bin", "my.key"}, nil},
		{"none by size", checkpoint.Options{IgnoredMaxSize: -1, LinkMaxSize: -1},
			[]string{".env.local"}, []string{"small.log", "big.bin", "my.key"}},
		{"own exceptions", checkpoint.Options{KeepIgnored: []string{"*.key"}, LinkMaxSize: -1},
			[]string{"small.log", "my.key"}, []string{".env.local", "big.bin"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if runtime.GOOS == "windows" && c.o.LinkMaxSize >= 0 {
				t.Skip("no links kept on Windows")
			}
			lab, root := checkpointtest.Project(t)
			checkpointtest.Sh(t, root, `printf '*.bin\n*.key\n.env.local\n' >> .gitignore && git add .gitignore && git commit -qm ignore
printf 'small\n' > small.log && for f in big.bin my.key .env.local; do head -c 102400 /dev/zero > $f; done
printf 'kept as is\n' > node_modules/dep/new.js`)
			c.o.Root, c.o.Dir = root, filepath.Join(lab, "store")
			s, err := checkpoint.Open(c.o)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			id := snapshot(t, s, "rm")
			checkpointtest.Sh(t, root, "rm small.log big.bin my.key .env.local && echo changed > node_modules/dep/index.js")
			if _, err := s.Finish(id); err != nil {
				t.Fatal(err)
			}
			if _, _, err := s.Restore(id); err != nil {
				t.Fatal(err)
			}
			for _, f := range c.restored {
				if _, err := os.Stat(filepath.Join(root, f)); err != nil {
					t.Errorf("%s was not restored: %v", f, err)
				}
			}
			for _, f := range c.lost {
				if _, err := os.Stat(filepath.Join(root, f)); err == nil {
					t.Errorf("%s was restored: the checkpoint kept it", f)
				}
			}
			for f, want := range map[string]string{"node_modules/dep/index.js": "changed\n", "node_modules/dep/new.js": "kept as is\n"} {
				if b, _ := os.ReadFile(filepath.Join(root, f)); string(b) != want {
					t.Errorf("undo touched the ignored bulk: %s is %q", f, b)
				}
			}
		})
	}
}

// TestUndoLeavesBulkAGitignoreRewriteShowed: a command that rewrites
// .gitignore (`printf 'dist/\n' > .gitignore`, > for >>) makes the user's
// ignored bulk part of the checkpoint after it; undo to before it puts
// .gitignore back and must leave that bulk where it is, as it leaves all
// ignored bulk — not delete it as files the command made. What the command
// made that the old rules do not ignore still goes.
func TestUndoLeavesBulkAGitignoreRewriteShowed(t *testing.T) {
	lane.Live(t)
	lab, root := checkpointtest.Project(t)
	checkpointtest.Sh(t, root, `set -e
printf '*.db\ndata/\n' >> .gitignore && mkdir -p data/raw sub && printf 'deep/\n' > sub/.gitignore && git add -A && git commit -qm ignore
head -c 102400 /dev/urandom > big.db && head -c 102400 /dev/urandom > data/raw/set.csv
head -c 102400 /dev/urandom > node_modules/dep/big.js && mkdir -p sub/deep && head -c 102400 /dev/urandom > sub/deep/x.bin
md5sum big.db data/raw/set.csv node_modules/dep/big.js sub/deep/x.bin > ../sums`)
	s := open(t, root, filepath.Join(lab, "store"))
	defer s.Close()
	id := snapshot(t, s, "rewrite .gitignore")
	checkpointtest.Sh(t, root, `printf 'dist/\n' > .gitignore && rm sub/.gitignore && echo made > made.txt`)
	if _, err := s.Finish(id); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Restore(id); err != nil {
		t.Fatal(err)
	}
	checkpointtest.Sh(t, root, `md5sum -c --quiet ../sums && grep -q '^data/$' .gitignore && test -f sub/.gitignore && ! test -e made.txt`)
}

// A command that adds a directory to .gitignore did not delete its files:
// the checkpoint after it leaves them out as ignored bulk, and what the
// command changed says they are now ignored, not deleted — the model reads
// "deleted 2 files" otherwise. A file really removed by the same command is
// still deleted.
func TestChangesSayNowIgnoredNotDeleted(t *testing.T) {
	lane.Live(t)
	lab, root := checkpointtest.Project(t)
	checkpointtest.Sh(t, root, `set -e
mkdir -p notes && echo a > notes/a.txt && echo b > notes/b.txt && echo gone > gone.txt && git add -A && git commit -qm notes`)
	s := open(t, root, filepath.Join(lab, "store"))
	defer s.Close()
	id := snapshot(t, s, "ignore notes")
	checkpointtest.Sh(t, root, `echo notes/ >> .gitignore && rm gone.txt`)
	sum, err := s.Finish(id)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Ignored != 2 || sum.Deleted != 1 || sum.Modified != 1 {
		t.Errorf("ignored %d, deleted %d, modified %d; want 2, 1, 1: %+v", sum.Ignored, sum.Deleted, sum.Modified, sum.Changes)
	}
	if text := sum.Text(); !strings.Contains(text, "deleted 1 file") || !strings.Contains(text, "2 files now ignored (not deleted") {
		t.Errorf("Text = %q", text)
	}
	again, err := s.Changes(id)
	if err != nil {
		t.Fatal(err)
	}
	if again.Ignored != 2 || again.Deleted != 1 {
		t.Errorf("Changes(%d): ignored %d, deleted %d; want 2, 1", id, again.Ignored, again.Deleted)
	}
	// Without a change of the rules a removal is a deletion, whatever the
	// rules say now.
	id = snapshot(t, s, "rm")
	checkpointtest.Sh(t, root, `rm README.md`)
	if sum, err = s.Finish(id); err != nil || sum.Deleted != 1 || sum.Ignored != 0 {
		t.Errorf("rm README.md: %+v, %v", sum, err)
	}
}

// TestSizeBoundKeepsDestroyedWork: the size bound drops the checkpoints of
// commands that only rewrote their own output before the one taken before a
// command that destroyed the user's work — the one undo is for — however
// much was written after it: a few big writes used to push it out with the
// oldest quarter of the records. The store still gets within MaxSize, and
// what was dropped says why.
func TestSizeBoundKeepsDestroyedWork(t *testing.T) {
	lane.Live(t)
	for _, tc := range []struct{ name, destroy, then string }{
		{"rm then rewrites", "rm -rf src docs notes.txt", "head -c 100000 /dev/urandom > out.bin"},
		{"git clean then new files", "git checkout -- . && git clean -fdq", "rm -f out-*.bin; head -c 100000 /dev/urandom > out-$RANDOM.bin"},
		{"hand edit, then rm", "", "head -c 100000 /dev/urandom > out.bin"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lab, root := checkpointtest.Project(t)
			const maxSize = 2 << 20
			s, err := checkpoint.Open(checkpoint.Options{Root: root, Dir: filepath.Join(lab, "store"), MaxSize: maxSize})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			run := func(script string) int {
				id := snapshot(t, s, script)
				checkpointtest.Sh(t, root, script)
				if _, err := s.Finish(id); err != nil {
					t.Fatal(err)
				}
				return id
			}
			destroy := tc.destroy
			if destroy == "" {
				// the user's own edit, made between two commands' output,
				// then removed by a command
				run(tc.then)
				checkpointtest.Sh(t, root, "printf 'by hand\n' > mine.txt")
				destroy = "rm -f mine.txt"
			}
			want := checkpointtest.State(t, root)
			lost := run(destroy)
			for range 70 { // past the 64th command, where the size is looked at
				run(tc.then)
			}
			if err := s.BoundForTest(); err != nil { // as the 128th command would
				t.Fatal(err)
			}
			recs, err := s.Records()
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) > 60 {
				t.Fatalf("%d records kept: the size bound never dropped any", len(recs))
			}
			if size, err := s.Size(); err != nil || size > maxSize {
				t.Errorf("store %d bytes (%v), over MaxSize %d", size, err, maxSize)
			}
			if _, err := s.Record(lost); err != nil {
				t.Fatalf("the checkpoint before %q was dropped by the size bound: %v", destroy, err)
			}
			// a churned command's record went, and its error says why
			_, err = s.Record(lost + 2)
			var nre *checkpoint.NoRecordError
			if !errors.As(err, &nre) || !strings.Contains(err.Error(), "to hold the store to max_size (2.0 MiB)") {
				t.Errorf("undo of a dropped command: %v, want it to say max_size dropped it", err)
			}
			restore(t, s, lost, want)
		})
	}
}

// TestCountBoundKeepsDestroyedWork: past MaxCount the records of commands
// that only wrote their own output go before the one taken before a command
// that destroyed the user's work: a loop of cheap writing commands (1 000 of
// them take ~20 s) used to push it out, oldest first. The age bound, the
// user's word on how long the store keeps what the root held, still drops
// it by age.
func TestCountBoundKeepsDestroyedWork(t *testing.T) {
	lane.Live(t)
	const maxCount = 24
	for _, tc := range []struct {
		name, then string
		age        time.Duration // time passing at each command
		kept       bool          // the record of the rm is still there at the end
		why        string        // what a churned command's dropped record says
	}{
		{"count: rewrites", "echo $RANDOM > out.txt", 0, true, "max_count (24)"},
		{"count: new files", "echo x > out-$RANDOM.txt", 0, true, "max_count (24)"},
		{"age drops it all the same", "echo $RANDOM > out.txt", time.Hour, false, "max_age (24h0m0s)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lab, root := checkpointtest.Project(t)
			now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			s, err := checkpoint.Open(checkpoint.Options{Root: root, Dir: filepath.Join(lab, "store"),
				MaxCount: maxCount, MaxAge: 24 * time.Hour, Now: func() time.Time { return now }})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			run := func(script string) int {
				now = now.Add(tc.age)
				id := snapshot(t, s, script)
				checkpointtest.Sh(t, root, script)
				if _, err := s.Finish(id); err != nil {
					t.Fatal(err)
				}
				return id
			}
			run(tc.then)
			want := checkpointtest.State(t, root)
			lost := run("rm -rf src docs notes.txt")
			for range 2 * maxCount {
				run(tc.then)
			}
			recs, err := s.Records()
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) > maxCount {
				t.Errorf("%d records kept, over MaxCount %d", len(recs), maxCount)
			}
			_, err = s.Record(lost)
			if !tc.kept {
				if err == nil {
					t.Errorf("the record of the rm outlived MaxAge")
				}
			} else if err != nil {
				t.Fatalf("the checkpoint before the rm was dropped by the count bound: %v", err)
			}
			_, err = s.Record(lost + 1)
			var nre *checkpoint.NoRecordError
			if !errors.As(err, &nre) || !strings.Contains(err.Error(), tc.why) {
				t.Errorf("undo of a dropped command: %v, want it to say %s dropped it", err, tc.why)
			}
			if tc.kept {
				restore(t, s, lost, want)
			}
		})
	}
}

// TestJobChurnKeepsDestroyedWork: a job that rewrites a file between
// commands, each command overwriting it again, made every command's record
// look like one that destroyed work (no command made the version it
// overwrote); the count bound then dropped them oldest first, the record
// of the `rm -rf` with them. What is written between commands while a job
// runs now ranks below what was there before (it may be the job's, or the
// user's then: the checkpoints cannot tell). Once the job has ended, what
// is written between commands is the user's, and ranks as such.
func TestJobChurnKeepsDestroyedWork(t *testing.T) {
	lane.Live(t)
	const maxCount = 24
	for _, tc := range []struct {
		name    string
		jobEnds bool // the job ends before the churn: the writes are the user's
		kept    bool
	}{
		{"while a job runs", false, true},
		{"with no job running", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lab, root := checkpointtest.Project(t)
			s, err := checkpoint.Open(checkpoint.Options{Root: root, Dir: filepath.Join(lab, "store"), MaxCount: maxCount})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			run := func(script string) int {
				id := snapshot(t, s, script)
				checkpointtest.Sh(t, root, script)
				if _, err := s.Finish(id); err != nil {
					t.Fatal(err)
				}
				return id
			}
			job, err := s.Snapshot("job", "./watch --log log.txt", "")
			if err != nil {
				t.Fatal(err)
			}
			if tc.jobEnds {
				if _, err := s.Finish(job); err != nil {
					t.Fatal(err)
				}
			}
			want := checkpointtest.State(t, root)
			lost := run("rm -rf src docs notes.txt")
			for range 2 * maxCount {
				checkpointtest.Sh(t, root, "echo $RANDOM$RANDOM > log.txt") // between commands
				run("echo $RANDOM$RANDOM > log.txt")
			}
			_, err = s.Record(lost)
			if tc.kept && err != nil {
				t.Fatalf("the checkpoint before the rm was dropped by the count bound: %v", err)
			}
			if !tc.kept && err == nil {
				t.Fatalf("the user's writes between commands ranked below what a job writes")
			}
			if tc.kept {
				restore(t, s, lost, want)
			}
		})
	}
}
