//go:build unix

package shellgate

import "syscall"

// openDir proves a directory can be opened, as a command starting in it
// must; by the system call alone, because os.Open would start the runtime's
// poller (five more system calls) for a check that opens nothing else.
func openDir(dir string) error {
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	return syscall.Close(fd)
}
