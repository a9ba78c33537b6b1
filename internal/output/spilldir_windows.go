package output

import (
	"os"
	"path/filepath"
)

// DefaultSpillDir is the directory for spill files, os.TempDir()/shellgate-spill.
// On Windows the temp dir is already per user.
func DefaultSpillDir() string {
	return filepath.Join(os.TempDir(), "shellgate-spill")
}

// checkPrivateDir: the per-user temp dir's ACL already keeps other users out.
func checkPrivateDir(dir string) error { return nil }
