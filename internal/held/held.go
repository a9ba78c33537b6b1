// Package held tells a directory in a shared place that a live process still
// uses from one whose owner is gone. The owner holds a lock on the directory
// while it lives; the kernel lets go when it exits, however it ends, so
// another process cleaning up after killed ones removes only what nobody
// holds. Unlike a PID in the name, this holds across PID namespaces and
// PID reuse.
package held

import (
	"os"
	"time"
)

// Grace is how young a directory Unheld never calls unheld: its owner may be
// between making it and taking hold.
const Grace = time.Minute

// A Dir is a held directory; Close lets go of it.
type Dir struct{ f *os.File }

// Hold holds dir until Close or the process's end. Where locks are not
// supported (see Supported) it holds nothing and succeeds.
func Hold(dir string) (*Dir, error) {
	if !Supported {
		return &Dir{}, nil
	}
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	if err := lock(f, false); err != nil {
		f.Close()
		return nil, err
	}
	return &Dir{f: f}, nil
}

// Close lets go of the directory.
func (d *Dir) Close() {
	if d != nil && d.f != nil {
		d.f.Close()
		d.f = nil
	}
}

// Unheld reports whether nobody holds dir, made or changed at modified, and
// it is past Grace. It is false where that cannot be told (not Supported).
func Unheld(dir string, modified time.Time) bool {
	if !Supported || time.Since(modified) < Grace {
		return false
	}
	f, err := os.Open(dir)
	if err != nil {
		return false
	}
	defer f.Close()
	return lock(f, true) == nil // EWOULDBLOCK: its owner lives
}
