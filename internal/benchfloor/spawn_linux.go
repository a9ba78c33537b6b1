package benchfloor

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

var spawned atomic.Int64 // names each floor's cgroup

func (s Spawn) time() (time.Duration, error) {
	if !s.InCgroup {
		start := time.Now()
		err := exec.Command("true").Run()
		return time.Since(start), err
	}
	own, v2, err := ownCgroup()
	if err != nil {
		return 0, err
	}
	// Pinned to one thread, as the helper's launcher: on v1 that thread is
	// what moves.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := time.Now()
	dir := filepath.Join(own, fmt.Sprintf("benchfloor-%d-%d", os.Getpid(), spawned.Add(1)))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return 0, err
	}
	defer os.Remove(dir)
	cmd := exec.Command("true")
	if v2 {
		fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return 0, err
		}
		defer unix.Close(fd)
		cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: fd}
		err = cmd.Run()
		return time.Since(start), err
	}
	tid := []byte(strconv.Itoa(unix.Gettid()))
	if err := os.WriteFile(filepath.Join(dir, "tasks"), tid, 0); err != nil {
		return 0, err
	}
	err = cmd.Start()
	if backErr := os.WriteFile(filepath.Join(own, "tasks"), tid, 0); err == nil {
		err = backErr
	}
	if err == nil {
		err = cmd.Wait()
	}
	return time.Since(start), err
}

// ownCgroup is this process's cgroup directory: the unified one, or on v1
// the pids controller's (the one the sandbox gives each command).
func ownCgroup() (dir string, v2 bool, err error) {
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	var unified string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// hierarchy-ID:controllers:path
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case parts[1] == "pids":
			return filepath.Join("/sys/fs/cgroup/pids", parts[2]), false, nil
		case parts[0] == "0" && parts[1] == "":
			unified = parts[2]
		}
	}
	var st unix.Statfs_t
	if unified != "" && unix.Statfs("/sys/fs/cgroup", &st) == nil && st.Type == unix.CGROUP2_SUPER_MAGIC {
		return filepath.Join("/sys/fs/cgroup", unified), true, nil
	}
	return "", false, errors.New("no pids cgroup and no cgroup2 here")
}
