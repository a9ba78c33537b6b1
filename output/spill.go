package output

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// DefaultSpillDir is the private directory for spill files: os.TempDir()/shellgate-spill-<uid>.
// It is created with mode 0700 when the first spill file is.
func DefaultSpillDir() string {
	return filepath.Join(os.TempDir(), fmt.Sprintf("shellgate-spill-%d", os.Getuid()))
}

// Sweep removes spill files in dir older than olderThan.
// TODO(output): work in progress.
func Sweep(dir string, olderThan time.Duration) error { return nil }
