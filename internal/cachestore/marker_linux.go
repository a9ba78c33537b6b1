package cachestore

import (
	"errors"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// RemoveMarker removes the marker a volatile overlay's mount leaves in
// layer's work dir (VolatileMarker: incompat/volatile, two empty
// directories, the outer of mode 0), if it is there: by two rmdirs
// (os.RemoveAll's walk of them was ~10 calls a layer), the outer opened
// without following a link. Where mode 0 refuses the inner one's removal
// (not root), its owner makes the outer searchable first. Anything else
// there goes the long way.
func RemoveMarker(layer string) error {
	marker := layer + VolatileMarker
	fd, err := unix.Open(marker, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err == nil {
		err = unix.Unlinkat(fd, "volatile", unix.AT_REMOVEDIR)
		if errors.Is(err, unix.EACCES) {
			if err = unix.Chmod("/proc/self/fd/"+strconv.Itoa(fd), 0o700); err == nil {
				err = unix.Unlinkat(fd, "volatile", unix.AT_REMOVEDIR)
			}
		}
		unix.Close(fd)
		if err == nil || errors.Is(err, unix.ENOENT) {
			if err = unix.Rmdir(marker); err == nil || errors.Is(err, unix.ENOENT) {
				return nil
			}
		}
	}
	return os.RemoveAll(marker)
}

// RemoveStale removes the work dir a mount of layer set aside (StaleWork),
// if there is one: two empty directories, their marker removed before
// (ReadyLayer).
func RemoveStale(layer string) error {
	if err := os.RemoveAll(layer + StaleWork); err != nil && !errors.Is(err, unix.ENOENT) {
		return err
	}
	return nil
}

// removeMarker is RemoveMarker: where there is none, one call.
func removeMarker(layer string) error { return RemoveMarker(layer) }

// readSmall reads the small file at path (a boot file) by three calls,
// where os.ReadFile's file registers with the runtime's poller (ten calls;
// a session's set-up reads one a cache layer).
func readSmall(path string) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	var b []byte
	buf := make([]byte, 128)
	for {
		n, err := unix.Read(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "read", Path: path, Err: err}
		}
		if n <= 0 {
			return b, nil
		}
		b = append(b, buf[:n]...)
	}
}
