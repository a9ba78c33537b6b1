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

// NoSpaceError is a checkpoint that found no space left on the store's
// device: before a command (which then does not run), after it (it ran, its
// changes not recorded), or before an undo (the root as it is, so that the
// undo can be undone; the undo is refused). A command that filled the disk
// is the one the user most wants undone, and a bare "tmp_obj …: no space
// left on device" says neither what failed, nor whether the command ran or
// the undo was done, nor what to free.
type NoSpaceError struct {
	Op    string // NoSpaceBefore, NoSpaceAfter or NoSpaceUndo
	ID    int    // the command it was for (NoSpaceBefore: the last one recorded, 0 for none)
	Store string // the store's directory, where the write failed
	Err   error  // the write that failed
	// Big names the biggest files of the root written since command ID
	// began, biggest first (at most 3): the likely cause.
	Big []string
}

// NoSpaceError.Op: which checkpoint found the disk full.
const (
	NoSpaceBefore = "before" // the one before a command: it was not run
	NoSpaceAfter  = "after"  // the one after a command: it ran
	NoSpaceUndo   = "undo"   // the one an undo takes first: nothing was undone
)

func (e *NoSpaceError) Error() string {
	where := fmt.Sprintf("no space left on the device of the checkpoint store (%s) to checkpoint the root", e.Store)
	var s string
	switch e.Op {
	case NoSpaceBefore:
		s = where + " before the command: it was not run, nothing changed. Free space, then run it again"
	case NoSpaceAfter:
		s = fmt.Sprintf("%s after command %d: the command ran and what it changed is in place, but not recorded; checkpoint %d holds the project as it was before it (undo %d puts that back once there is room). Free space", where, e.ID, e.ID, e.ID)
	default:
		s = fmt.Sprintf("%s before undoing command %d: nothing was undone, the root is as it was. Free space, then undo again", where, e.ID)
	}
	if len(e.Big) > 0 {
		s += fmt.Sprintf("; the biggest files written since command %d began: %s", e.ID, strings.Join(e.Big, ", "))
	}
	return s
}

func (e *NoSpaceError) Unwrap() error { return e.Err }

// bigWalkMax bounds the walk for NoSpaceError.Big.
const bigWalkMax = 200_000

// noSpace turns err, of checkpoint op for command r, into a NoSpaceError
// when it is a full disk's.
func (s *Store) noSpace(err error, op string, r Record) error {
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
		if n++; err != nil || n > bigWalkMax || r.ID == 0 {
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
	e := &NoSpaceError{Op: op, ID: r.ID, Store: s.dir, Err: err}
	for _, f := range files[:min(3, len(files))] {
		e.Big = append(e.Big, ShowPath(f.path)+" ("+ShowSize(f.size)+")")
	}
	return e
}
