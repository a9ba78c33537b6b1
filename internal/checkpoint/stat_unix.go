//go:build linux || darwin || freebsd || netbsd || openbsd

package checkpoint

import (
	"io/fs"
	"os"
	"sort"
	"syscall"

	"golang.org/x/sys/unix"
)

// readDir lists dir's entries sorted by name, and a function that stats one
// of them (not following a symlink) through the directory's descriptor, which
// spares the kernel the walk of the whole path for each file.
func readDir(dir string) ([]fs.DirEntry, func(name string) (fileStat, error), func(), error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, nil, nil, err
	}
	ents, err := f.ReadDir(-1)
	if err != nil {
		f.Close()
		return nil, nil, nil, err
	}
	sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
	return ents, statIn(f), func() { f.Close() }, nil
}

// statDir is readDir's stat function without the listing.
func statDir(dir string) (func(name string) (fileStat, error), func(), error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, nil, err
	}
	return statIn(f), func() { f.Close() }, nil
}

// statIn stats an entry of the open directory f, not following a symlink.
func statIn(f *os.File) func(name string) (fileStat, error) {
	fd := int(f.Fd())
	return func(name string) (fileStat, error) {
		var st unix.Stat_t
		for {
			err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
			if err == unix.EINTR {
				continue
			}
			if err != nil {
				return fileStat{}, &fs.PathError{Op: "lstat", Path: name, Err: err}
			}
			break
		}
		var mode fs.FileMode
		switch uint32(st.Mode) & unix.S_IFMT {
		case unix.S_IFREG:
		case unix.S_IFDIR:
			mode = fs.ModeDir
		case unix.S_IFLNK:
			mode = fs.ModeSymlink
		default:
			mode = fs.ModeIrregular
		}
		return fileStat{
			size:  st.Size,
			mtime: st.Mtim.Nano(),
			ctime: st.Ctim.Nano(),
			ino:   uint64(st.Ino),
			mode:  mode | fs.FileMode(uint32(st.Mode)&0o777),
			nlink: uint32(st.Nlink),
		}, nil
	}
}

// canLink: ignored files over IgnoredMaxSize are kept by hard links
// (links.go), named by their inode.
const canLink = true

// statOf is fileStat of fi, an lstat's.
func statOf(fi os.FileInfo) (fileStat, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileStat{}, false
	}
	var mode fs.FileMode
	switch {
	case fi.Mode().IsRegular():
	case fi.IsDir():
		mode = fs.ModeDir
	case fi.Mode()&fs.ModeSymlink != 0:
		mode = fs.ModeSymlink
	default:
		mode = fs.ModeIrregular
	}
	mt, ct := statTimes(st)
	return fileStat{size: st.Size, mtime: mt, ctime: ct, ino: uint64(st.Ino), mode: mode | fi.Mode().Perm(), nlink: uint32(st.Nlink)}, true
}

// linkCount is fi's number of names and the bytes its blocks take.
func linkCount(fi os.FileInfo) (uint64, int64, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return uint64(st.Nlink), int64(st.Blocks) * 512, true
}
