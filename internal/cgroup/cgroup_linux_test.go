package cgroup_test

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shellgate/shellgate/internal/cgroup"
	"github.com/shellgate/shellgate/internal/cgroup/cgrouptest"
)

// Fork starts the command inside its cgroup from the first
// instruction (placed), and leaves no thread of the caller there. The test
// process stands for the helper, its own cgroup for the session's. On v1
// (the host here, where At knows of no cgroup2 beside it) the forking thread
// moves itself by writing "0": the command's cgroups show it was born there,
// and no thread of the test process stays.
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
	if want := map[bool]string{true: cgroup.V2, false: cgroup.V1}[cgroup.IsV2(cgroup.Root)]; kind != want {
		t.Fatalf("a command cgroup of kind %s here, want %s", kind, want)
	}
	pid, placed, fit, r := fork(t, kind, files, "/bin/cat", "cat", "/proc/self/cgroup")
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

// On a hybrid machine (v1 controllers, the cgroup2 hierarchy mounted at
// unified/), a command is born in a cgroup2 cgroup of the session's, by
// clone3 — no thread of the helper migrates, which waits for an RCU grace
// period after idle — and keeps the v1 cgroups of the process that forks it
// (the helper's: the session's), whose limits bind it; cgroup.kill ends what
// it started, and Remove leaves nothing.
func TestCommandsBornInUnified(t *testing.T) {
	if cgroup.IsV2(cgroup.Root) || !cgroup.IsV2(filepath.Join(cgroup.Root, "unified")) {
		t.Skip("not a hybrid cgroup machine (v1 with cgroup2 at unified/)")
	}
	if os.Getuid() != 0 {
		t.Skip("making v1 cgroups needs root")
	}
	session := exec.Command("sleep", "100")
	if err := session.Start(); err != nil {
		t.Fatal(err)
	}
	g, err := cgroup.New(session.Process.Pid, 100, 0)
	if err != nil {
		session.Process.Kill()
		session.Wait()
		t.Skipf("cannot make a cgroup here: %v", err)
	}
	defer func() {
		session.Process.Kill()
		session.Wait()
		if err := g.Remove(); err != nil {
			t.Errorf("Remove: %v", err)
		}
	}()
	dir, kind, files, err := g.Command(1)
	if err != nil {
		t.Fatal(err)
	}
	defer cgroup.CloseFiles(files)
	if kind != cgroup.V2 || !strings.HasPrefix(dir, filepath.Join(cgroup.Root, "unified")+"/") {
		t.Fatalf("command cgroup %s of kind %s, want one in unified/ born into by clone3", dir, kind)
	}
	// The command reports its cgroups, then leaves a descendant in a
	// session of its own that only the cgroup can find.
	pid, placed, _, r := fork(t, kind, files, "/bin/sh", "sh", "-c", "cat /proc/self/cgroup; setsid sleep 100 & echo $!; wait")
	if !placed {
		t.Error("the command was not born in its cgroup")
	}
	time.Sleep(100 * time.Millisecond)
	cgroup.CloseFiles(files)
	g.KillAll(dir, 0, syscall.SIGKILL)
	out, _ := io.ReadAll(r)
	var ws syscall.WaitStatus
	syscall.Wait4(pid, &ws, 0, nil)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	forker, _ := os.ReadFile("/proc/thread-self/cgroup")
	for _, l := range lines[:len(lines)-1] {
		switch {
		case strings.HasPrefix(l, "0::"):
			if !strings.HasSuffix(l, "/"+filepath.Base(dir)) {
				t.Errorf("cgroup2 line %q: not the command's cgroup %s", l, dir)
			}
		case strings.Contains(l, ":pids:"):
			if !strings.Contains(string(forker), l+"\n") {
				t.Errorf("pids line %q: not the forker's\n%s", l, forker)
			}
		}
	}
	left, _ := strconv.Atoi(lines[len(lines)-1])
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(left, 0) == nil && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if left <= 0 || syscall.Kill(left, 0) == nil {
		t.Errorf("the command's setsid descendant %d outlived cgroup.kill", left)
	}
}

// fork starts argv (path) as a command in the cgroup of kind whose files
// Command opened, from a locked thread as the helper's launcher does, and
// returns what cgroup.Fork says and the read end of the command's stdout.
func fork(t *testing.T, kind string, files []*os.File, path string, argv ...string) (pid int, placed, fit bool, stdout *os.File) {
	t.Helper()
	var fds []int
	for _, f := range files {
		fds = append(fds, int(f.Fd()))
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	runtime.LockOSThread()
	pid, placed, fit, err = cgroup.Fork(kind, fds, &syscall.SysProcAttr{}, func(sys *syscall.SysProcAttr) (int, error) {
		return syscall.ForkExec(path, argv, &syscall.ProcAttr{Files: []uintptr{0, w.Fd(), 2}, Sys: sys})
	})
	runtime.UnlockOSThread()
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	return pid, placed, fit, r
}

// On v1 a session's helper is born in the session's cgroups (ForkInto): the
// forking thread moves itself alone into them, forks and goes back, so the
// child's pids and memory cgroups are the group's and the thread's own are
// as before. On cgroup2 ForkInto only forks: the birth is clone3's (BirthFD).
func TestForkInto(t *testing.T) {
	cgrouptest.ForEachHierarchy(t, func(t *testing.T, ours bool) {
		for _, memory := range []int64{0, 256 << 20} {
			t.Run(fmt.Sprintf("memory=%d", memory), func(t *testing.T) {
				g, err := cgroup.Make(100, memory)
				if err != nil && ours {
					t.Fatal(err)
				} else if err != nil {
					t.Skipf("cannot make a cgroup here: %v", err)
				}
				defer func() {
					if err := g.Remove(); err != nil {
						t.Errorf("Remove: %v", err)
					}
				}()
				r, w, err := os.Pipe()
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				cmd := exec.Command("cat", "/proc/self/cgroup")
				cmd.Stdout = w
				runtime.LockOSThread()
				before, _ := os.ReadFile("/proc/thread-self/cgroup")
				born, fit, err := g.ForkInto(cmd.Start)
				after, _ := os.ReadFile("/proc/thread-self/cgroup")
				runtime.UnlockOSThread()
				w.Close()
				if err != nil {
					t.Fatal(err)
				}
				out, _ := io.ReadAll(r)
				cmd.Wait()
				if !fit || string(after) != string(before) {
					t.Errorf("fit %v; the forking thread's cgroups before:\n%s\nafter:\n%s", fit, before, after)
				}
				if g.Unified() {
					if born {
						t.Error("born on cgroup2 without clone3")
					}
					return
				}
				name := filepath.Base(g.Dir())
				want := map[string]bool{"pids": true, "memory": memory > 0}
				for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
					parts := strings.SplitN(line, ":", 3)
					for _, c := range strings.Split(parts[1], ",") {
						if want[c] != (filepath.Base(parts[2]) == name) {
							t.Errorf("the child's %s cgroup: %s (the group's: %v)", c, line, want[c])
						}
					}
				}
				if !born {
					t.Errorf("not born in the group; the child's cgroups:\n%s", out)
				}
			})
		}
	})
}
