package output

import (
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"math/rand/v2"

	"github.com/shellgate/shellgate/internal/held"
)

// SessionDirPrefix starts the name of a Gate's own spill directory inside the
// spill directory: one per Gate, so that one session's output is not
// another's to read.
const SessionDirPrefix = "s-"

// A SessionDir is one owner's (a Gate's) spill directory inside a spill
// directory. It is made on first need and held while its owner lives, so
// Sweep removes an empty one whose owner is gone (killed before it could
// remove it) at once, and never one still in use however old.
type SessionDir struct {
	Path string

	mu   sync.Mutex
	made bool      // by Make: a Gate that only checks never makes it
	hold *held.Dir // nil until made
}

// NewSessionDir names a new session directory in spillDir; nothing is made yet.
func NewSessionDir(spillDir string) *SessionDir {
	return &SessionDir{Path: filepath.Join(spillDir, SessionDirPrefix+strconv.FormatUint(rand.Uint64(), 36))}
}

// Make makes the directory, mode 0700, and holds it; once made, it does
// nothing. Made in the shared default spill directory, that one must be ours
// and private (see prepareDir).
func (d *SessionDir) Make() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.hold != nil {
		return nil
	}
	if err := prepareDir(d.Path); err != nil {
		return err
	}
	d.made = true
	h, err := held.Hold(d.Path)
	if err != nil {
		return err
	}
	d.hold = h
	return nil
}

// Close removes the directory if nothing was spilled into it (what was is
// kept for its retention), and the shared default spill directory with it
// when that is left empty, then lets go of it. Never made, there is nothing
// to remove: a check's Close costs no system call.
func (d *SessionDir) Close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.made {
		return
	}
	os.Remove(d.Path)
	if parent := filepath.Dir(d.Path); filepath.Clean(parent) == filepath.Clean(DefaultSpillDir()) {
		os.Remove(parent) // fails while another owner's directory or a kept file is there
	}
	d.hold.Close()
	d.hold = nil
}
