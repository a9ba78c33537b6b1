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
func (s *Store) prune(id int) error {
	now := s.o.Now()
	drop := 0
	for drop < len(s.records)-1 && (len(s.records)-drop > s.o.MaxCount || now.Sub(s.records[drop].Time) > s.o.MaxAge) {
		drop++
	}
	gc := false
	if drop > 0 {
		if err := s.drop(drop); err != nil {
			return err
		}
	}
	if id%sizeEvery == 0 {
		for tries := 0; tries < 8; tries++ {
			size, err := s.Size()
			if err != nil {
				return err
			}
			if size <= s.o.MaxSize || len(s.records) <= 1 {
				break
			}
			if err := s.drop(max(1, len(s.records)/4)); err != nil {
				return err
			}
			s.saveScanCache() // see there
			if _, err := s.git(nil, "", "", "gc", "--quiet", "--prune=now"); err != nil {
				return err
			}
			s.fanouts.Clear()
			gc = true
		}
		if !gc {
			// Pack loose objects once there are about a thousand: each takes a
			// disk block of its own (4 KiB for a checkpoint's small tree).
			// git's own estimate (gc --auto's), without starting git for it:
			// more than 4 loose objects in one of the 256 directories.
			if ents, _ := os.ReadDir(filepath.Join(s.gitDir, "objects", "17")); len(ents) > 4 {
				s.saveScanCache()
				// In the foreground, under the store's lock: a gc left running
				// in the background would pack refs while a checkpoint writes
				// or drops them as files.
				if _, err := s.git(nil, "", "", "-c", "gc.auto=1000", "-c", "gc.autoDetach=false", "gc", "--auto", "--quiet"); err != nil {
					return err
				}
				s.fanouts.Clear() // gc removes the object directories it emptied
			}
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
	return s.rewriteLog(s.records)
}

// Size is the store's size on disk in bytes, counted as git's count-objects
// counts it (its size, size-pack and size-garbage): the loose objects, each
// rounded up to a disk block, and the files of objects/pack.
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
	return total, nil
}
