//go:build unix

package inherit

import (
	"os"
	"strconv"
	"syscall"
)

// stopListed marks each descriptor that dir (/proc/self/fd, /dev/fd) lists.
func stopListed(first int, dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	names, err := f.Readdirnames(-1)
	f.Close()
	if err != nil {
		return err
	}
	for _, name := range names {
		fd, err := strconv.Atoi(name)
		if err != nil || fd < first {
			continue
		}
		syscall.CloseOnExec(fd) // harmless on one closed or reused since

	}
	return nil
}
