//go:build !unix && !windows

package output

import (
	"os"
	"path/filepath"
)

// DefaultSpillDir is the directory for spill files, os.TempDir()/shellgate-spill.
func DefaultSpillDir() string {
	return filepath.Join(os.TempDir(), "shellgate-spill")
}

func checkPrivateDir(dir string) error { return nil }
