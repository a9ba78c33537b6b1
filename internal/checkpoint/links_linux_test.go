package checkpoint_test

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/shellgate/shellgate/internal/checkpoint"
	"github.com/shellgate/shellgate/internal/checkpoint/checkpointtest"
	"github.com/shellgate/shellgate/internal/lane"
)

// bigIgnored puts data.log, 300 KB of random bytes at mode 0640, in root:
// ignored (*.log), over ignored_max_size; it returns its content.
func bigIgnored(t *testing.T, root string) []byte {
	t.Helper()
	checkpointtest.Sh(t, root, "head -c 300000 /dev/urandom > data.log && chmod 640 data.log")
	b, err := os.ReadFile(filepath.Join(root, "data.log"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestUndoLinkedIgnored: an ignored file over ignored_max_size (hand-made
// data a .gitignore names) is kept by a hard link in the store, so undo
// brings it back after an rm or a rename over it, byte for byte with its
// mode; written in place (without the sandbox, the one file both names
// share), undo says it cannot, and leaves it.
func TestUndoLinkedIgnored(t *testing.T) {
	lane.Live(t)
	cases := []struct {
		name, cmd string
		change    string // the command's change to data.log
		left      string // what undo says of it, if it leaves it
	}{
		{"rm", "rm data.log", "deleted data.log", ""},
		{"rename-over", "echo new > x.tmp && mv x.tmp data.log", "modified data.log", ""},
		// What the sandbox's copy-up does before a write: a copy put in
		// place of the name, then written.
		{"copy-up-write", "cp -p data.log c.tmp && echo more >> c.tmp && mv c.tmp data.log", "modified data.log", ""},
		{"rm-dir", "mkdir -p d && mv data.log d/ && rm -r d", "deleted data.log", ""},
		{"in-place", "echo more >> data.log", "modified data.log (written in place: undo cannot put back what it held)", "written in place since"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lab, root := checkpointtest.Project(t)
			want := bigIgnored(t, root)
			s := open(t, root, filepath.Join(lab, "store"))
			defer s.Close()
			id := snapshot(t, s, c.cmd)
			checkpointtest.Sh(t, root, c.cmd)
			sum, err := s.Finish(id)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(sum.Text()+" "+changeTexts(sum), c.change) {
				t.Errorf("changes %q, want %q", changeTexts(sum), c.change)
			}
			if inPlace := strings.Contains(changeTexts(sum), "in place"); inPlace != (c.left != "") {
				t.Errorf("changes %q: said written in place: %v", changeTexts(sum), inPlace)
			}
			_, usum, err := s.Restore(id)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(filepath.Join(root, "data.log"))
			if c.left != "" {
				if len(usum.NotRestored) != 1 || usum.NotRestored[0].Path != "data.log" || !strings.Contains(usum.NotRestored[0].Why, c.left) {
					t.Fatalf("not restored %+v, want data.log: %s", usum.NotRestored, c.left)
				}
				if !bytes.Equal(got, append(want, "more\n"...)) {
					t.Errorf("data.log is not left as the command made it")
				}
				return
			}
			if len(usum.NotRestored) != 0 {
				t.Errorf("not restored %+v", usum.NotRestored)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("data.log not restored (%d bytes, want %d)", len(got), len(want))
			}
			if fi, err := os.Stat(filepath.Join(root, "data.log")); err != nil || fi.Mode().Perm() != 0o640 {
				t.Errorf("data.log's mode after undo: %v %v, want 0640", fi.Mode(), err)
			}
			// Undo again undoes the undo: what the command made comes back
			// from its own link. (A file it removed stays: undo removes no
			// ignored file made since a checkpoint, as before.)
			if c.name == "rm" || c.name == "rm-dir" {
				return
			}
			r, _ := s.Records()
			if _, _, err := s.Restore(r[len(r)-1].ID); err != nil {
				t.Fatal(err)
			}
			if again, _ := os.ReadFile(filepath.Join(root, "data.log")); bytes.Equal(again, want) {
				t.Errorf("undo of the undo left data.log as before the command")
			}
		})
	}
}

func changeTexts(sum checkpoint.Summary) string {
	var out []string
	for _, c := range sum.Changes {
		out = append(out, c.Text())
	}
	return strings.Join(out, ", ")
}

// TestLinkedCheap: a linked file is neither read nor copied: the
// checkpoint holds a stub, the store's link is the root's very file, and
// a checkpoint of an unchanged root makes no new link.
func TestLinkedCheap(t *testing.T) {
	lane.Live(t)
	lab, root := checkpointtest.Project(t)
	bigIgnored(t, root)
	s := open(t, root, filepath.Join(lab, "store"))
	defer s.Close()
	id := snapshot(t, s, "true")
	r, _ := s.Record(id)
	if n := blobSize(t, s, r.Before, "work/data.log"); n > 1024 {
		t.Errorf("the checkpoint holds %d bytes for data.log", n)
	}
	links, _ := os.ReadDir(filepath.Join(s.Dir(), "links"))
	fi, _ := os.Stat(filepath.Join(root, "data.log"))
	if len(links) != 1 || links[0].Name() != strings.TrimSpace(checkpointtest.Sh(t, root, "stat -c %i data.log")) {
		t.Fatalf("links %v, want one named by data.log's inode", links)
	}
	if fi.Sys().(*syscall.Stat_t).Nlink != 2 {
		t.Errorf("data.log has %d names, want 2 (the root's, the store's)", fi.Sys().(*syscall.Stat_t).Nlink)
	}
	// Unchanged: the next checkpoint (another process's, from the scan
	// cache) is the same tree.
	if _, err := s.Finish(id); err != nil {
		t.Fatal(err)
	}
	s.Close()
	other := open(t, root, filepath.Join(lab, "store"))
	defer other.Close()
	id2 := snapshot(t, other, "true")
	r2, _ := other.Record(id2)
	if r2.Before != r.Before {
		t.Errorf("an unchanged root checkpoints as another tree")
	}
}

// TestLinkedPrune: a link goes with the last checkpoint listing it, and the
// store counts its blocks once the root no longer has the file.
func TestLinkedPrune(t *testing.T) {
	lane.Live(t)
	lab, root := checkpointtest.Project(t)
	bigIgnored(t, root)
	s, err := checkpoint.Open(checkpoint.Options{Root: root, Dir: filepath.Join(lab, "store"), MaxCount: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	links := func() int {
		ents, _ := os.ReadDir(filepath.Join(s.Dir(), "links"))
		return len(ents)
	}
	run := func(cmd string) {
		id := snapshot(t, s, cmd)
		checkpointtest.Sh(t, root, cmd)
		if _, err := s.Finish(id); err != nil {
			t.Fatal(err)
		}
	}
	run("true")
	held, _ := s.Size()
	run("rm data.log")
	gone, _ := s.Size()
	if links() != 1 {
		t.Fatalf("%d links after rm, want 1", links())
	}
	if gone-held < 290000 {
		t.Errorf("the store's size grew by %d bytes once the root's name went, want the file's 300 KB", gone-held)
	}
	run("echo a > README.md")
	run("echo b > README.md")
	if links() != 0 {
		t.Errorf("%d links once no checkpoint lists the file, want 0", links())
	}
	if after, _ := s.Size(); after >= gone {
		t.Errorf("the store's size %d after the link went, was %d", after, gone)
	}
}

// TestLinkedOtherFileSystem: where the root and the store are on different
// file systems no link can be made: the file is recorded as not kept, and
// changes and undo say why.
func TestLinkedOtherFileSystem(t *testing.T) {
	lane.Live(t)
	lab, root := checkpointtest.Project(t)
	store, err := os.MkdirTemp("/dev/shm", "shellgate-cp-store-")
	if err != nil {
		t.Skip("no /dev/shm")
	}
	t.Cleanup(func() { os.RemoveAll(store) })
	var a, b syscall.Stat_t
	if syscall.Stat(store, &a) != nil || syscall.Stat(lab, &b) != nil || a.Dev == b.Dev {
		t.Skip("/dev/shm is on the lab's file system")
	}
	bigIgnored(t, root)
	s := open(t, root, store)
	defer s.Close()
	id := snapshot(t, s, "rm data.log")
	checkpointtest.Sh(t, root, "rm data.log")
	sum, err := s.Finish(id)
	if err != nil {
		t.Fatal(err)
	}
	if got := changeTexts(sum); !strings.Contains(got, "deleted data.log (not kept, 293 KiB: ignored, and no hard link") {
		t.Errorf("changes %q, want data.log deleted, not kept and why", got)
	}
	_, usum, err := s.Restore(id)
	if err != nil {
		t.Fatal(err)
	}
	if len(usum.NotRestored) != 1 || !strings.Contains(usum.NotRestored[0].Why, "no hard link") || !strings.Contains(usum.NotRestored[0].Why, "cannot be brought back") {
		t.Errorf("not restored %+v, want data.log and why", usum.NotRestored)
	}
}

// TestLinkedShed: the files only the store's links hold take at most half
// of max_size, the oldest versions going first, not the checkpoints; undo
// to a checkpoint whose link went says so.
func TestLinkedShed(t *testing.T) {
	lane.Live(t)
	lab, root := checkpointtest.Project(t)
	bigIgnored(t, root)
	s, err := checkpoint.Open(checkpoint.Options{Root: root, Dir: filepath.Join(lab, "store"), MaxSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var ids []int
	var versions [][]byte
	for range 4 { // a database rewritten at each command
		b, _ := os.ReadFile(filepath.Join(root, "data.log"))
		versions = append(versions, b)
		id := snapshot(t, s, "rewrite")
		checkpointtest.Sh(t, root, "head -c 300000 /dev/urandom > new.tmp && mv new.tmp data.log")
		if _, err := s.Finish(id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := s.BoundForTest(); err != nil {
		t.Fatal(err)
	}
	if recs, _ := s.Records(); len(recs) != len(ids) {
		t.Errorf("%d records after the bound, want all %d: the links went, not the checkpoints", len(recs), len(ids))
	}
	links, _ := os.ReadDir(filepath.Join(s.Dir(), "links"))
	if len(links) != 2 { // the newest old version, and the root's own
		t.Errorf("%d links after the bound, want 2", len(links))
	}
	_, sum, err := s.Restore(ids[3])
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(root, "data.log")); !bytes.Equal(got, versions[3]) || len(sum.NotRestored) != 0 {
		t.Errorf("undo of the last rewrite: not restored %+v", sum.NotRestored)
	}
	_, sum, err = s.Restore(ids[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.NotRestored) != 1 || !strings.Contains(sum.NotRestored[0].Why, "link in the store is gone") {
		t.Errorf("undo of the first rewrite, whose link went: not restored %+v", sum.NotRestored)
	}
}

// Two names the root had for one big ignored file (a hard link of the
// user's) come back as one file after undo, whether the command removed
// both or one (the other still that file), with their content and mode.
func TestUndoLinkedNamesStayOneFile(t *testing.T) {
	lane.Live(t)
	for _, cmd := range []string{"rm data.log alias.log", "rm alias.log", "mv data.log gone.tmp && rm gone.tmp alias.log"} {
		t.Run(cmd, func(t *testing.T) {
			lab, root := checkpointtest.Project(t)
			want := bigIgnored(t, root)
			checkpointtest.Sh(t, root, "ln data.log alias.log")
			s := open(t, root, filepath.Join(lab, "store"))
			defer s.Close()
			id := snapshot(t, s, cmd)
			checkpointtest.Sh(t, root, cmd)
			if _, err := s.Finish(id); err != nil {
				t.Fatal(err)
			}
			_, usum, err := s.Restore(id)
			if err != nil || len(usum.NotRestored) != 0 {
				t.Fatalf("undo: %v, not restored %+v", err, usum.NotRestored)
			}
			a, errA := os.Stat(filepath.Join(root, "data.log"))
			b, errB := os.Stat(filepath.Join(root, "alias.log"))
			if errA != nil || errB != nil {
				t.Fatalf("after undo: %v %v", errA, errB)
			}
			if !os.SameFile(a, b) {
				t.Errorf("data.log and alias.log came back as two files")
			}
			for _, fi := range []os.FileInfo{a, b} {
				got, _ := os.ReadFile(filepath.Join(root, fi.Name()))
				if !bytes.Equal(got, want) || fi.Mode().Perm() != 0o640 {
					t.Errorf("%s after undo: %d bytes (want %d), mode %v", fi.Name(), len(got), len(want), fi.Mode())
				}
			}
		})
	}
}

// A big ignored file a command made goes with undo, as a small one does
// (the undo's own checkpoint keeps it, by a link: undoing the undo brings
// it back); one over ignored_link_max_size, which no checkpoint keeps, is
// left.
func TestUndoRemovesLinkedMadeSince(t *testing.T) {
	lane.Live(t)
	tests := []struct {
		name    string
		size    int
		linkMax int64
		gone    bool
	}{
		{"small", 1000, 0, true},
		{"big", 300000, 0, true},
		{"over-link-max", 300000, 200000, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lab, root := checkpointtest.Project(t)
			s, err := checkpoint.Open(checkpoint.Options{Root: root, Dir: filepath.Join(lab, "store"), LinkMaxSize: tt.linkMax})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			cmd := fmt.Sprintf("head -c %d /dev/urandom > made.log", tt.size)
			id := snapshot(t, s, cmd)
			checkpointtest.Sh(t, root, cmd)
			made, _ := os.ReadFile(filepath.Join(root, "made.log"))
			if _, err := s.Finish(id); err != nil {
				t.Fatal(err)
			}
			undo, usum, err := s.Restore(id)
			if err != nil {
				t.Fatal(err)
			}
			_, err = os.Lstat(filepath.Join(root, "made.log"))
			if gone := errors.Is(err, fs.ErrNotExist); gone != tt.gone {
				t.Fatalf("made.log gone after undo: %v, want %v (undo said %q, not restored %+v)", gone, tt.gone, changeTexts(usum), usum.NotRestored)
			}
			if !tt.gone {
				return
			}
			if !strings.Contains(changeTexts(usum), "deleted made.log") {
				t.Errorf("undo said %q, want deleted made.log", changeTexts(usum))
			}
			if _, _, err := s.Restore(undo); err != nil {
				t.Fatal(err)
			}
			if got, _ := os.ReadFile(filepath.Join(root, "made.log")); !bytes.Equal(got, made) {
				t.Errorf("undo of the undo: made.log %d bytes, want %d", len(got), len(made))
			}
		})
	}
}

// A big ignored file whose mode changed since the checkpoint (chmod through
// a name outside the root, which the file also has) comes back as a copy
// with the checkpoint's mode: undo changes nothing of the file outside.
func TestUndoLinkedModeChangedOutside(t *testing.T) {
	lane.Live(t)
	lab, root := checkpointtest.Project(t)
	want := bigIgnored(t, root)
	outside := filepath.Join(lab, "outside.log")
	if err := os.Link(filepath.Join(root, "data.log"), outside); err != nil {
		t.Fatal(err)
	}
	s := open(t, root, filepath.Join(lab, "store"))
	defer s.Close()
	id := snapshot(t, s, "rm data.log")
	checkpointtest.Sh(t, root, "rm data.log")
	if err := os.Chmod(outside, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Finish(id); err != nil {
		t.Fatal(err)
	}
	if _, usum, err := s.Restore(id); err != nil || len(usum.NotRestored) != 0 {
		t.Fatalf("undo: %v, not restored %+v", err, usum.NotRestored)
	}
	fi, err := os.Stat(filepath.Join(root, "data.log"))
	got, _ := os.ReadFile(filepath.Join(root, "data.log"))
	if err != nil || fi.Mode().Perm() != 0o640 || !bytes.Equal(got, want) {
		t.Errorf("data.log after undo: %v %v, %d bytes (want 0640, %d)", fi, err, len(got), len(want))
	}
	if ofi, err := os.Stat(outside); err != nil || ofi.Mode().Perm() != 0o600 {
		t.Errorf("the file outside the root: %v %v, want its mode left 0600", ofi, err)
	}
}

// TestLinkedFormat: a record whose checkpoint keeps a big ignored file by a
// link says format 3, which a build of format 2 (one from before links,
// which would undo the stub over the file) refuses; one that links nothing
// stays format 2, which such a build still undoes; the undo's own record
// says the format of the state it checkpointed. This build undoes both, and
// a record with links that an earlier build wrote as format 2.
func TestLinkedFormat(t *testing.T) {
	lane.Live(t)
	tests := []struct {
		name    string
		big     bool // a big ignored file (linked) in the root
		format  int  // the command's record
		relabel bool // the record rewritten as format 2, as session 34's and 35's builds wrote it
	}{
		{"no-link", false, 2, false},
		{"link", true, 3, false},
		{"link-written-as-2", true, 3, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lab, root := checkpointtest.Project(t)
			var want []byte
			if tt.big {
				want = bigIgnored(t, root)
			}
			store := filepath.Join(lab, "store")
			s := open(t, root, store)
			id := snapshot(t, s, "rm data.log; echo x > README.md")
			checkpointtest.Sh(t, root, "rm -f data.log; echo x > README.md")
			if _, err := s.Finish(id); err != nil {
				t.Fatal(err)
			}
			r, _ := s.Record(id)
			if r.Format != tt.format {
				t.Errorf("format %d, want %d", r.Format, tt.format)
			}
			if refused := r.Format > 2; refused != tt.big {
				t.Errorf("a build of format 2 would refuse it: %v, want %v", refused, tt.big)
			}
			if tt.relabel {
				s.Close()
				log := filepath.Join(s.Dir(), "log.jsonl")
				b, _ := os.ReadFile(log)
				if err := os.WriteFile(log, bytes.ReplaceAll(b, []byte(`"format":3`), []byte(`"format":2`)), 0o600); err != nil {
					t.Fatal(err)
				}
				s = open(t, root, store)
			}
			defer s.Close()
			undo, usum, err := s.Restore(id)
			if err != nil || len(usum.NotRestored) != 0 {
				t.Fatalf("undo: %v, not restored %+v", err, usum.NotRestored)
			}
			if got, _ := os.ReadFile(filepath.Join(root, "data.log")); tt.big && !bytes.Equal(got, want) {
				t.Errorf("data.log after undo: %d bytes, want %d", len(got), len(want))
			}
			// The undo checkpointed a root without data.log: nothing linked.
			if u, _ := s.Record(undo); u.Format != 2 {
				t.Errorf("the undo's record: format %d, want 2", u.Format)
			}
		})
	}
}

// TestLinkedCopyWrittenNothing: a linked file the sandbox copied before a
// read-write open that wrote nothing (sqlite's SELECT: copy-up puts a copy
// of the same bytes in its place) is no change: the command's changes are
// empty, the store keeps no second version, and the next process's
// checkpoint is the same tree; the copy, of one name now, is written in
// place by a later command, whose undo brings the bytes back from the
// first version's link.
func TestLinkedCopyWrittenNothing(t *testing.T) {
	lane.Live(t)
	lab, root := checkpointtest.Project(t)
	want := bigIgnored(t, root)
	store := filepath.Join(lab, "store")
	s := open(t, root, store)
	links := func() int {
		ents, _ := os.ReadDir(filepath.Join(s.Dir(), "links"))
		return len(ents)
	}
	copyUp := "cp -p data.log c.tmp && mv c.tmp data.log" // what copy-up does before the open
	id := snapshot(t, s, "sqlite3 data.log 'select 1'")
	checkpointtest.Sh(t, root, copyUp)
	sum, err := s.Finish(id)
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Empty() || links() != 1 {
		t.Errorf("a copy of the same bytes: changes %q, %d links, want none and 1", changeTexts(sum), links())
	}
	r, _ := s.Record(id)
	s.Close()
	s = open(t, root, store)
	defer s.Close()
	id2 := snapshot(t, s, "echo more >> data.log")
	if r2, _ := s.Record(id2); r2.Before != r.After {
		t.Errorf("the next process checkpoints the unchanged root as another tree")
	}
	checkpointtest.Sh(t, root, "echo more >> data.log")
	sum, err = s.Finish(id2)
	if err != nil {
		t.Fatal(err)
	}
	if got := changeTexts(sum); got != "modified data.log" {
		t.Errorf("a write in place of the copy: changes %q, want modified data.log (not in place: the store holds the bytes)", got)
	}
	_, usum, err := s.Restore(id2)
	if err != nil || len(usum.NotRestored) != 0 {
		t.Fatalf("undo: %v, not restored %+v", err, usum.NotRestored)
	}
	if got, _ := os.ReadFile(filepath.Join(root, "data.log")); !bytes.Equal(got, want) {
		t.Errorf("data.log after undo: %d bytes, want the %d before the write", len(got), len(want))
	}
}
