package checkpoint

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
)

// sizeEvery is how many commands pass between two looks at the store's
// size (git count-objects), and two chances for git to pack loose objects.
const sizeEvery = 64

// prune drops the oldest records past MaxCount or MaxAge and, every
// sizeEvery commands, past MaxSize; git then forgets what no record holds.
// Counted by the command's id, which the store keeps, not per process: a
// store only one-shot runs use (one command a process) is bounded too.
// Under DeferUpkeep it only notes what is due, for Upkeep.
func (s *Store) prune(id int) error {
	if s.deferUpkeep {
		s.due.records = true
		s.due.size = s.due.size || id%sizeEvery == 0
		return nil
	}
	if err := s.pruneRecords(); err != nil {
		return err
	}
	if id%sizeEvery != 0 {
		return nil
	}
	size, err := s.Size()
	if err != nil {
		return err
	}
	return s.bound(size, true)
}

// pruneSlack: past MaxCount (MaxAge), the records go down to 31/32 of it.
const pruneSlack = 32

// pruneRecords drops the oldest records past MaxCount or MaxAge, unless git
// packs in the background: then they are left for later (due.records).
func (s *Store) pruneRecords() error {
	s.due.records = false
	now := s.o.Now()
	n := len(s.records)
	if n == 0 || n <= s.o.MaxCount && now.Sub(s.records[0].Time) <= s.o.MaxAge {
		return nil
	}
	// While git packs in the background, refs stay as they are (it reads
	// them as it starts); the records past the bounds go at a later command.
	if s.packBusy() {
		s.due.records = true
		return nil
	}
	// Past a bound, a slice of the oldest goes at once (a 32nd of the
	// count, of the age): the record file is rewritten and synced once
	// every ~30 commands of a full store, not at each.
	count, age := s.o.MaxCount-s.o.MaxCount/pruneSlack, s.o.MaxAge-s.o.MaxAge/pruneSlack
	drop := 0
	for drop < n-1 && (n-drop > count || now.Sub(s.records[drop].Time) > age) {
		drop++
	}
	if drop > 0 {
		return s.drop(drop)
	}
	return nil
}

// bound holds the store to MaxSize, the store being size bytes, or else has
// git pack its loose objects when there are many; saveCache: the scan cache
// file is written before a pack starts (see startPack).
func (s *Store) bound(size int64, saveCache bool) error {
	// The files only links hold (an ignored database rewritten at each
	// command leaves a version a command) take at most half of it, the
	// oldest going first: otherwise they would push out the checkpoints of
	// everything else.
	if over := s.linksSize() - s.o.MaxSize/2; over > 0 {
		size -= s.shedLinks(over)
	}
	if size > s.o.MaxSize && len(s.records) > 1 {
		return s.shrink(size)
	}
	// Packing loose objects (each takes a disk block of its own, 4 KiB for
	// a checkpoint's small tree) runs beside the commands: the first pack
	// of a new 10 000-file project's objects takes seconds.
	if pack, full := s.loosePacked(); pack {
		s.startPack(full, saveCache)
	}
	return nil
}

// DeferUpkeep has the store leave the upkeep a checkpoint used to do in the
// command's path — the records past MaxCount and MaxAge dropped, the size
// look every sizeEvery commands (a stat of every loose object) with the
// shrink or pack it calls for, and the scan cache file written (the whole
// cache encoded) — to Upkeep, which its owner calls once the command's
// answer is out (package keeper: after each answer to a checkpoint after a
// command, and before it ends). A checkpoint is complete without it: only
// the bounds wait, and a process gone before its Upkeep leaves them to the
// next one's. Call it before the first checkpoint.
func (s *Store) DeferUpkeep() {
	s.mu.Lock()
	s.deferUpkeep = true
	s.mu.Unlock()
}

// upkeepDue is what the checkpoints since the last Upkeep left to it.
type upkeepDue struct {
	records bool // records were added: MaxCount and MaxAge to apply
	size    bool // a command id a multiple of sizeEvery was given: MaxSize to look at
	cache   bool // the scan cache file is to be written
}

// upkeepHook lets tests see Upkeep's steps: "locked" (the records were
// pruned, the locks let go), "looked" (the size and the cache file, outside
// the locks), "done".
var upkeepHook = func(step string) {}

// Upkeep does what the checkpoints since it last ran left to it under
// DeferUpkeep (a no-op when nothing is due). The look at the store's size
// and the encoding of the scan cache, the slow parts, run outside the
// store's locks: a checkpoint asked for meanwhile waits only for the
// records' pruning, the cache file's rename and, when the store is past
// MaxSize, the shrink.
func (s *Store) Upkeep() error {
	s.mu.Lock()
	idle := s.due == upkeepDue{}
	s.mu.Unlock()
	if idle {
		return nil // not even the locks
	}
	var (
		due   upkeepDue
		cache scanCache
		read  int
	)
	err := s.locked(func() error {
		due, s.due = s.due, upkeepDue{}
		cache, read = s.cache, s.unsaved
		if due.records {
			if err := s.pruneRecords(); err != nil { // it keeps due.records when it must wait
				s.due = due
				return err
			}
		}
		return nil
	})
	if err != nil || !due.size && !due.cache {
		return err
	}
	// A pack is started only with the cache file naming a recorded
	// checkpoint's objects (see startPack): it is written first.
	due.cache = due.cache || due.size
	upkeepHook("locked")
	var (
		size int64
		b    []byte
	)
	if due.cache {
		// The trees of a checkpoint's cache are never changed once it is
		// taken (a later walk makes new ones): no lock is needed to read
		// them.
		b = encodeScanCache(cache, s.root)
	}
	if due.size {
		if size, err = s.Size(); err != nil {
			s.mu.Lock()
			s.due.size, s.due.cache = true, true
			s.mu.Unlock()
			return err
		}
	}
	upkeepHook("looked")
	err = s.locked(func() error {
		if b != nil {
			// Written under the locks, as a checkpoint writes it: what this
			// process last wrote is what loadScanCache compares with. The
			// files read since the encoding are left for the next write.
			s.writeScanCache(b)
			s.unsaved = max(0, s.unsaved-read)
		}
		if due.size {
			// The file names the objects of a checkpoint a record holds (the
			// newest when it was encoded): a pack keeps them.
			return s.bound(size, false)
		}
		return nil
	})
	upkeepHook("done")
	return err
}

// shrink drops the oldest quarter of the records until the store is within
// MaxSize, and has git forget what no record holds, in the foreground: git's
// gc removes what no ref reaches, which no checkpoint may write beside it.
func (s *Store) shrink(size int64) error {
	s.stopPack() // gc packs it all again
	f, err := os.OpenFile(filepath.Join(s.dir, "pack.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	defer f.Close()
	if err := lockFile(f); err != nil { // another process's pack
		return fmt.Errorf("checkpoint: lock: %w", err)
	}
	defer unlockFile(f)
	for tries := 0; tries < 8 && size > s.o.MaxSize && len(s.records) > 1; tries++ {
		if err := s.drop(max(1, len(s.records)/4)); err != nil {
			return err
		}
		s.saveScanCache() // see there
		if _, err := s.git(nil, "", "", "gc", "--quiet", "--prune=now"); err != nil {
			return err
		}
		s.fanouts.Clear()
		if size, err = s.Size(); err != nil {
			return err
		}
	}
	return nil
}

// drop forgets the n oldest records: their refs go (loose files, and lines
// of packed-refs once git's gc packed them), without starting git.
func (s *Store) drop(n int) error {
	gone := map[string]bool{}
	for _, r := range s.records[:n] {
		for _, side := range []string{"-b", "-a"} {
			name := strconv.Itoa(r.ID) + side
			gone["refs/cp/"+name] = true
			if err := os.Remove(filepath.Join(s.gitDir, "refs", "cp", name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("checkpoint: %w", err)
			}
		}
	}
	packed := filepath.Join(s.gitDir, "packed-refs")
	if b, err := os.ReadFile(packed); err == nil {
		var out bytes.Buffer
		skip := false
		for _, line := range bytes.SplitAfter(b, []byte("\n")) {
			if len(line) == 0 {
				continue
			}
			if line[0] == '^' { // the peeled id of the line before
				if !skip {
					out.Write(line)
				}
				continue
			}
			_, ref, _ := bytes.Cut(bytes.TrimRight(line, "\n"), []byte(" "))
			skip = line[0] != '#' && gone[string(ref)]
			if !skip {
				out.Write(line)
			}
		}
		if out.Len() != len(b) {
			if err := writeAtomic(packed, out.Bytes()); err != nil {
				return err
			}
		}
	}
	s.records = append([]Record(nil), s.records[n:]...)
	if err := s.rewriteLog(s.records); err != nil {
		return err
	}
	// The links of ignored files only the dropped checkpoints listed go
	// with them: a link's file takes space once the root no longer has it.
	return s.pruneLinks()
}

// Size is the store's size on disk in bytes, counted as git's count-objects
// counts it (its size, size-pack and size-garbage): the loose objects, each
// rounded up to a disk block, and the files of objects/pack; and the
// ignored files kept by links that the root no longer holds (linksSize).
func (s *Store) Size() (int64, error) {
	objects := filepath.Join(s.gitDir, "objects")
	dirs, err := os.ReadDir(objects)
	if err != nil {
		return 0, fmt.Errorf("checkpoint: %w", err)
	}
	var total int64
	for _, d := range dirs {
		name := d.Name()
		if !d.IsDir() || name == "info" {
			continue
		}
		ents, err := os.ReadDir(filepath.Join(objects, name))
		if err != nil {
			continue
		}
		for _, e := range ents {
			fi, err := e.Info()
			if err != nil || !fi.Mode().IsRegular() {
				continue
			}
			if name == "pack" {
				total += fi.Size()
			} else {
				total += (fi.Size() + 4095) &^ 4095
			}
		}
	}
	return total + s.linksSize(), nil
}
