//go:build unix && !linux

package beneath

import "golang.org/x/sys/unix"

// dirFlags opens a directory only to work beneath it.
const dirFlags = unix.O_RDONLY

// openBeneath opens rel, a directory beneath dirFD, name by name, each
// with O_NOFOLLOW.
func openBeneath(dirFD int, rel string) (int, error) { return walkBeneath(dirFD, rel) }

// chmodRegular sets the mode of name in dirFD if it is a regular file; a
// symlink swapped in after the look gets the mode itself (lchmod), its
// target none.
func chmodRegular(dirFD int, name string, mode uint32) error {
	var st unix.Stat_t
	if err := unix.Fstatat(dirFD, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return err
	}
	if uint32(st.Mode)&unix.S_IFMT != unix.S_IFREG {
		return errNotRegular
	}
	return unix.Fchmodat(dirFD, name, mode, unix.AT_SYMLINK_NOFOLLOW)
}

// chmodDir gives the directory name of dirFD u+rwx, not following a
// symlink swapped in after enterOwn's look (lchmod: the link gets it, its
// target none).
func chmodDir(dirFD int, name string) error {
	var st unix.Stat_t
	if err := unix.Fstatat(dirFD, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return err
	}
	return unix.Fchmodat(dirFD, name, uint32(st.Mode)&0o7777|0o700, unix.AT_SYMLINK_NOFOLLOW)
}
