package checkpoint

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shellgate/shellgate/internal/checkpoint/checkpointtest"
	"github.com/shellgate/shellgate/internal/lane"
)

// setPackHook sets packHook for the test.
func setPackHook(t *testing.T, f func(step string, pid int) error) {
	t.Cleanup(func() { packHook = func(string, int) error { return nil } })
	packHook = f
}

// waitPack waits for this process's pack, if one runs, and returns its error.
func (s *Store) waitPack(t *testing.T) error {
	t.Helper()
	s.mu.Lock()
	j := s.pack
	s.mu.Unlock()
	if j == nil {
		return nil
	}
	select {
	case <-j.done:
	case <-time.After(10 * time.Minute):
		t.Fatal("the pack never ended")
	}
	return j.err
}

// objectCounts is git count-objects -v of the store: loose objects (but
// the empty tree, which git never packs: every repository has it), packs,
// garbage files.
func objectCounts(t *testing.T, s *Store) (loose, packs, garbage int) {
	t.Helper()
	out, err := s.git(nil, "", "", "count-objects", "-v")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		k, v, _ := strings.Cut(line, ": ")
		n, _ := strconv.Atoi(v)
		switch k {
		case "count":
			loose = n
		case "packs":
			packs = n
		case "garbage":
			garbage = n
		}
	}
	if _, err := os.Stat(s.objectPath(EmptyTree)); err == nil {
		loose--
	}
	return loose, packs, garbage
}

// fsck fails the test unless git fsck finds the store whole: every object
// every checkpoint's ref reaches is there and sound.
func fsck(t *testing.T, s *Store) {
	t.Helper()
	if out, err := s.git(nil, "", "", "fsck", "--full", "--strict", "--no-dangling"); err != nil || len(out) > 0 {
		t.Errorf("git fsck of the store: %v\n%s", err, out)
	}
}

// processGone reports whether process pid has ended (reaped, or a zombie whose
// parent is not this test).
func processGone(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return errors.Is(err, os.ErrNotExist) || syscall.Kill(pid, 0) == syscall.ESRCH
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return strings.HasPrefix(rest, "Z") || strings.HasPrefix(rest, "X")
}

// manyFiles writes n files of ~1 KB, 100 a directory, under root.
func manyFiles(t *testing.T, root string, n int) {
	t.Helper()
	body := []byte(strings.Repeat("abcdefghijklmnopqrstuvwxyz", 40))
	for i := 0; i < n; i++ {
		dir := filepath.Join(root, fmt.Sprintf("d%03d", i/100))
		if i%100 == 0 {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		copy(body, fmt.Sprintf("file %d\n", i))
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.txt", i%100)), body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// command checkpoints a command that appends a line to notes.txt, and
// returns the state before it, if asked (checkpointtest.State).
func command(t *testing.T, s *Store, i int, state bool) (id int, before string) {
	t.Helper()
	if state {
		before = checkpointtest.State(t, s.root)
	}
	id, err := s.Snapshot("run", "edit "+strconv.Itoa(i), "")
	if err != nil {
		t.Fatal(err)
	}
	checkpointtest.Sh(t, s.root, "echo "+strconv.Itoa(i)+" >> notes.txt")
	if _, err := s.Finish(id); err != nil {
		t.Fatal(err)
	}
	return id, before
}

// TestPackInBackground: the 64th command of a new 10 000-file project
// returns while git still has the first checkpoint's ~10 000 loose objects
// to pack, and the next command runs beside the pack; once it is done, the
// objects are packed, and undo brings back the first state byte for byte.
// Close leaves no git process behind.
func TestPackInBackground(t *testing.T) {
	lane.Live(t)
	lab, root := checkpointtest.Project(t)
	manyFiles(t, root, 10000)
	started, release := make(chan int, 1), make(chan struct{})
	setPackHook(t, func(step string, pid int) error {
		if step == "started" {
			select {
			case started <- pid: // the first batch's git
			default:
			}
			<-release
		}
		return nil
	})
	s, err := Open(Options{Root: root, Dir: filepath.Join(lab, "store")})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	states := map[int]string{}
	for i := 1; i <= sizeEvery; i++ {
		id, before := command(t, s, i, i == 1)
		if before != "" {
			states[id] = before
		}
	}
	var pid int
	select {
	case pid = <-started:
	case <-time.After(5 * time.Minute):
		t.Fatal("no pack started at the 64th command")
	}
	// The 64th command's calls returned; its pack has not yet removed a
	// loose object, and the next command does not wait for it.
	if loose, _, _ := objectCounts(t, s); loose < 10000 {
		t.Fatalf("%d loose objects when the 64th command returned: it waited for the pack", loose)
	}
	id, before := command(t, s, sizeEvery+1, true)
	states[id] = before
	close(release)
	if err := s.waitPack(t); err != nil {
		t.Fatalf("the pack: %v", err)
	}
	loose, packs, garbage := objectCounts(t, s)
	if loose > 100 || packs < 1 || packs > 10100/packBatch+1 || garbage != 0 {
		t.Errorf("after the pack: %d loose objects, %d packs (batches of %d), %d garbage files", loose, packs, packBatch, garbage)
	}
	fsck(t, s)
	for _, id := range []int{1, sizeEvery + 1} {
		if _, _, err := s.Restore(id); err != nil {
			t.Fatal(err)
		}
		if got := checkpointtest.State(t, root); got != states[id] {
			t.Errorf("undo %d:\n%s", id, checkpointtest.DiffLines(states[id], got))
		}
	}
	s.Close()
	if !processGone(pid) {
		t.Errorf("git pack-objects (pid %d) is still there after Close", pid)
	}
}

// TestPackStopped stops a pack at each step, as a kill or a crash would:
// the store stays whole (git fsck), every checkpoint restores byte for
// byte, no git process is left, and the next pack cleans up and packs all.
func TestPackStopped(t *testing.T) {
	lane.Live(t)
	kill := func(pid int) error {
		if pid > 0 {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		return nil
	}
	crash := errors.New("crash")
	cases := []struct {
		name string
		full bool
		at   string
		stop func(s *Store, pid int) error // run at step at
	}{
		{"pack-objects killed", false, "started", func(s *Store, pid int) error { return kill(pid) }},
		{"pack-objects killed midway", true, "started", func(s *Store, pid int) error {
			// once it writes its pack, or it ends
			for i := 0; i < 2000 && !processGone(pid); i++ {
				if m, _ := filepath.Glob(filepath.Join(s.gitDir, "objects", "pack", "tmp_pack_*")); len(m) > 0 {
					break
				}
				time.Sleep(time.Millisecond)
			}
			return kill(pid)
		}},
		{"stopped after the pack", false, "packed", func(*Store, int) error { return crash }},
		{"stopped before the old packs go", true, "packed", func(*Store, int) error { return crash }},
		{"prune-packed killed", false, "pruning", func(s *Store, pid int) error { return kill(pid) }},
		{"Close", true, "started", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lab, root := checkpointtest.Project(t)
			manyFiles(t, root, 600)
			s, err := Open(Options{Root: root, Dir: filepath.Join(lab, "store")})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			states := map[int]string{}
			pack := func(full bool) error {
				s.mu.Lock()
				s.startPack(full, true)
				s.mu.Unlock()
				return s.waitPack(t)
			}
			// Two packs and loose objects: a full pack has packs to replace.
			for round := 0; round < 3; round++ {
				for i := 0; i < 3; i++ {
					id, before := command(t, s, round*10+i, true)
					states[id] = before
				}
				checkpointtest.Sh(t, root, "echo "+strconv.Itoa(round)+" > d00"+strconv.Itoa(round)+"/f000.txt")
				if round < 2 {
					if err := pack(false); err != nil {
						t.Fatal(err)
					}
				}
			}
			var pid int
			closed := make(chan struct{})
			setPackHook(t, func(step string, p int) error {
				if step != c.at {
					return nil
				}
				pid = p
				if c.stop == nil {
					go func() { s.Close(); close(closed) }()
					for !s.packStopping() {
						time.Sleep(time.Millisecond)
					}
					return nil
				}
				return c.stop(s, p)
			})
			if err := pack(c.full); err == nil && c.stop != nil {
				t.Logf("the pack ended without an error")
			}
			if c.stop == nil {
				<-closed
			}
			setPackHook(t, func(string, int) error { return nil })
			if pid > 0 && !processGone(pid) {
				t.Errorf("git (pid %d) is still there", pid)
			}
			fsck(t, s)
			for id, want := range states {
				if _, _, err := s.Restore(id); err != nil {
					t.Fatal(err)
				}
				if got := checkpointtest.State(t, root); got != want {
					t.Errorf("undo %d:\n%s", id, checkpointtest.DiffLines(want, got))
				}
			}
			if err := pack(true); err != nil {
				t.Fatal(err)
			}
			if loose, packs, garbage := objectCounts(t, s); loose != 0 || packs != 1 || garbage != 0 {
				t.Errorf("the next pack left %d loose objects, %d packs, %d garbage files", loose, packs, garbage)
			}
			fsck(t, s)
		})
	}
}

// packStopping reports whether stopPack was asked to stop the pack.
func (s *Store) packStopping() bool {
	j := s.pack
	if j == nil {
		return false
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.stop
}

// TestPackDiesWithProcess: shellgate killed outright while git packs its
// store (a child process here) takes git with it, and leaves the store whole.
func TestPackDiesWithProcess(t *testing.T) {
	if dir := os.Getenv("CHECKPOINT_PACK_CHILD"); dir != "" {
		packChild(t, dir)
		return
	}
	lane.Live(t)
	lab, root := checkpointtest.Project(t)
	manyFiles(t, root, 1500)
	store := filepath.Join(lab, "store")
	child := exec.Command(os.Args[0], "-test.run", "^TestPackDiesWithProcess$")
	child.Env = append(os.Environ(), "CHECKPOINT_PACK_CHILD="+root+"\n"+store)
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	pid, _ := strconv.Atoi(strings.TrimPrefix(strings.TrimSpace(line), "pack-objects "))
	child.Process.Kill()
	child.Wait()
	if pid == 0 {
		t.Fatalf("the child said %q (%v)", line, err)
	}
	for i := 0; i < 500 && !processGone(pid); i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if !processGone(pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("git pack-objects (pid %d) outlived shellgate", pid)
	}
	s, err := Open(Options{Root: root, Dir: store})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fsck(t, s)
	s.mu.Lock()
	s.startPack(false, true)
	s.mu.Unlock()
	if err := s.waitPack(t); err != nil {
		t.Fatal(err)
	}
	if loose, _, garbage := objectCounts(t, s); loose != 0 || garbage != 0 {
		t.Errorf("the next pack left %d loose objects, %d garbage files", loose, garbage)
	}
}

// packChild checkpoints the project, starts a pack and says its git's pid,
// then waits to be killed.
func packChild(t *testing.T, arg string) {
	root, store, _ := strings.Cut(arg, "\n")
	s, err := Open(Options{Root: root, Dir: store})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Snapshot("run", "x", ""); err != nil {
		t.Fatal(err)
	}
	setPackHook(t, func(step string, pid int) error {
		if step == "started" {
			fmt.Printf("pack-objects %d\n", pid)
			time.Sleep(time.Hour)
		}
		return nil
	})
	s.mu.Lock()
	s.startPack(false, true)
	s.mu.Unlock()
	time.Sleep(time.Hour)
}

// TestPackResumes: a pack stopped after its first batch (Close at the end
// of a one-shot run shorter than the pack) keeps that batch packed, its
// loose copies gone; the next pack goes on with the rest; no git process is
// left; undo still restores byte for byte.
func TestPackResumes(t *testing.T) {
	lane.Live(t)
	lab, root := checkpointtest.Project(t)
	manyFiles(t, root, 600)
	defer func(n int) { packBatch = n }(packBatch)
	packBatch = 100
	s, err := Open(Options{Root: root, Dir: filepath.Join(lab, "store")})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	id, before := command(t, s, 1, true)
	loose, _, _ := objectCounts(t, s)
	if loose < 3*packBatch {
		t.Fatalf("%d loose objects: too few for the test", loose)
	}
	var pids []int
	setPackHook(t, func(step string, pid int) error {
		if step != "started" {
			return nil
		}
		pids = append(pids, pid)
		if len(pids) == 2 {
			go s.Close() // as a one-shot run ends
			for !s.packStopping() {
				time.Sleep(time.Millisecond)
			}
		}
		return nil
	})
	s.mu.Lock()
	s.startPack(false, true)
	s.mu.Unlock()
	s.waitPack(t)
	for _, pid := range pids {
		if !processGone(pid) {
			t.Errorf("git (pid %d) is still there", pid)
		}
	}
	left, packs, garbage := objectCounts(t, s)
	if left != loose-packBatch || packs != 1 || garbage != 0 {
		t.Fatalf("after one batch of %d of %d loose objects: %d loose, %d packs, %d garbage files", packBatch, loose, left, packs, garbage)
	}
	fsck(t, s)
	setPackHook(t, func(string, int) error { return nil })
	s.mu.Lock()
	s.startPack(false, true)
	s.mu.Unlock()
	if err := s.waitPack(t); err != nil {
		t.Fatal(err)
	}
	if left, packs, _ := objectCounts(t, s); left != 0 || packs != 1+(loose-packBatch+packBatch-1)/packBatch {
		t.Errorf("the next pack left %d loose objects in %d packs", left, packs)
	}
	fsck(t, s)
	if _, _, err := s.Restore(id); err != nil {
		t.Fatal(err)
	}
	if got := checkpointtest.State(t, root); got != before {
		t.Errorf("undo %d:\n%s", id, checkpointtest.DiffLines(before, got))
	}
}
