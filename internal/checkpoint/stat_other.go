//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package checkpoint

import (
	"io/fs"
	"os"
	"path/filepath"
)

// readDir lists dir's entries sorted by name, and a function that stats one
// of them (not following a symlink). Without a change time or an inode here,
// a file is taken as unchanged when its size, time and mode are.
func readDir(dir string) ([]fs.DirEntry, func(name string) (fileStat, error), func(), error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, nil, err
	}
	stat, done, _ := statDir(dir)
	return ents, stat, done, nil
}

// statDir is readDir's stat function without the listing.
func statDir(dir string) (func(name string) (fileStat, error), func(), error) {
	stat := func(name string) (fileStat, error) {
		fi, err := os.Lstat(filepath.Join(dir, name))
		if err != nil {
			return fileStat{}, err
		}
		mode := fi.Mode() & (fs.ModeDir | fs.ModeSymlink | fs.ModePerm)
		if !fi.Mode().IsRegular() && fi.Mode()&(fs.ModeDir|fs.ModeSymlink) == 0 {
			mode |= fs.ModeIrregular
		}
		return fileStat{size: fi.Size(), mtime: fi.ModTime().UnixNano(), mode: mode}, nil
	}
	return stat, func() {}, nil
}

// canLink: without inode numbers here, ignored files over IgnoredMaxSize
// are left out, not linked (links.go).
const canLink = false

// statOf is fileStat of fi, an lstat's.
func statOf(fi os.FileInfo) (fileStat, bool) {
	mode := fi.Mode() & (fs.ModeDir | fs.ModeSymlink | fs.ModePerm)
	if !fi.Mode().IsRegular() && fi.Mode()&(fs.ModeDir|fs.ModeSymlink) == 0 {
		mode |= fs.ModeIrregular
	}
	return fileStat{size: fi.Size(), mtime: fi.ModTime().UnixNano(), mode: mode}, true
}

// linkCount: not known here.
func linkCount(fi os.FileInfo) (uint64, int64, bool) { return 0, 0, false }
