package copyup

import (
	"strconv"

	"golang.org/x/sys/unix"
)

// storeLinks is a checkpoint store's directory of links (package
// checkpoint keeps a big ignored file of the root by a hard link there,
// named by its inode) and the size up to which a file whose other name is
// there is still copied before a write.
type storeLinks struct {
	dir int   // a descriptor of the directory
	max int64 // bytes
}

// SetStoreLinks has files over max bytes whose one other name is in the
// checkpoint store's links directory dir (a descriptor the Opener keeps)
// written in place, not copied first: a copy of a 100 MB database at every
// command that opens it for writing took a third of a second and left a
// version in the store each time. The store's name then holds what was
// written, and undo says the file was written in place and cannot be put
// back, as without the sandbox; an rm or a rename over it is still undone.
// An open that truncates, which copies no bytes, is copied as before.
func (o *Opener) SetStoreLinks(dir int, max int64) {
	o.links = &storeLinks{dir: dir, max: max}
}

// only says whether the regular file open at fd, of stat st, is over the
// size and has two names: the one it was opened by, and the store's link.
// Names a command cannot make (outside the root and the session's /tmp)
// never come back once gone, so a file that had two names at the first
// fstat, its store link and its open name after, and two names at the last,
// had no third one meanwhile.
func (l *storeLinks) only(fd int, st *unix.Stat_t) bool {
	if l == nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Size <= l.max || st.Nlink != 2 {
		return false
	}
	var at unix.Stat_t
	if unix.Fstatat(l.dir, strconv.FormatUint(st.Ino, 10), &at, unix.AT_SYMLINK_NOFOLLOW) != nil || at.Dev != st.Dev || at.Ino != st.Ino {
		return false
	}
	if !nameHeld(fd) {
		return false
	}
	var again unix.Stat_t
	return unix.Fstat(fd, &again) == nil && again.Nlink == 2
}
