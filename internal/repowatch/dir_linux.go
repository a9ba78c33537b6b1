package repowatch

import (
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"
)

// dir is an open directory: read with getdents into a reused buffer, each
// child opened beneath it, a symlink never followed.
type dir struct{ fd int }

// entry is a directory entry's name and type.
type entry struct {
	name     string
	isDir    bool
	regular  bool
	resolved bool // the type is known
}

func openRoot(path string) (dir, error) { return openIn(dir{unix.AT_FDCWD}, path) }

func (d dir) open(name, _ string) (dir, error) { return openIn(d, name) }

func openIn(d dir, name string) (dir, error) {
	fd, err := unix.Openat(d.fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	return dir{fd}, err
}

func (d dir) close() { unix.Close(d.fd) }

// watchPath names the directory itself for inotify, whatever its path now.
func (d dir) watchPath(string) string { return "/proc/self/fd/" + strconv.Itoa(d.fd) }

// maxDirent bounds a linux_dirent64: 19 bytes, a name of up to 255 and its
// NUL, padded to 8.
const maxDirent = 280

// entries reads every entry but . and ..; buf is scratch space.
func (d dir) entries(buf []byte) ([]entry, error) {
	var out []entry
	for {
		n, err := unix.Getdents(d.fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return out, err
		}
		if n <= 0 {
			return out, nil
		}
		for off := 0; off < n; {
			// struct linux_dirent64: ino u64, off s64, reclen u16, type u8, name.
			reclen := int(*(*uint16)(unsafe.Pointer(&buf[off+16])))
			typ := buf[off+18]
			nameBytes := buf[off+19 : off+reclen]
			for i, c := range nameBytes {
				if c == 0 {
					nameBytes = nameBytes[:i]
					break
				}
			}
			off += reclen
			name := string(nameBytes)
			if name == "." || name == ".." {
				continue
			}
			e := entry{name: name, isDir: typ == unix.DT_DIR, regular: typ == unix.DT_REG, resolved: typ != unix.DT_UNKNOWN}
			if !e.resolved {
				var st unix.Stat_t
				if unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
					e.isDir = st.Mode&unix.S_IFMT == unix.S_IFDIR
					e.regular = st.Mode&unix.S_IFMT == unix.S_IFREG
				}
			}
			out = append(out, e)
		}
		if n < len(buf)-maxDirent {
			return out, nil // the next entry would have fit: there is none
		}
	}
}
