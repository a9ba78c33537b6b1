// Package tempdir makes a process's private temp dirs for the commands it
// runs, in the shared temp dir. Each is held while in use (package held), so
// that a later process removes what a killed one could not, and never one
// still in use, whatever PID namespace its owner lives in.
package tempdir

import (
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/shellgate/shellgate/internal/held"
)

var (
	mu    sync.Mutex
	holds = map[string]*held.Dir{}
)

// New makes a private temp dir in os.TempDir, named shellgate-tmp-PID-…,
// after removing this user's whose owner is gone. Remove removes it.
func New() (string, error) {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "shellgate-tmp-*-*"))
	for _, d := range dirs {
		if fi, err := os.Lstat(d); err == nil && ours(fi) && held.Unheld(d, fi.ModTime()) {
			os.RemoveAll(d)
		}
	}
	dir, err := os.MkdirTemp("", "shellgate-tmp-"+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return "", err
	}
	h, err := held.Hold(dir)
	if err != nil {
		os.Remove(dir)
		return "", err
	}
	mu.Lock()
	holds[dir] = h
	mu.Unlock()
	return dir, nil
}

// Remove removes dir, one New made, and everything in it.
func Remove(dir string) error {
	err := os.RemoveAll(dir)
	mu.Lock()
	holds[dir].Close()
	delete(holds, dir)
	mu.Unlock()
	return err
}
