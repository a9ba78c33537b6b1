//go:build !windows

package tempdir

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// alive reports whether a process pid exists (perhaps another user's).
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// ours reports whether fi is a directory of this user's.
func ours(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && fi.IsDir() && int(st.Uid) == os.Getuid()
}
