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
	// The cgroup is made before the clock starts and removed after it
	// stops: the sandbox makes a command's cgroup while the command before
	// runs, or reuses that one's (cgroup.Group.Reuse), so neither the mkdir
	// nor the rmdir is on a command's way.
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
		start := time.Now()
		err = cmd.Run()
		return time.Since(start), err
	}
	tid := []byte(strconv.Itoa(unix.Gettid()))
	start := time.Now()
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

// ownCgroup is this process's cgroup directory where the sandbox gives its
// commands theirs: on cgroup2, or on a hybrid machine the cgroup2 hierarchy
// mounted beside v1 (/sys/fs/cgroup/unified), where commands are born in
// their cgroups by clone3 and no thread migrates; on v1 alone the pids
// controller's, where the forking thread moves (the migration that waits
// for an RCU grace period after idle, which the sandbox avoids wherever
// cgroup2 is mounted: a floor that paid it would not be one).
func ownCgroup() (dir string, v2 bool, err error) {
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	var unified, pids string
	haveUnified := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// hierarchy-ID:controllers:path
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case parts[1] == "pids":
			pids = parts[2]
		case parts[0] == "0" && parts[1] == "":
			unified, haveUnified = parts[2], true
		}
	}
	if haveUnified {
		for _, mount := range []string{"/sys/fs/cgroup", "/sys/fs/cgroup/unified"} {
			var st unix.Statfs_t
			if unix.Statfs(mount, &st) == nil && st.Type == unix.CGROUP2_SUPER_MAGIC {
				return filepath.Join(mount, unified), true, nil
			}
		}
	}
	if pids != "" {
		return filepath.Join("/sys/fs/cgroup/pids", pids), false, nil
	}
	return "", false, errors.New("no cgroup2 and no pids cgroup here")
}
