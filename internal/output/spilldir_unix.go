//go:build unix

package output

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// DefaultSpillDir is the private directory for spill files,
// os.TempDir()/shellgate-spill-<uid>. It is created, mode 0700, with the first spill file.
func DefaultSpillDir() string {
	return filepath.Join(os.TempDir(), "shellgate-spill-"+strconv.Itoa(os.Getuid()))
}

// checkPrivateDir makes sure dir, a fixed name in a shared directory, is a real
// directory owned by us (not a symlink or a directory someone else planted) and
// that only we can read it.
func checkPrivateDir(dir string) error {
	info, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !info.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	if st, ok := info.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return fmt.Errorf("%s is owned by uid %d, not by us", dir, st.Uid)
	}
	if info.Mode().Perm()&0o077 != 0 {
		return os.Chmod(dir, 0o700)
	}
	return nil
}
