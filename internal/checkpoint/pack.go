package checkpoint

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
)

// packLimit is how many packs the store may have before the background pack
// makes one of all that the checkpoints hold (git gc --auto's
// gc.autoPackLimit, 50, for a store that packs more often).
const packLimit = 20

// packBatch bounds the loose objects one git pack-objects of an incremental
// pack takes: each batch is packed, and its loose copies removed, before
// the next starts, so a pack stopped early (Close at the end of a short
// one-shot run) keeps what it did, and the next one goes on from there
// instead of starting again — else a 10 000-file project's first ~10 000
// objects would never be packed by runs shorter than the pack. A variable
// for the tests.
var packBatch = 2000

// packHook lets tests stop a pack at a step, as a crash or a kill would:
// "started" (git pack-objects runs, pid given), "packed" (its pack is in
// place), "pruning" (git prune-packed runs, pid given). An error ends the
// pack there.
var packHook = func(step string, pid int) error { return nil }

// packJob is git packing the store's loose objects in the background, while
// commands run and checkpoints are taken. It writes a pack and then removes
// only what a pack holds (loose objects, and the packs a full pack made
// redundant): no ref is touched, and no object written since it started is
// removed, so it needs neither of the store's locks. Its own file lock
// (pack.lock, held while it runs) keeps a second pack, and the size bound's
// gc, from starting beside it in any process.
type packJob struct {
	done chan struct{}
	mu   sync.Mutex
	proc *os.Process // the git process running now
	stop bool        // stopped: start no other
	err  error
}

// loosePacked reports whether git should pack: about a thousand loose
// objects (git's own estimate, gc --auto's, without starting git: more
// than 4 in one of the 256 object directories), or too many packs.
func (s *Store) loosePacked() (pack, full bool) {
	ents, _ := os.ReadDir(filepath.Join(s.gitDir, "objects", "17"))
	packs, _ := filepath.Glob(filepath.Join(s.gitDir, "objects", "pack", "pack-*.pack"))
	return len(ents) > 4 || len(packs) >= packLimit, len(packs) >= packLimit
}

// packBusy reaps this process's pack if it ended, and reports whether a
// pack (this process's or another's) runs.
func (s *Store) packBusy() bool {
	if s.pack != nil {
		select {
		case <-s.pack.done:
			s.pack = nil
		default:
			return true
		}
	}
	f, ok := s.tryPackLock()
	if ok {
		unlockFile(f)
		f.Close()
	}
	return !ok
}

// tryPackLock takes pack.lock if no one holds it.
func (s *Store) tryPackLock() (*os.File, bool) {
	f, err := os.OpenFile(filepath.Join(s.dir, "pack.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, false
	}
	if !tryLockFile(f) {
		f.Close()
		return nil, false
	}
	return f, true
}

// startPack starts packing in the background, unless a pack runs. full
// packs all that the checkpoints hold into one pack. saveCache: the scan
// cache file is written first (false: the caller just wrote it).
func (s *Store) startPack(full, saveCache bool) {
	if s.packBusy() {
		return
	}
	f, ok := s.tryPackLock()
	if !ok {
		return
	}
	j := &packJob{done: make(chan struct{})}
	s.pack = j
	// The scan cache names objects the next checkpoint reuses without
	// writing them again: the file is made to name the last checkpoint's,
	// which a ref holds, so a full pack keeps them (see there).
	if saveCache {
		s.saveScanCache()
	}
	go func() {
		defer close(j.done)
		defer f.Close()
		defer unlockFile(f)
		j.err = s.packObjects(j, full)
	}()
}

// stopPack kills this process's pack, if one runs, and waits for it: what it
// leaves is a valid store (see packObjects).
func (s *Store) stopPack() {
	j := s.pack
	if j == nil {
		return
	}
	j.mu.Lock()
	j.stop = true
	if j.proc != nil {
		j.proc.Kill()
	}
	j.mu.Unlock()
	<-j.done
	s.pack = nil
}

// packObjects packs: incremental, the loose objects, a batch at a time
// (packLoose); full, git pack-objects writes a pack of all the objects the
// refs reach, and then the packs there were before go. Either way git
// prune-packed then removes the loose objects a pack holds. Stopped anywhere — killed, or the process gone — it
// leaves every object where a reader finds it: a pack is in place, its
// index written last, before anything it holds is removed; what a killed
// pack-objects leaves (temporary files, a pack without its index) is removed
// by the next pack. A full pack may drop objects no ref reaches; none of them
// is used again: a checkpoint writes every object it makes (a loose copy),
// except those its scan cache names, which are the last checkpoint's, made
// before the pack started and held by its ref.
func (s *Store) packObjects(j *packJob, full bool) error {
	packDir := filepath.Join(s.gitDir, "objects", "pack")
	s.removePackLeftovers(packDir)
	if !full {
		return s.packLoose(j, packDir)
	}
	old, _ := filepath.Glob(filepath.Join(packDir, "pack-*.pack"))
	args := []string{"pack-objects", "--all", "--reflog", "--indexed-objects", "--non-empty", "--local", "--quiet",
		"--delta-base-offset", "--threads=1"} // one core: the other is the command's
	out, err := s.runPackStep(j, "started", nil, append(args, filepath.Join(packDir, "pack"))...)
	if err != nil {
		return err
	}
	if err := packHook("packed", 0); err != nil {
		return err
	}
	if name := strings.TrimSpace(string(out)); name != "" {
		kept := filepath.Join(packDir, "pack-"+name+".pack")
		for _, p := range old {
			if p != kept {
				removePack(p)
			}
		}
	}
	return s.prunePacked(j)
}

// packLoose packs the loose objects packBatch at a time, each batch named
// to git pack-objects on its standard input (every loose object, reached
// by a ref or not: a full pack drops those no ref reaches), then removed
// by prune-packed; it stops when none is left, or when stopped.
func (s *Store) packLoose(j *packJob, packDir string) error {
	for {
		ids := s.looseObjects(packBatch)
		if len(ids) == 0 {
			return nil
		}
		args := []string{"pack-objects", "--non-empty", "--local", "--quiet", "--delta-base-offset", "--threads=1",
			filepath.Join(packDir, "pack")}
		if _, err := s.runPackStep(j, "started", strings.NewReader(strings.Join(ids, "\n")+"\n"), args...); err != nil {
			return err
		}
		if err := packHook("packed", 0); err != nil {
			return err
		}
		if err := s.prunePacked(j); err != nil {
			return err
		}
		if len(ids) < packBatch {
			return nil
		}
	}
}

// looseObjects lists up to n of the store's loose objects.
func (s *Store) looseObjects(n int) []string {
	var ids []string
	objects := filepath.Join(s.gitDir, "objects")
	for i := 0; i < 256 && len(ids) < n; i++ {
		fan := fmt.Sprintf("%02x", i)
		names, _ := os.ReadDir(filepath.Join(objects, fan))
		for _, e := range names {
			if len(ids) == n {
				break
			}
			if name := e.Name(); len(name) == 38 && isHex(name) {
				ids = append(ids, fan+name)
			}
		}
	}
	return ids
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// prunePacked removes the loose objects a pack holds.
func (s *Store) prunePacked(j *packJob) error {
	if _, err := s.runPackStep(j, "pruning", nil, "prune-packed", "--quiet"); err != nil {
		return err
	}
	s.fanouts.Clear() // prune-packed removed the directories it emptied
	return nil
}

// runPackStep runs one git process of a pack; it dies with this process
// where the system can say so (Linux: a parent-death signal; Windows: a
// kill-on-close job object), and is killed by stopPack.
func (s *Store) runPackStep(j *packJob, step string, stdin io.Reader, args ...string) ([]byte, error) {
	cmd := s.gitCmd("", "", args...)
	cmd.Stdin = stdin // pack-objects reads objects (or with --all, revisions) from it
	var stderr strings.Builder
	cmd.Stderr = &stderr
	var stdout strings.Builder
	cmd.Stdout = &stdout
	dieWithParent(cmd)
	// A child's parent-death signal follows the thread that started it:
	// this one, kept until the child is reaped.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	j.mu.Lock()
	if j.stop {
		j.mu.Unlock()
		return nil, errors.New("checkpoint: pack stopped")
	}
	if err := cmd.Start(); err != nil {
		j.mu.Unlock()
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	afterStart(cmd.Process) // Windows: into a job object that dies with shellgate
	j.proc = cmd.Process
	j.mu.Unlock()
	herr := packHook(step, cmd.Process.Pid)
	err := cmd.Wait()
	j.mu.Lock()
	j.proc = nil
	j.mu.Unlock()
	if herr != nil {
		return nil, herr
	}
	if err != nil {
		return nil, &gitError{args: args, msg: strings.TrimSpace(stderr.String() + " " + err.Error())}
	}
	return []byte(stdout.String()), nil
}

// removePack removes a pack, its index first: a reader then no longer
// looks in it.
func removePack(p string) {
	base := strings.TrimSuffix(p, ".pack")
	os.Remove(base + ".idx")
	for _, ext := range []string{".pack", ".rev", ".bitmap", ".mtimes"} {
		os.Remove(base + ext)
	}
}

// removePackLeftovers removes what a pack stopped midway left: temporary
// files, and a pack without its index (no reader uses it). Only with
// pack.lock held: no other pack writes there then.
func (s *Store) removePackLeftovers(packDir string) {
	ents, _ := os.ReadDir(packDir)
	for _, e := range ents {
		name := e.Name()
		switch {
		case strings.HasPrefix(name, "tmp_") || strings.HasPrefix(name, ".tmp-"):
			os.Remove(filepath.Join(packDir, name))
		case strings.HasPrefix(name, "pack-") && strings.HasSuffix(name, ".pack"):
			base := strings.TrimSuffix(name, ".pack")
			if _, err := os.Stat(filepath.Join(packDir, base+".idx")); errors.Is(err, os.ErrNotExist) {
				removePack(filepath.Join(packDir, name))
			}
		case strings.HasPrefix(name, "pack-") && (strings.HasSuffix(name, ".idx") || strings.HasSuffix(name, ".rev")):
			base := strings.TrimSuffix(strings.TrimSuffix(name, ".idx"), ".rev")
			if _, err := os.Stat(filepath.Join(packDir, base+".pack")); errors.Is(err, os.ErrNotExist) {
				os.Remove(filepath.Join(packDir, name))
			}
		}
	}
}
