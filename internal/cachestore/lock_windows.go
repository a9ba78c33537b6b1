package cachestore

import (
	"os"

	"golang.org/x/sys/windows"
)

// holdShared opens path and holds a shared lock on it, waiting for an
// exclusive one (a Sweep) to end.
func holdShared(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	ol := new(windows.Overlapped)
	if err := windows.LockFileEx(windows.Handle(f.Fd()), 0, 0, 1, 0, ol); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// holdExclusive takes path's lock exclusively if no one holds it, else
// returns errHeld.
func holdExclusive(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	ol := new(windows.Overlapped)
	flags := uint32(windows.LOCKFILE_EXCLUSIVE_LOCK | windows.LOCKFILE_FAIL_IMMEDIATELY)
	if err := windows.LockFileEx(windows.Handle(f.Fd()), flags, 0, 1, 0, ol); err != nil {
		f.Close()
		if err == windows.ERROR_LOCK_VIOLATION {
			return nil, errHeld
		}
		return nil, err
	}
	return f, nil
}
