// Package tempdir makes a process's private temp dir for the commands it
// runs. Its name carries the process's PID, so that a later process removes
// what a killed one could not.
package tempdir

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// New makes a private temp dir in os.TempDir, named shellgate-tmp-PID-…,
// after removing those whose owner is gone (this user's directories only).
func New() (string, error) {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "shellgate-tmp-*-*"))
	for _, d := range dirs {
		owner, err := strconv.Atoi(strings.SplitN(filepath.Base(d), "-", 4)[2])
		if err != nil || owner == os.Getpid() || alive(owner) {
			continue
		}
		if fi, err := os.Lstat(d); err == nil && ours(fi) {
			os.RemoveAll(d)
		}
	}
	return os.MkdirTemp("", "shellgate-tmp-"+strconv.Itoa(os.Getpid())+"-")
}
