package procfs

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// EpollWatches returns the inodes of the files that process pid's epoll
// instances watch (the tfd lines of their fdinfo): whose readiness wakes
// it.
func EpollWatches(pid int) (map[uint64]bool, error) {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	watched := map[uint64]bool{}
	for _, e := range ents {
		if link, _ := os.Readlink(filepath.Join(dir, e.Name())); link != "anon_inode:[eventpoll]" {
			continue
		}
		f, err := os.Open(fmt.Sprintf("/proc/%d/fdinfo/%s", pid, e.Name()))
		if err != nil {
			continue // closed meanwhile
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if !strings.HasPrefix(sc.Text(), "tfd:") {
				continue
			}
			for _, field := range strings.Fields(sc.Text()) {
				if v, ok := strings.CutPrefix(field, "ino:"); ok {
					if n, err := strconv.ParseUint(v, 16, 64); err == nil {
						watched[n] = true
					}
				}
			}
		}
		f.Close()
	}
	return watched, nil
}

// SocketInode returns the inode of process pid's descriptor fd, a socket.
func SocketInode(pid, fd int) (uint64, error) {
	link, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%d", pid, fd))
	if err != nil {
		return 0, err
	}
	v, ok := strings.CutPrefix(link, "socket:[")
	n, err := strconv.ParseUint(strings.TrimSuffix(v, "]"), 10, 64)
	if !ok || err != nil {
		return 0, fmt.Errorf("fd %d of process %d is %s, not a socket", fd, pid, link)
	}
	return n, nil
}
