package beneath

import (
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// dirFlags opens a directory only to work beneath it.
const dirFlags = unix.O_PATH

// openBeneath opens rel, a directory beneath dirFD, resolving no symlink
// (openat2; a kernel without it, before 5.6, walks rel name by name).
func openBeneath(dirFD int, rel string) (int, error) {
	fd, err := Dir(dirFD, rel)
	if err == unix.ENOSYS || err == unix.EPERM && !strings.Contains(rel, "..") {
		// ENOSYS: no openat2; EPERM: a seccomp filter refusing it
		return walkBeneath(dirFD, rel)
	}
	return fd, err
}

// chmodRegular sets the mode of name in dirFD if it is a regular file,
// through a descriptor of that file: a symlink swapped in between is not
// followed.
func chmodRegular(dirFD int, name string, mode uint32) error {
	fd, err := unix.Openat(dirFD, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if uint32(st.Mode)&unix.S_IFMT != unix.S_IFREG {
		return errNotRegular
	}
	err = unix.Fchmodat(fd, "", mode, unix.AT_EMPTY_PATH) // fchmodat2, Linux 6.6
	if err == unix.EOPNOTSUPP || err == unix.ENOSYS || err == unix.EINVAL || err == unix.EPERM {
		// As glibc does: the file's descriptor as /proc names it.
		err = unix.Fchmodat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(fd), mode, 0)
	}
	return err
}

// chmodDir gives the directory name of dirFD u+rwx through a descriptor of
// it, if the process's user owns it: a symlink swapped in between is not
// followed, nor another's directory moved there changed.
func chmodDir(dirFD int, name string) error {
	fd, err := unix.Openat(dirFD, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if int(st.Uid) != os.Geteuid() {
		return unix.EPERM
	}
	mode := uint32(st.Mode)&0o7777 | 0o700
	err = unix.Fchmodat(fd, "", mode, unix.AT_EMPTY_PATH) // fchmodat2, Linux 6.6
	if err == unix.EOPNOTSUPP || err == unix.ENOSYS || err == unix.EINVAL || err == unix.EPERM {
		err = unix.Fchmodat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(fd), mode, 0)
	}
	return err
}
