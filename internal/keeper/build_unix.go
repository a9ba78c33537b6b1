//go:build unix

package keeper

import (
	"fmt"
	"os"
	"syscall"
)

// fileID is a file's device and inode.
func fileID(fi os.FileInfo) string {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return fmt.Sprintf("%d:%d:%d", st.Dev, st.Ino, fi.Size())
	}
	return fmt.Sprint(fi.Size())
}
