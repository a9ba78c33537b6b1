package audit

import (
	"os"

	"golang.org/x/sys/windows"
)

// lock takes an exclusive lock on path, creating it, and returns its release.
func lock(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	var ol windows.Overlapped
	if err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK, 0, 1, 0, &ol); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil // closing the handle releases the lock
}

// syncDir does nothing: Windows has no fsync of a directory; NTFS journals names.
func syncDir(string) {}
