package checkpoint_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/shellgate/shellgate/internal/checkpoint"
	"github.com/shellgate/shellgate/internal/checkpoint/checkpointtest"
	"github.com/shellgate/shellgate/internal/lane"
)

// readBytes is what this process has read so far (rchar of /proc/self/io:
// every read, cached or not); -1 where there is no such file.
func readBytes(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "rchar: "); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return -1
}

// blobSize is the size of what checkpoint tree holds at path (git's).
func blobSize(t *testing.T, s *checkpoint.Store, tree, path string) int64 {
	t.Helper()
	out := checkpointtest.Sh(t, s.Dir(), "git --git-dir git cat-file -s "+tree+":"+path)
	n, err := strconv.ParseInt(strings.TrimSpace(out), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestNotKeptSparse: a sparse file of a terabyte in the root (truncate -s
// 1T, which a sandboxed command may do) is not read: the checkpoint holds a
// stub of its stat, the process reads next to nothing, and the changes list
// it as added and not kept. The bound is the bytes read, not the time.
func TestNotKeptSparse(t *testing.T) {
	lane.Live(t)
	lab, root := checkpointtest.Project(t)
	s := open(t, root, filepath.Join(lab, "store"))
	snapshot(t, s, "warm") // the repository's own files read once
	id := snapshot(t, s, "truncate -s 1T big")
	checkpointtest.Sh(t, root, "truncate -s 1T big && truncate -s 2G .git/big.pack")
	before := readBytes(t)
	sum, err := s.Finish(id)
	if err != nil {
		t.Fatal(err)
	}
	if read := readBytes(t) - before; before >= 0 && read > 64<<20 {
		t.Errorf("the checkpoint read %d bytes: the big files were read", read)
	}
	r, err := s.Record(id)
	if err != nil {
		t.Fatal(err)
	}
	if n := blobSize(t, s, r.After, "work/big"); n > 1024 {
		t.Errorf("the checkpoint holds %d bytes for big", n)
	}
	if n := blobSize(t, s, r.After, "git/big.pack"); n > 1024 {
		t.Errorf("the checkpoint holds %d bytes for .git/big.pack", n)
	}
	want := []checkpoint.Change{{Kind: checkpoint.Added, Path: "big", NotKept: true, Size: 1 << 40}}
	if len(sum.Changes) != 2 || sum.Changes[0] != want[0] || sum.Changes[1] != (checkpoint.Change{Kind: checkpoint.Added, Path: ".git/big.pack", NotKept: true, Size: 2 << 30}) {
		t.Errorf("changes %+v, want big and .git/big.pack added, not kept", sum.Changes)
	}
	if got := sum.Changes[0].Text(); got != "added big (not kept, 1.0 TiB)" {
		t.Errorf("change text %q", got)
	}
	if !strings.Contains(sum.Text(), "added 1 file") || !strings.Contains(sum.Text(), "not kept") {
		t.Errorf("summary %q", sum.Text())
	}
	// Read from the store (git), not from this process's memory, the same.
	other := open(t, root, filepath.Join(lab, "store"))
	defer other.Close()
	sum2, err := other.Changes(id)
	if err != nil {
		t.Fatal(err)
	}
	if len(sum2.Changes) != 2 || sum2.Changes[0] != want[0] {
		t.Errorf("changes read by git: %+v", sum2.Changes)
	}
	// The next process, from the scan cache, reads nothing of it either.
	before = readBytes(t)
	snapshot(t, other, "again")
	if read := readBytes(t) - before; before >= 0 && read > 64<<20 {
		t.Errorf("the next process's checkpoint read %d bytes", read)
	}
}

// TestNotKeptSize: the size that decides is MaxFileSize; a file over it is
// not kept whatever else it is, and one that was not kept is read once the
// size is raised (the scan cache's stat alone does not keep it a stub).
func TestNotKeptSize(t *testing.T) {
	lane.Live(t)
	lab, root := checkpointtest.Project(t)
	checkpointtest.Sh(t, root, "head -c 3000000 /dev/urandom > data.bin")
	store := filepath.Join(lab, "store")
	s, err := checkpoint.Open(checkpoint.Options{Root: root, Dir: store, MaxFileSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	id := snapshot(t, s, "x")
	s.Close()
	r, _ := s.Record(id)
	if n := blobSize(t, s, r.Before, "work/data.bin"); n > 1024 {
		t.Fatalf("a 3 MB file over a 1 MiB cap is kept (%d bytes)", n)
	}
	s, err = checkpoint.Open(checkpoint.Options{Root: root, Dir: store, MaxFileSize: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	id = snapshot(t, s, "y")
	r, _ = s.Record(id)
	if n := blobSize(t, s, r.Before, "work/data.bin"); n != 3000000 {
		t.Errorf("under a 4 MiB cap the file is held as %d bytes", n)
	}
}

// TestUndoLeavesNotKept: undo never writes, deletes or truncates a file
// over the size checkpoints keep, whichever way it came to differ, and says
// which paths it left and why; the rest is restored.
func TestUndoLeavesNotKept(t *testing.T) {
	lane.Live(t)
	if runtime.GOOS == "windows" {
		t.Skip("sparse files")
	}
	cases := []struct {
		name, before, cmd string
		left              []string // the paths undo says it left
		after             string   // run after the undo: a check that exits 0
	}{
		{"unchanged", "truncate -s 1T big", "echo x > README.md", nil, `test $(stat -c %s big) = 1099511627776`},
		{"changed", "truncate -s 1T big", "truncate -s 2T big && echo x > README.md", []string{"big"}, `test $(stat -c %s big) = 2199023255552`},
		{"deleted", "truncate -s 1T big", "rm big && echo x > README.md", []string{"big"}, `test ! -e big`},
		{"replaced-small", "truncate -s 1T big", "rm big && echo small > big && echo x > README.md", []string{"big"}, `test "$(cat big)" = small`},
		{"grew", "echo small > grows", "truncate -s 1T grows && echo x > README.md", []string{"grows"}, `test $(stat -c %s grows) = 1099511627776`},
		{"made", "", "truncate -s 1T new && echo x > README.md", []string{"new"}, `test $(stat -c %s new) = 1099511627776`},
		{"in-the-way", "mkdir -p d && echo a > d/a", "rm -r d && truncate -s 1T d && echo x > README.md", []string{"d", "d/a"}, `test -f d && test $(stat -c %s d) = 1099511627776`},
		{"dir-holds", "echo a > d", "rm d && mkdir d && truncate -s 1T d/big && echo x > README.md", []string{"d", "d/big"}, `test $(stat -c %s d/big) = 1099511627776`},
		{"mode", "truncate -s 1T big && chmod 600 big", "chmod 644 big && echo x > README.md", []string{"big"}, `test $(stat -c %a big) = 644`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lab, root := checkpointtest.Project(t)
			if c.before != "" {
				checkpointtest.Sh(t, root, c.before)
			}
			s := open(t, root, filepath.Join(lab, "store"))
			defer s.Close()
			readme, _ := os.ReadFile(filepath.Join(root, "README.md"))
			id := snapshot(t, s, c.cmd)
			checkpointtest.Sh(t, root, c.cmd)
			if _, err := s.Finish(id); err != nil {
				t.Fatal(err)
			}
			_, sum, err := s.Restore(id)
			if err != nil {
				t.Fatal(err)
			}
			var left []string
			for _, l := range sum.NotRestored {
				left = append(left, l.Path)
				if l.Why == "" {
					t.Errorf("%s: no reason", l.Path)
				}
			}
			if strings.Join(left, " ") != strings.Join(c.left, " ") {
				t.Errorf("not restored %+v, want %q", sum.NotRestored, c.left)
			}
			for _, ch := range sum.Changes {
				for _, l := range left {
					if ch.Path == l {
						t.Errorf("the undo's changes list %s, which it left", l)
					}
				}
			}
			if got, _ := os.ReadFile(filepath.Join(root, "README.md")); string(got) != string(readme) {
				t.Errorf("README.md not restored: %q", got)
			}
			checkpointtest.Sh(t, root, c.after)
		})
	}
}

// TestCoversNotKept: where git may take a file over the size checkpoints
// keep — a working file of the repository it works in, tracked or not, or
// a file of its .git other than objects — undo is not trusted with it; a
// big ignored file (git leaves it, git clean -x is never trusted), one in
// another repository, or a pack in .git/objects, do not matter.
func TestCoversNotKept(t *testing.T) {
	lane.Live(t)
	_, root := checkpointtest.Project(t)
	checkpointtest.Sh(t, root, `set -e
mkdir -p vendor/lib && git -C vendor/lib init -q && echo x > vendor/lib/f
truncate -s 1T build.log && mkdir -p .git/objects/pack && truncate -s 1T .git/objects/pack/huge.pack`)
	for p, want := range map[string]bool{"": true, "src/pkg": true, "vendor/lib": true, "README.md": true, "new/dir": true} {
		if got := checkpoint.Covers(root, filepath.Join(root, p), 0); got != want {
			t.Errorf("with only ignored and packed big files: Covers(%q) = %v, want %v", p, got, want)
		}
	}
	checkpointtest.Sh(t, root, "truncate -s 1T src/pkg/data.bin")
	for p, want := range map[string]bool{"": false, "src/pkg": false, "src": false, "README.md": false, "new/dir": false, ".git": false, "src/pkg/data.bin": false, "vendor/lib": true} {
		if got := checkpoint.Covers(root, filepath.Join(root, p), 0); got != want {
			t.Errorf("with an untracked 1T file: Covers(%q) = %v, want %v", p, got, want)
		}
	}
	if !checkpoint.Covers(root, root, 2<<40) {
		t.Errorf("under a 2 TiB cap the 1T file is kept: covered")
	}
	checkpointtest.Sh(t, root, "rm src/pkg/data.bin && truncate -s 1T vendor/lib/.git/index.big")
	// (the root's too: git clean -ffd there removes a nested repository)
	if checkpoint.Covers(root, filepath.Join(root, "vendor/lib"), 0) || checkpoint.Covers(root, root, 0) || !checkpoint.Covers(root, filepath.Join(root, "src"), 2<<40) {
		t.Errorf("a big file in vendor/lib/.git: vendor/lib %v, the root %v (want false)",
			checkpoint.Covers(root, filepath.Join(root, "vendor/lib"), 0), checkpoint.Covers(root, root, 0))
	}
}
