package cgroup_test

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shellgate/shellgate/internal/cgroup"
	"github.com/shellgate/shellgate/internal/cgroup/cgrouptest"
)

// Fork starts the command inside its cgroup from the first
// instruction (placed), and leaves no thread of the caller there. The test
// process stands for the helper, its own cgroup for the session's.
func TestForkInCgroup(t *testing.T) { cgrouptest.ForEachHierarchy(t, testForkInCgroup) }

func testForkInCgroup(t *testing.T, ours bool) {
	parent, _ := cgrouptest.SessionParent(t)
	g := cgroup.At(parent)
	dir, kind, files, err := g.Command(uint64(time.Now().UnixNano()))
	if err != nil && ours {
		t.Fatal(err)
	} else if err != nil {
		t.Skipf("cannot make a cgroup here: %v", err)
	}
	defer os.Remove(dir)
	defer cgroup.CloseFiles(files)
	var fds []int
	for _, f := range files {
		fds = append(fds, int(f.Fd()))
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	runtime.LockOSThread() // as the helper's launcher thread is
	pid, placed, fit, err := cgroup.Fork(kind, fds, &syscall.SysProcAttr{}, func(sys *syscall.SysProcAttr) (int, error) {
		return syscall.ForkExec("/bin/cat", []string{"cat", "/proc/self/cgroup"}, &syscall.ProcAttr{Files: []uintptr{0, w.Fd(), 2}, Sys: sys})
	})
	runtime.UnlockOSThread()
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	if !fit {
		t.Error("the forking thread could not leave the command's cgroup")
	}
	out, _ := io.ReadAll(r)
	var ws syscall.WaitStatus
	syscall.Wait4(pid, &ws, 0, nil)
	if !placed || !strings.Contains(string(out), "/"+filepath.Base(dir)+"\n") {
		t.Errorf("placed %v; the command's cgroups:\n%s", placed, out)
	}
	tasks, _ := filepath.Glob("/proc/self/task/*/cgroup")
	for _, task := range tasks {
		if b, _ := os.ReadFile(task); strings.Contains(string(b), filepath.Base(dir)) {
			t.Errorf("a thread stayed in the command's cgroup: %s", task)
		}
	}
}

// The empty cgroups of a shellgate that died without removing them (SIGKILL)
// are removed by the next session's start; a live one's are kept.
func TestStaleCgroupsSwept(t *testing.T) { cgrouptest.ForEachHierarchy(t, testStaleCgroupsSwept) }

func testStaleCgroupsSwept(t *testing.T, ours bool) {
	parent, _ := cgrouptest.SessionParent(t)
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(parent, fmt.Sprintf("shellgate-%d-1", dead.Process.Pid))
	live := filepath.Join(parent, fmt.Sprintf("shellgate-%d-2", os.Getppid()))
	for _, dir := range []string{stale, filepath.Join(stale, "cmd-1"), live} {
		if err := os.Mkdir(dir, 0o755); err != nil && ours {
			t.Fatal(err)
		} else if err != nil {
			t.Skipf("cannot make a cgroup here: %v", err)
		}
	}
	defer os.Remove(live)
	defer os.Remove(filepath.Join(stale, "cmd-1"))
	defer os.Remove(stale)
	cgroup.SweepStale(parent)
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("a dead shellgate's cgroup was kept: %v", err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("a live shellgate's cgroup was swept: %v", err)
	}
}
