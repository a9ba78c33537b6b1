//go:build !linux

package repowatch

import "os"

// dir is a directory by its path: without openat, a symlink swapped in
// between the look and the read may be followed, which only misleads the
// report.
type dir struct{ path string }

type entry struct {
	name           string
	isDir, regular bool
}

func openRoot(path string) (dir, error) { return dir{}.open("", path) }

func (dir) open(_, full string) (dir, error) {
	if fi, err := os.Lstat(full); err != nil || !fi.IsDir() {
		return dir{}, os.ErrNotExist
	}
	return dir{full}, nil
}

func (dir) close() {}

func (d dir) watchPath(full string) string { return full }

func (d dir) entries([]byte) ([]entry, error) {
	f, err := os.Open(d.path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	des, err := f.ReadDir(-1)
	out := make([]entry, 0, len(des))
	for _, de := range des {
		out = append(out, entry{name: de.Name(), isDir: de.IsDir(), regular: de.Type().IsRegular()})
	}
	return out, err
}
