package checkpoint

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// NoSpaceError is an undo refused because the checkpoint it takes first
// (the root as it is, so that the undo can be undone) found no space left:
// a command that filled the disk is the one the user most wants undone, and
// a bare "no space left on device" says neither that nothing was undone
// nor what to free.
type NoSpaceError struct {
	ID    int    // the command to undo
	Store string // the store's directory, where the write failed
	Err   error  // the write that failed
	// Big names the biggest files of the root written since command ID
	// began, biggest first (at most 3): the likely cause.
	Big []string
}

func (e *NoSpaceError) Error() string {
	s := fmt.Sprintf("no space left on the device of the checkpoint store (%s) to checkpoint the root before undoing command %d: nothing was undone, the root is as it was. Free space, then undo again", e.Store, e.ID)
	if len(e.Big) > 0 {
		s += fmt.Sprintf("; the biggest files written since command %d began: %s", e.ID, strings.Join(e.Big, ", "))
	}
	return s
}

func (e *NoSpaceError) Unwrap() error { return e.Err }

// bigWalkMax bounds the walk for NoSpaceError.Big.
const bigWalkMax = 200_000

// noSpace turns err into a NoSpaceError when it is a full disk's.
func (s *Store) noSpace(err error, r Record) error {
	if !errors.Is(err, syscall.ENOSPC) {
		return err
	}
	type file struct {
		path string
		size int64
	}
	var files []file
	n := 0
	filepath.WalkDir(s.root, func(p string, d fs.DirEntry, err error) error {
		if n++; err != nil || n > bigWalkMax {
			return fs.SkipAll
		}
		if !d.Type().IsRegular() {
			return nil
		}
		fi, err := d.Info()
		if err == nil && !fi.ModTime().Before(r.Time.Add(-time.Second)) {
			rel, _ := filepath.Rel(s.root, p)
			files = append(files, file{filepath.ToSlash(rel), fi.Size()})
		}
		return nil
	})
	slices.SortFunc(files, func(a, b file) int { return int(min(max(b.size-a.size, -1), 1)) })
	e := &NoSpaceError{ID: r.ID, Store: s.dir, Err: err}
	for _, f := range files[:min(3, len(files))] {
		e.Big = append(e.Big, ShowPath(f.path)+" ("+ShowSize(f.size)+")")
	}
	return e
}
