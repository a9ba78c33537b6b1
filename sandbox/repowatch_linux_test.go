package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The watch finds each directory that came to hold a repository — made,
// moved in, made in a directory made a moment before — and forgets those
// that no longer do; past its bound of watched directories, the walk at the
// close finds the rest.
func TestRepoWatch(t *testing.T) {
	root := t.TempDir()
	mkdir := func(rel string) { must(t, os.MkdirAll(filepath.Join(root, rel), 0o755)) }
	write := func(rel, content string) {
		mkdir(filepath.Dir(rel))
		must(t, os.WriteFile(filepath.Join(root, rel), []byte(content), 0o644))
	}
	mkdir("own/.git")
	mkdir("src/pkg")
	write("bare/HEAD", "ref: refs/heads/main\n")
	mkdir(".shellgate-quarantine/x/.git") // made there by a command: not one of the quarantine's read-only items
	// The session starts once all that is there, as change times count it.
	write("probe", "")
	var st unix.Stat_t
	must(t, unix.Lstat(filepath.Join(root, "probe"), &st))
	started := unix.Timespec{Sec: st.Ctim.Sec, Nsec: st.Ctim.Nsec + 1}

	w, err := newRepoWatch(root, filepath.Join(root, ".shellgate-quarantine"), started)
	if err != nil {
		t.Skip("no inotify here:", err)
	}
	t.Cleanup(func() { unix.Close(w.fd); unix.Close(w.rootFD) })
	w.walk(".", true, walkStart)
	check := func(step string, final bool, want ...string) {
		t.Helper()
		var got []string
		for dir, m := range w.dirs(true, final) {
			got = append(got, dir+":"+[]string{"old", "made", "unseen"}[m])
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s: found %q, want %q", step, got, want)
		}
	}
	check("at the start", false, ".shellgate-quarantine/x:old", "bare:old", "own:old")

	mkdir("src/pkg/new/.git")
	write("src/deep/er/.git", "gitdir: ../../../own/.git\n")
	check("made", false, ".shellgate-quarantine/x:old", "bare:old", "own:old", "src/deep/er:made", "src/pkg/new:made")

	must(t, os.Rename(filepath.Join(root, "src"), filepath.Join(root, "lib")))
	must(t, os.RemoveAll(filepath.Join(root, "own")))
	must(t, os.RemoveAll(filepath.Join(root, ".shellgate-quarantine")))
	check("moved and removed", false, "bare:old", "lib/deep/er:made", "lib/pkg/new:made")

	// Moved in from outside the root, full already and older than the
	// session: new here.
	outside := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(outside, "v/w/.git"), 0o755))
	must(t, os.Rename(filepath.Join(outside, "v"), filepath.Join(root, "v")))
	check("moved in", false, "bare:old", "lib/deep/er:made", "lib/pkg/new:made", "v/w:made")

	// Past the bound: nothing new is watched, and the close's walk finds
	// what was made where no watch is.
	w.limit = len(w.wds)
	mkdir("far/away")
	check("a directory past the bound", false, "bare:old", "lib/deep/er:made", "lib/pkg/new:made", "v/w:made")
	var now unix.Timespec
	for unix.ClockGettime(unix.CLOCK_REALTIME_COARSE, &now); !later(now, started); unix.ClockGettime(unix.CLOCK_REALTIME_COARSE, &now) {
		time.Sleep(time.Millisecond) // until what is made now is later than the start
	}
	mkdir("far/away/.git")
	check("made past the bound", false, "bare:old", "lib/deep/er:made", "lib/pkg/new:made", "v/w:made")
	check("at the close", true, "bare:old", "far/away:unseen", "lib/deep/er:made", "lib/pkg/new:made", "v/w:made")
}

// The first walk of a project (2000 directories, 10 files each), watching
// each directory, beside the same tree walked by filepath.WalkDir; and a
// pass once it is done (nothing new: one read of the queue, a stat or two
// per repository).
func BenchmarkRepoWatch(b *testing.B) {
	root := b.TempDir()
	for i := range 2000 {
		dir := filepath.Join(root, "d"+strconv.Itoa(i%40), "e"+strconv.Itoa(i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for j := range 10 {
			os.WriteFile(filepath.Join(dir, "f"+strconv.Itoa(j)), nil, 0o644)
		}
	}
	os.MkdirAll(filepath.Join(root, "d1", "e1", ".git"), 0o755)
	b.Run("walk", func(b *testing.B) {
		for b.Loop() {
			w, err := newRepoWatch(root, filepath.Join(root, ".shellgate-quarantine"), unix.Timespec{})
			if err != nil {
				b.Skip("no inotify here:", err)
			}
			w.walk(".", true, walkStart)
			unix.Close(w.fd)
			unix.Close(w.rootFD)
		}
	})
	b.Run("WalkDir", func(b *testing.B) {
		for b.Loop() {
			filepath.WalkDir(root, func(string, os.DirEntry, error) error { return nil })
		}
	})
	b.Run("pass", func(b *testing.B) {
		w, err := newRepoWatch(root, filepath.Join(root, ".shellgate-quarantine"), unix.Timespec{})
		if err != nil {
			b.Skip("no inotify here:", err)
		}
		defer unix.Close(w.rootFD)
		defer unix.Close(w.fd)
		w.walk(".", true, walkStart)
		for b.Loop() {
			w.dirs(true, false)
		}
	})
}
