package checkpoint

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// openRegular opens path for reading, and only a regular file: a FIFO or a
// device a command left where a file was expected (a nested repository's
// HEAD, a symlink to /dev/zero) is refused at once rather than opened, which
// for a FIFO waits for a writer that never comes, with the store's lock held.
func openRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("checkpoint: %s is not a regular file", path)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// maxIgnoreFile bounds a .gitignore or an info/exclude read: the project's
// files, which a command may have made a sparse terabyte (an allocation of
// its size would end the process) or a FIFO. Past it the file's rules are
// not read, as if it were not there.
const maxIgnoreFile = 16 << 20

// errTooLong is readSmall's error for a file past its bound.
var errTooLong = errors.New("checkpoint: file too long")

// readSmall reads a regular file of at most max bytes (a git ref, HEAD, a
// .git file): a bigger one (a sparse file of a terabyte) is an error, not
// an allocation of its size.
func readSmall(path string, max int64) ([]byte, error) {
	f, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err == nil && int64(len(b)) > max {
		err = errTooLong
	}
	return b, err
}
