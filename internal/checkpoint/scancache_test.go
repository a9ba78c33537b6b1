package checkpoint

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/shellgate/shellgate/internal/checkpoint/checkpointtest"
	"github.com/shellgate/shellgate/internal/lane"
)

// cacheLab is a small root whose files are past the racy window (so that a
// store trusts their stat), and the store that checkpointed it last, whose
// cache file the next process reads.
func cacheLab(t *testing.T) (lab, root string, s *Store) {
	t.Helper()
	lab = checkpointtest.LabDir(t)
	root = filepath.Join(lab, "project")
	for _, f := range []string{"a.txt", "b.txt", "sub/c.txt", "sub/deeper/d.txt"} {
		p := filepath.Join(root, f)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("the first "+f+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(racyWindow + 100*time.Millisecond)
	s = openStore(t, root, filepath.Join(lab, "store"))
	snap(t, s)
	return lab, root, s
}

func openStore(t *testing.T, root, dir string) *Store {
	t.Helper()
	s, err := Open(Options{Root: root, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// snap checkpoints the root and returns the checkpoint's tree.
func snap(t *testing.T, s *Store) string {
	t.Helper()
	id, err := s.Snapshot("run", "test", "")
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Record(id)
	if err != nil {
		t.Fatal(err)
	}
	return r.Before
}

// coldTree is the checkpoint a new store, with no cache, takes of root.
func coldTree(t *testing.T, lab, root string) string {
	t.Helper()
	dir, err := os.MkdirTemp(lab, "cold-")
	if err != nil {
		t.Fatal(err)
	}
	return snap(t, openStore(t, root, dir))
}

// rewrite puts body in root's file f, its size and modification time as
// they were: in place (the same inode) or by a rename over it.
func rewrite(t *testing.T, root, f, body string, rename bool) {
	t.Helper()
	p := filepath.Join(root, f)
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(body)) != fi.Size() {
		t.Fatalf("%q is not %d bytes", body, fi.Size())
	}
	w := p
	if rename {
		w = p + ".new"
	}
	if err := os.WriteFile(w, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(w, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if rename {
		if err := os.Rename(w, p); err != nil {
			t.Fatal(err)
		}
	}
	if after, _ := os.Stat(p); !after.ModTime().Equal(fi.ModTime()) || after.Size() != fi.Size() {
		t.Fatalf("%s: size or time moved", f)
	}
}

// TestScanCacheNextProcess: a new process (a new Store on the same store
// directory, reading the cache file the last one wrote) takes the same
// checkpoint as a store without a cache after a file was rewritten with the
// same size and modification time, in place or by a rename over it; and
// it read only the file that changed.
func TestScanCacheNextProcess(t *testing.T) {
	lane.Live(t)
	for _, rename := range []bool{false, true} {
		t.Run("rename="+strconv.FormatBool(rename), func(t *testing.T) {
			lab, root, s := cacheLab(t)
			before := snap(t, s)
			s.Close()
			rewrite(t, root, "sub/c.txt", "THE FIRST SUB/C.TXT\n", rename)
			next := openStore(t, root, filepath.Dir(s.Dir()))
			got := snap(t, next)
			if want := coldTree(t, lab, root); got != want || got == before {
				t.Fatalf("the next process took %s, a store without a cache %s (before the rewrite %s)", got, want, before)
			}
			if next.unsaved != 1 {
				t.Errorf("the next process read %d files, want 1 (the one rewritten)", next.unsaved)
			}
		})
	}
}

// TestScanCacheRacy: a file whose time is within the racy window of the
// walk that saw it is marked so in the cache file, and the next process
// reads it again even when its stat is what the cache says — the case of a
// file changed again within the file system's time resolution of the walk.
// A file not so marked is taken from the cache (what makes a warm run cheap),
// which the second half checks, so that the first can fail.
func TestScanCacheRacy(t *testing.T) {
	lane.Live(t)
	lab, root, s := cacheLab(t)
	// Written now: racy for the walk that follows.
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("the second a.txt\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	snap(t, s)
	s.saveScanCache()
	s.Close()
	b, err := os.ReadFile(s.scanCachePath())
	if err != nil {
		t.Fatal(err)
	}
	c, ok := decodeScanCache(b, root)
	if !ok {
		t.Fatal("the cache file does not decode")
	}
	entry := func(c scanCache, name string) *scanEntry {
		for i := range c.work.entries {
			if c.work.entries[i].name == name {
				return &c.work.entries[i]
			}
		}
		t.Fatalf("no %s in the cache", name)
		return nil
	}
	if !entry(c, "a.txt").racy || entry(c, "b.txt").racy {
		t.Fatalf("racy: a.txt %v (written just before the walk), b.txt %v (long before)", entry(c, "a.txt").racy, entry(c, "b.txt").racy)
	}
	// What a change the stat cannot show leaves: the file's bytes are other
	// than the blob the cache names, its stat the cache's. The cache is
	// made to say so (the file system's resolution decides when it happens).
	for _, racy := range []bool{true, false} {
		if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("the third a.txt\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		st, err := lstatFile(filepath.Join(root, "a.txt"))
		if err != nil {
			t.Fatal(err)
		}
		e := entry(c, "a.txt")
		e.st, e.racy = st, racy
		if err := os.WriteFile(s.scanCachePath(), encodeScanCache(c, root), 0o600); err != nil {
			t.Fatal(err)
		}
		got := snap(t, openStore(t, root, filepath.Dir(s.Dir())))
		want := coldTree(t, lab, root)
		if racy && got != want {
			t.Fatalf("a racy entry was trusted: the next process took %s, a store without a cache %s", got, want)
		}
		if !racy && got == want {
			t.Fatalf("an entry not racy was read again: the cache is not what the next process used")
		}
	}
}

// TestScanCacheDamaged: a cache file cut short, with a byte changed
// (in every blob id among others), empty, of another root or not a cache at all is not used: the
// next process reads every file, and its checkpoint is the one a store
// without a cache takes — never one built on a wrong blob id.
func TestScanCacheDamaged(t *testing.T) {
	lane.Live(t)
	lab, root, s := cacheLab(t)
	s.Close()
	good, err := os.ReadFile(s.scanCachePath())
	if err != nil {
		t.Fatal(err)
	}
	c, _ := decodeScanCache(good, root)
	// The file system's time says nothing of this change: only a cache that
	// names the old blob for it would leave it out.
	rewrite(t, root, "sub/deeper/d.txt", "THE FIRST SUB/DEEPER/D.TXT\n", false)
	st, err := lstatFile(filepath.Join(root, "sub", "deeper", "d.txt"))
	if err != nil {
		t.Fatal(err)
	}
	setStat(c.work, "sub/deeper/d.txt", st)
	good = encodeScanCache(c, root)
	want := coldTree(t, lab, root)
	if got, ok := decodeScanCache(good, root); !ok || got.work == nil {
		t.Fatal("the cache made for the test does not decode")
	}
	type variant struct {
		name string
		b    []byte
	}
	variants := []variant{
		{"empty", nil},
		{"not a cache", []byte("hello\n")},
		{"another root", encodeScanCache(c, root+"x")},
		{"magic only", []byte(scanCacheMagic)},
	}
	for n := len(scanCacheMagic); n < len(good); n += max(1, len(good)/40) {
		variants = append(variants, variant{"cut at " + strconv.Itoa(n), good[:n]})
	}
	// Every seventh byte: each blob id (20 bytes) has one changed.
	for i := len(scanCacheMagic); i < len(good); i += 7 {
		b := append([]byte(nil), good...)
		b[i] ^= 0x10
		variants = append(variants, variant{"byte " + strconv.Itoa(i) + " changed", b})
	}
	for _, v := range variants {
		if err := os.WriteFile(s.scanCachePath(), v.b, 0o600); err != nil {
			t.Fatal(err)
		}
		next := openStore(t, root, filepath.Dir(s.Dir()))
		if got := snap(t, next); got != want {
			t.Fatalf("%s: the next process took %s, a store without a cache %s", v.name, got, want)
		}
		next.Close()
	}
}

// setStat sets the stat the cache has for path (slash-separated) under d.
func setStat(d *scanDir, path string, st fileStat) {
	name, rest, deeper := cutPath(path)
	for i := range d.entries {
		e := &d.entries[i]
		if e.name != name {
			continue
		}
		if deeper {
			setStat(e.dir, rest, st)
		} else {
			e.st = st
		}
	}
}

func cutPath(p string) (first, rest string, ok bool) {
	for i := 0; i < len(p); i++ {
		if p[i] == '/' {
			return p[:i], p[i+1:], true
		}
	}
	return p, "", false
}

// lstatFile is the stat the walk takes of path.
func lstatFile(path string) (fileStat, error) {
	_, stat, done, err := readDir(filepath.Dir(path))
	if err != nil {
		return fileStat{}, err
	}
	defer done()
	return stat(filepath.Base(path))
}
