package checkpoint

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/shellgate/shellgate/internal/checkpoint/checkpointtest"
	"github.com/shellgate/shellgate/internal/lane"
)

// victimDir makes a directory outside the root, under /var/tmp/undosafe-*,
// holding files, and returns it with what it holds (victimState).
func victimDir(t *testing.T, files map[string]string) (string, string) {
	t.Helper()
	v, err := os.MkdirTemp("/var/tmp", "undosafe-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(v) })
	for name, spec := range files {
		mode, content, _ := strings.Cut(spec, " ")
		var perm uint32
		fmt.Sscanf(mode, "%o", &perm)
		p := filepath.Join(v, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), fs.FileMode(perm)); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, fs.FileMode(perm)); err != nil {
			t.Fatal(err)
		}
	}
	return v, victimState(t, v)
}

// victimState is every entry under v: its type, mode and content.
func victimState(t *testing.T, v string) string {
	t.Helper()
	var lines []string
	filepath.WalkDir(v, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			lines = append(lines, fmt.Sprintf("%s: %v", p, err))
			return nil
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return nil
		}
		line := fmt.Sprintf("%s %v", strings.TrimPrefix(p, v), fi.Mode())
		if fi.Mode().IsRegular() {
			b, _ := os.ReadFile(p)
			line += " " + string(b)
		}
		lines = append(lines, line)
		return nil
	})
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// plantAt has the restore call plant at its step (crashHook), once.
func plantAt(t *testing.T, step string, plant func()) {
	done := false
	crashHook = func(at string) error {
		if at == step && !done {
			done = true
			plant()
		}
		return nil
	}
	t.Cleanup(func() { crashHook = func(string) error { return nil } })
}

func mustSh(t *testing.T, root, script string) { checkpointtest.Sh(t, root, script) }

// commandLab makes a project, runs setup in it, opens its store and runs
// command there as a command with a checkpoint before and after it. It
// returns the lab, the root, the store, the command's id and the root's
// state before it.
func commandLab(t *testing.T, setup, command string) (lab, root string, s *Store, id int, want string) {
	t.Helper()
	lab, root = checkpointtest.Project(t)
	if setup != "" {
		mustSh(t, root, setup)
	}
	s, err := Open(Options{Root: root, Dir: filepath.Join(lab, "store")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	want = checkpointtest.State(t, root)
	if id, err = s.Snapshot("run", command, ""); err != nil {
		t.Fatal(err)
	}
	mustSh(t, root, command)
	if _, err := s.Finish(id); err != nil {
		t.Fatal(err)
	}
	return lab, root, s, id, want
}

// TestUndoSwappedDirRace: a job of the session keeps swapping a directory
// of the root (d) with a symlink to a directory outside it (renameat2
// RENAME_EXCHANGE, as fast as it can) while undo runs, again and again:
// undo has files to write in d, one to delete and one to chmod, and the
// outside directory holds the same names. Nothing outside is ever written,
// removed or chmodded, whatever each undo ends with; once the swapping
// stops, undo brings the root back.
func TestUndoSwappedDirRace(t *testing.T) {
	lane.Live(t)
	const damage = `rm -rf d d.swap && mkdir -p d/sub && echo changed > d/a.txt && echo p > d/priv && echo new > d/new.txt`
	lab, root, s, id, want := commandLab(t, `mkdir -p d/sub && echo a > d/a.txt && echo b > d/b.txt && echo c > d/sub/c.txt && echo p > d/priv && chmod 600 d/priv`, damage)
	victim, before := victimDir(t, map[string]string{
		"a.txt": "644 mine-a", "b.txt": "644 mine-b", "priv": "644 mine-p", "new.txt": "644 mine-new", "sub/c.txt": "644 mine-c",
	})

	var pause sync.Mutex
	stop := make(chan struct{})
	var swaps atomic.Int64
	rootFD, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(rootFD)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			pause.Lock()
			for range 64 {
				if unix.Renameat2(rootFD, "d", rootFD, "d.swap", unix.RENAME_EXCHANGE) == nil {
					swaps.Add(1)
				}
			}
			pause.Unlock()
		}
	}()
	rounds, failed := 40, 0
	for i := range rounds {
		// Each round starts from the damage, d a directory and d.swap
		// the symlink out, and swaps through the whole undo.
		pause.Lock()
		mustSh(t, root, damage)
		if err := os.Symlink(victim, filepath.Join(root, "d.swap")); err != nil {
			t.Fatal(err)
		}
		pause.Unlock()
		if _, _, err := s.Restore(id); err != nil {
			failed++
			t.Logf("round %d: %v", i, err)
			// what a failed restore left is finished by the next Open
			pause.Lock()
			s2, err := Open(Options{Root: root, Dir: filepath.Join(lab, "store")})
			pause.Unlock()
			if err == nil {
				s2.Close()
			}
		}
		if got := victimState(t, victim); got != before {
			close(stop)
			wg.Wait()
			t.Fatalf("round %d: undo changed the directory outside the root:\n%s", i, checkpointtest.DiffLines(before, got))
		}
	}
	close(stop)
	wg.Wait()
	t.Logf("%d undos (%d failed part way), %d swaps", rounds, failed, swaps.Load())
	if swaps.Load() < int64(rounds) {
		t.Fatalf("only %d swaps: the race did not run", swaps.Load())
	}
	mustSh(t, root, damage)
	if _, _, err := s.Restore(id); err != nil {
		t.Fatal(err)
	}
	if got := checkpointtest.State(t, root); got != want {
		t.Errorf("after the undo without the race:\n%s", checkpointtest.DiffLines(want, got))
	}
}

// TestUndoSymlinkForDir: a command leaves a symlink to a directory outside
// the root where the checkpoint has a directory. Undo removes the link and
// makes the directory with the checkpoint's files; the outside directory,
// which holds the same names, is not touched.
func TestUndoSymlinkForDir(t *testing.T) {
	lane.Live(t)
	victim, before := victimDir(t, map[string]string{"a.txt": "644 mine-a", "priv": "644 mine-p", "sub/c.txt": "644 mine-c"})
	_, root, s, id, want := commandLab(t, `mkdir -p d/sub && echo a > d/a.txt && echo c > d/sub/c.txt && echo p > d/priv && chmod 600 d/priv`,
		"rm -rf d && ln -s "+victim+" d")
	if _, _, err := s.Restore(id); err != nil {
		t.Fatal(err)
	}
	if got := victimState(t, victim); got != before {
		t.Errorf("undo changed the symlink's target:\n%s", checkpointtest.DiffLines(before, got))
	}
	if fi, err := os.Lstat(filepath.Join(root, "d")); err != nil || !fi.IsDir() {
		t.Errorf("d is not a directory again: %v", err)
	}
	if got := checkpointtest.State(t, root); got != want {
		t.Errorf("after undo:\n%s", checkpointtest.DiffLines(want, got))
	}
}

// TestUndoSymlinkAfterLook: the swap lands between undo's look at the root
// (its checkpoint of it) and its writes, deletes and mode changes — where
// the race test hits at random, here at once: d, which undo saw as a
// directory whose file new.txt to remove and priv to chmod back to 0600,
// is a symlink out of the root by the time it acts. Nothing outside
// changes (before, new.txt there went and priv became 0600), the files
// undo writes land in a directory d made in place of the link, and the
// next undo brings the whole root back.
func TestUndoSymlinkAfterLook(t *testing.T) {
	lane.Live(t)
	victim, before := victimDir(t, map[string]string{"a.txt": "644 changed", "priv": "644 p", "new.txt": "644 mine-new", "sub/c.txt": "644 mine-c"})
	lab, root, s, id, want := commandLab(t, `mkdir -p d/sub && echo a > d/a.txt && echo c > d/sub/c.txt && echo p > d/priv && chmod 600 d/priv`,
		"echo changed > d/a.txt && chmod 644 d/priv && echo new > d/new.txt && rm d/sub/c.txt")
	plantAt(t, "journal", func() { mustSh(t, root, "mv d "+lab+"/d-moved && ln -s "+victim+" d") })
	if _, _, err := s.Restore(id); err != nil {
		t.Fatal(err)
	}
	if got := victimState(t, victim); got != before {
		t.Errorf("undo acted through the symlink:\n%s", checkpointtest.DiffLines(before, got))
	}
	if fi, err := os.Lstat(filepath.Join(root, "d")); err != nil || !fi.IsDir() {
		t.Fatalf("d is not a directory: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(root, "d/sub/c.txt")); err != nil || string(b) != "c\n" {
		t.Errorf("d/sub/c.txt: %q %v", b, err)
	}
	if _, _, err := s.Restore(id); err != nil {
		t.Fatal(err)
	}
	if got := checkpointtest.State(t, root); got != want {
		t.Errorf("after the second undo:\n%s", checkpointtest.DiffLines(want, got))
	}
	if got := victimState(t, victim); got != before {
		t.Errorf("the second undo acted through the symlink:\n%s", checkpointtest.DiffLines(before, got))
	}
}

// TestUndoSymlinkedParentMode: only a mode to restore, in a directory that
// became a symlink out of the root after undo's look (d/e → outside, whose
// f.txt is 0644): the outside file keeps its mode. The next undo, which
// sees the symlink, replaces it by the directory.
func TestUndoSymlinkedParentMode(t *testing.T) {
	lane.Live(t)
	victim, before := victimDir(t, map[string]string{"f.txt": "644 f\n"})
	lab, root, s, id, want := commandLab(t, `mkdir -p d/e && echo f > d/e/f.txt && chmod 600 d/e/f.txt`, "chmod 644 d/e/f.txt")
	plantAt(t, "journal", func() { mustSh(t, root, "mv d/e "+lab+"/e-moved && ln -s "+victim+" d/e") })
	if _, _, err := s.Restore(id); err != nil {
		t.Fatal(err)
	}
	if got := victimState(t, victim); got != before {
		t.Errorf("undo chmodded through a symlinked parent:\n%s", checkpointtest.DiffLines(before, got))
	}
	if _, _, err := s.Restore(id); err != nil {
		t.Fatal(err)
	}
	if got := checkpointtest.State(t, root); got != want {
		t.Errorf("after the second undo:\n%s", checkpointtest.DiffLines(want, got))
	}
	if got := victimState(t, victim); got != before {
		t.Errorf("the second undo acted through the symlink:\n%s", checkpointtest.DiffLines(before, got))
	}
}

// TestUndoStageNames: a command makes names in undo's stage as soon as it is
// made (symlinks to files outside at the names undo writes there), or turns
// place: no file outside is written or chmodded, and the undo ends. (The
// stage in the root, where it is made when it cannot be beside it.)
func TestUndoStageNames(t *testing.T) {
	lane.Live(t)
	stageBeside = false
	t.Cleanup(func() { stageBeside = true })
	for _, step := range []string{"stage", "deleted"} {
		t.Run(step, func(t *testing.T) {
			victim, before := victimDir(t, map[string]string{"t": "600 mine"})
			_, root, s, id, want := commandLab(t, "", "rm -rf src README.md run.sh")
			target := filepath.Join(victim, "t")
			plantAt(t, step, func() {
				stage, err := filepath.Glob(filepath.Join(root, stagePrefix+"*"))
				if err != nil || len(stage) != 1 {
					t.Fatalf("no one stage: %v %v", stage, err)
				}
				if step == "stage" {
					for _, n := range []string{"0", "1", "2", "3", "gitfile"} {
						if err := os.Symlink(target, filepath.Join(stage[0], n)); err != nil {
							t.Fatal(err)
						}
					}
					return
				}
				n := 0
				filepath.WalkDir(stage[0], func(p string, e fs.DirEntry, err error) error {
					if err == nil && e.Type().IsRegular() {
						os.Remove(p)
						os.Symlink(target, p)
						n++
					}
					return nil
				})
				if n == 0 {
					t.Fatal("nothing staged")
				}
			})
			_, sum, err := s.Restore(id)
			if err != nil {
				t.Fatal(err)
			}
			if got := victimState(t, victim); got != before {
				t.Errorf("undo wrote through a name in its stage:\n%s", checkpointtest.DiffLines(before, got))
			}
			if got := checkpointtest.State(t, root); got != want && len(sum.Raced) == 0 {
				t.Errorf("the swap left the root not as the checkpoint has it, and the undo did not say so:\n%s", checkpointtest.DiffLines(want, got))
			}
			if step == "stage" {
				if got := checkpointtest.State(t, root); got != want {
					t.Errorf("after undo:\n%s", checkpointtest.DiffLines(want, got))
				}
			}
		})
	}
}

// TestUndoSaysWhatChangedDuring: something still running that writes in the
// root while an undo runs (a job, a process a command left) leaves files not
// as the checkpoint has them; the undo says which, instead of reporting the
// root restored.
func TestUndoSaysWhatChangedDuring(t *testing.T) {
	lane.Live(t)
	for _, step := range []string{"journal", "stage", "deleted"} {
		t.Run(step, func(t *testing.T) {
			_, root, s, id, want := commandLab(t, "", "rm -rf src && echo agent > notes.txt")
			plantAt(t, step, func() { mustSh(t, root, "echo job > new.txt") })
			_, sum, err := s.Restore(id)
			if err != nil {
				t.Fatal(err)
			}
			if got := checkpointtest.State(t, root); got == want {
				t.Fatal("the job's write did not land")
			}
			if len(sum.Raced) != 1 || sum.Raced[0].Text() != "added new.txt" {
				t.Errorf("Raced %+v, want added new.txt", sum.Raced)
			}
			if txt := sum.RacedText(); !strings.Contains(txt, "something still running") || !strings.Contains(txt, "added new.txt") {
				t.Errorf("RacedText: %q", txt)
			}
			// and none where nothing ran beside it: undo of the undo
			crashHook = func(string) error { return nil }
			recs, _ := s.Records()
			if _, sum, err = s.Restore(recs[len(recs)-1].ID); err != nil || len(sum.Raced) != 0 {
				t.Errorf("undo of the undo: %v, Raced %+v", err, sum.Raced)
			}
		})
	}
}

// TestUndoDirsMadeUnenterable: a command that takes its owner's rights off
// directories (`chmod 000 src`) does not stop undo part way — which left
// every next shellgate failing to finish it, as a user who is not root:
// undo gives the directories it writes in u+rwx again (a directory's mode
// is not kept: it is made 0755) and brings the files back.
func TestUndoDirsMadeUnenterable(t *testing.T) {
	lane.Live(t)
	for _, command := range []string{
		// (the files removed too: root, as tests run here, reads through a
		// 000 directory, where its user's checkpoint sees it empty)
		"rm src/pkg/f2.go && chmod 000 src",
		"rm src/pkg/f2.go && chmod 000 src/pkg src",
		"rm src/pkg/f1.go && echo new > src/pkg/new.go && chmod 000 src/pkg && chmod 500 src",
	} {
		t.Run(command, func(t *testing.T) {
			_, root, s, id, want := commandLab(t, "", command)
			t.Cleanup(func() { mustSh(t, root, "chmod -R u+rwx .") })
			if _, _, err := s.Restore(id); err != nil {
				t.Fatal(err)
			}
			for _, d := range []string{"src", "src/pkg"} {
				if fi, err := os.Stat(filepath.Join(root, d)); err != nil || fi.Mode().Perm()&0o700 != 0o700 {
					t.Errorf("%s after undo: %v %v: its owner cannot enter or write in it", d, fi.Mode(), err)
				}
			}
			if got := checkpointtest.State(t, root); got != want {
				t.Errorf("after undo:\n%s", checkpointtest.DiffLines(want, got))
			}
		})
	}
}
