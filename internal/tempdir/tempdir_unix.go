//go:build !windows

package tempdir

import (
	"io/fs"
	"os"
	"syscall"
)

// ours reports whether fi is a directory of this user's.
func ours(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && fi.IsDir() && int(st.Uid) == os.Getuid()
}
