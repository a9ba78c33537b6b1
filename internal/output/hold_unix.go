//go:build unix

package output

import (
	"os"
	"syscall"
	"time"
)

// holdDir takes a shared lock on the open directory f, kept until f is closed
// (the owner's process ending closes it too).
func holdDir(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_SH)
}

// unowned reports whether the session directory dir is nobody's: past the
// grace of a new one and held by no one.
func unowned(dir string, modified, _ time.Time) bool {
	if time.Since(modified) < claimGrace {
		return false
	}
	f, err := os.Open(dir)
	if err != nil {
		return false
	}
	defer f.Close()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	return err == nil // EWOULDBLOCK: its owner lives
}
