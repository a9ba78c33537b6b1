//go:build unix

package cachestore

import (
	"os"

	"golang.org/x/sys/unix"
)

// holdShared opens path and holds a shared lock on it, waiting for an
// exclusive one (a Sweep) to end.
func holdShared(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_SH); err != nil {
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
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if err == unix.EWOULDBLOCK {
			return nil, errHeld
		}
		return nil, err
	}
	return f, nil
}
