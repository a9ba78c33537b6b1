package cachestore

import (
	"errors"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// RemoveMarker removes the marker a volatile overlay's mount leaves in
// layer's work dir (VolatileMarker): incompat/volatile/dirty, two
// directories and a file, each of mode 0, in work/work, of mode 0 too (the
// kernel has made the file since volatile came, Linux 5.10: two rmdirs,
// this path before, never removed it). By descriptors opened without
// following a link, three unlinks (os.RemoveAll's walk was ~15 calls a
// layer). Where a mode 0 refuses (not root: shellgate beside the session,
// as the user), its owner makes that directory searchable first. Anything
// else there goes the long way.
func RemoveMarker(layer string) error {
	work, err := unix.Open(layer+"/work/work", unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err == nil {
		err = removeMarkerIn(work)
		unix.Close(work)
		if err == nil {
			return nil
		}
	}
	return os.RemoveAll(layer + VolatileMarker)
}

// removeMarkerIn removes incompat/volatile/dirty from the directory work.
func removeMarkerIn(work int) error {
	incompat, err := openIn(work, "incompat")
	if err == unix.ENOENT {
		return nil
	}
	if err != nil {
		return err
	}
	defer unix.Close(incompat)
	volatile, err := openIn(incompat, "volatile")
	if err == nil {
		err = unlinkIn(volatile, "dirty", 0)
		unix.Close(volatile)
		if err == nil || err == unix.ENOENT {
			err = unlinkIn(incompat, "volatile", unix.AT_REMOVEDIR)
		}
	}
	if err != nil && err != unix.ENOENT {
		return err
	}
	if err = unlinkIn(work, "incompat", unix.AT_REMOVEDIR); err == unix.ENOENT {
		return nil
	}
	return err
}

// openIn opens the directory name in dir (a descriptor) as a path, not
// following a link.
func openIn(dir int, name string) (int, error) {
	const flags = unix.O_PATH | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
	fd, err := unix.Openat(dir, name, flags, 0)
	if err == unix.EACCES && searchable(dir) == nil {
		fd, err = unix.Openat(dir, name, flags, 0)
	}
	return fd, err
}

// unlinkIn removes name from dir (a descriptor).
func unlinkIn(dir int, name string, flags int) error {
	err := unix.Unlinkat(dir, name, flags)
	if err == unix.EACCES && searchable(dir) == nil {
		err = unix.Unlinkat(dir, name, flags)
	}
	return err
}

// searchable gives dir (a descriptor), whose mode 0 refuses its owner who
// is not root, the mode 0700.
func searchable(dir int) error {
	return unix.Chmod("/proc/self/fd/"+strconv.Itoa(dir), 0o700)
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
