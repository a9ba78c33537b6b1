// Package procfs reads /proc with plain system calls: a scan of processes
// reads one file or more per process, and os.ReadFile's stat and network
// poller registration would triple the calls.
package procfs

import "golang.org/x/sys/unix"

// Short is a margin under which a short read of /proc is its end: its
// directories stop only when an entry (~30 bytes) does not fit the buffer,
// and its seq files (children, syscall, stat, mountinfo) only when the
// caller's buffer is full or their own (a page, at least 4 KiB) cannot take
// the next record (well under 1 KiB for these).
const Short = 1024

// Read reads the file at path whole into *buf, which it grows and keeps for
// the next read. With seq (a seq file: children, syscall, stat; not
// environ, which may stop short anywhere), a read that leaves room in buf is
// taken as the end without a further read to see it (see Short).
func Read(path string, buf *[]byte, seq bool) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	b := (*buf)[:0]
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := unix.Read(fd, b[len(b):cap(b)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			*buf = b
			return nil, err
		}
		if n == 0 {
			*buf = b
			return b, nil
		}
		room := cap(b) - len(b)
		b = b[:len(b)+n]
		if seq && n < room && n < 4096-Short {
			*buf = b
			return b, nil
		}
	}
}
