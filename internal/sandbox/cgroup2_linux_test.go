package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/shellgate/shellgate/internal/cgroup"
	"github.com/shellgate/shellgate/internal/cgroup/cgrouptest"
	"github.com/shellgate/shellgate/internal/lane"
	"golang.org/x/sys/unix"
)

// cgroupRootEnv points an owner process (TestMain) at a cgroup hierarchy.
const cgroupRootEnv = "SHELLGATE_SANDBOX_TEST_CGROUP_ROOT"

// On cgroup2 the session's helper lives in a cgroup of the session's own; the
// limits its controllers cannot hold are reported missing, by name, with the
// file that would enable them; Close kills what the commands left and removes
// every cgroup.
func TestCgroupV2Session(t *testing.T) {
	lane.Live(t)
	cgrouptest.MountCgroup2(t)
	parent, _ := cgrouptest.SessionParent(t)
	l := newLab(t)
	spec := l.spec()
	spec.Limits.Memory = 512 << 20
	s := start(t, spec)
	if s.group == nil || !s.group.Unified() {
		t.Fatalf("no cgroup2 session (%s)", s.Report())
	}
	dir := s.group.Dir()
	if filepath.Dir(dir) != parent {
		t.Errorf("the session's cgroup %s is not under %s", dir, parent)
	}
	// The helper has a leaf of its own, outside the commands' cgroup and
	// its limit.
	b, err := os.ReadFile(filepath.Join(dir, "helper", "cgroup.procs"))
	must(t, err)
	if strings.TrimSpace(string(b)) != strconv.Itoa(s.NetPID()) {
		t.Errorf("the helper's cgroup holds %q, want the helper %d", b, s.NetPID())
	}
	if b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs")); err != nil || len(b) > 0 {
		t.Errorf("the session's cgroup holds %q (%v), want nothing: its children hold the helper and the commands", b, err)
	}
	missing := strings.Join(s.Report().Missing, "\n")
	for _, c := range []struct{ controller, limitFile, layer string }{
		{"pids", "pids.max", LayerProcs},
		{"memory", "memory.max", "memory"},
	} {
		if _, err := os.Stat(filepath.Join(dir, c.limitFile)); err == nil {
			continue // delegated: the limit is set (a v2 host)
		}
		want := fmt.Sprintf("%s: the %s controller is not enabled in %s", c.layer, c.controller, filepath.Join(parent, "cgroup.subtree_control"))
		if !strings.Contains(missing, want) {
			t.Errorf("missing %s not reported as %q:\n%s", c.controller, want, missing)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "pids.max")); err != nil {
		if got := s.Report().Layers[LayerProcs]; got != "rlimit" {
			t.Errorf("procs = %q without the pids controller, want rlimit", got)
		}
	}

	out, code := run(t, s, l.root, "setsid -f env -i sleep 7020.5"+runTag+" >/dev/null 2>&1; cat /proc/self/cgroup")
	if want := "0::" + strings.TrimPrefix(dir, cgroup.Root) + "/cmds/cmd-"; code != 0 || !strings.Contains(out, want) {
		t.Errorf("the command ran outside its cgroup (exit %d):\n%s", code, out)
	}
	for deadline := time.Now().Add(5 * time.Second); len(procsNamed("7020.5"+runTag)) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the escape did not start")
		}
	}
	must(t, s.Close())
	if left := procsNamed("7020.5" + runTag); len(left) > 0 {
		t.Errorf("survived Close: %v", left)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the session's cgroup is left after Close: %v", err)
	}
}

// One SIGKILL of a command's tree ends it all on cgroup2, even processes that
// ignore SIGTERM, left the group and fork while they die: cgroup.kill takes
// the cgroup as a whole, where signals sent PID by PID miss what was forked
// after the PIDs were read — here, a chain of processes that each fork the
// next and exit a moment later. (The moment lets a scan of /proc see the
// chain on a host with many processes, where a scan takes longer than a
// fork.)
func TestCgroupV2KillWhileForking(t *testing.T) {
	lane.Live(t)
	cgrouptest.MountCgroup2(t)
	s, _, l := treeSession(t, true)
	r, w, err := os.Pipe()
	must(t, err)
	defer r.Close()
	script := `trap "" TERM; setsid -f sh -c 'f() { f & sleep 0.05; }; f' 7021.5` + runTag + ` >/dev/null 2>&1; echo started; exec sleep 7022.5` + runTag
	launched, err := s.Launch([]string{"/bin/sh", "-c", script}, []string{"PATH=/usr/bin:/bin"}, l.root, nil, w, nil)
	w.Close()
	must(t, err)
	buf := make([]byte, 64)
	r.Read(buf)
	for deadline := time.Now().Add(5 * time.Second); len(procsNamed("7021.5"+runTag)) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the forks did not start: %v", procsNamed("7021.5"+runTag, "7022.5"+runTag))
		}
	}
	s.KillTree(launched.PID(), syscall.SIGTERM)
	time.Sleep(50 * time.Millisecond)
	if len(procsNamed("7022.5"+runTag)) != 1 {
		t.Fatalf("SIGTERM was not ignored: %v", procsNamed("7022.5"+runTag))
	}
	s.KillTree(launched.PID(), syscall.SIGKILL)
	launched.Wait()
	deadline := time.Now().Add(5 * time.Second)
	// Killed processes leave the cgroup once the kernel has ended them: on a
	// loaded machine that can take a moment after Wait.
	for (len(procsNamed("7021.5"+runTag, "7022.5"+runTag)) > 0 || len(s.Tree(launched.PID())) > 0) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if left := procsNamed("7021.5"+runTag, "7022.5"+runTag); len(left) > 0 {
		t.Errorf("%d processes survived one SIGKILL of the tree: %v", len(left), left)
	}
	if tree := s.Tree(launched.PID()); len(tree) > 0 {
		t.Errorf("Tree after the kill = %v", tree)
	}
}

// The cgroups of a shellgate killed with SIGKILL, which never removes them,
// go when the next session starts.
func TestDeadOwnersCgroupsSwept(t *testing.T) {
	lane.Live(t)
	cgrouptest.ForEachHierarchy(t, func(t *testing.T, ours bool) {
		parent, _ := cgrouptest.SessionParent(t)
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), ownerEnv+"=1", runTagEnv+"="+runTag, cgroupRootEnv+"="+cgroup.Root)
		out, err := cmd.StdoutPipe()
		must(t, err)
		must(t, cmd.Start())
		owner := cmd.Process.Pid
		t.Cleanup(func() {
			cmd.Process.Kill()
			cmd.Wait()
			if left, _ := filepath.Glob(filepath.Join(parent, fmt.Sprintf("shellgate-%d-*", owner))); len(left) > 0 {
				t.Errorf("the dead owner's cgroups are left: %v", left)
				for _, dir := range left {
					cgroup.At(dir).Remove()
				}
			}
		})
		line, _ := bufio.NewReader(out).ReadString('\n')
		if strings.TrimSpace(line) != "ready" {
			if ours {
				t.Fatalf("the owner could not start a session: %s", line)
			}
			t.Skipf("the owner could not start a session: %s", line)
		}
		left, _ := filepath.Glob(filepath.Join(parent, fmt.Sprintf("shellgate-%d-*", owner)))
		if len(left) != 1 {
			t.Skipf("the owner's session has no cgroup here: %v", left)
		}
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		// The kernel ends the session with its helper; its cgroups stay,
		// with nothing in them once the last process is reaped. Another
		// shellgate starting a session meanwhile (another test binary on
		// this machine) may already have swept them: gone is empty too.
		// On cgroup2 a process that has exited leaves cgroup.procs before the
		// kernel releases it, and until then the cgroup is still populated
		// and cannot be removed: cgroup.events says when it is not.
		for _, dir := range []string{left[0], filepath.Join(left[0], "helper"), filepath.Join(left[0], "cmds", "cmd-1")} {
			for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
				if ours && err == nil && len(b) == 0 {
					events, eerr := os.ReadFile(filepath.Join(dir, "cgroup.events"))
					if eerr == nil && !strings.Contains(string(events), "populated 0") {
						b = []byte("(exited, not yet released)")
					}
				}
				if errors.Is(err, fs.ErrNotExist) || err == nil && len(b) == 0 {
					break // empty, or swept already by a session another test started
				}
				must(t, err)
				if time.Now().After(deadline) {
					t.Fatalf("%s still holds %q after its owner's death", dir, b)
				}
			}
		}
		s := start(t, Spec{})
		if s.group == nil {
			t.Fatalf("the next session has no cgroup (%s)", s.Report())
		}
		if _, err := os.Stat(left[0]); !os.IsNotExist(err) {
			t.Errorf("the dead owner's cgroup %s was kept: %v", left[0], err)
		}
	})
}

// On cgroup2 the session's helper is born in its cgroup (clone3
// with CLONE_INTO_CGROUP) instead of moved into it: a move waits for an RCU
// grace period, 10–28 ms once the machine has been idle, on every session
// start — every one-shot run. Nothing writes the cgroup's cgroup.procs.
func TestHelperBornInCgroupV2(t *testing.T) {
	lane.Live(t)
	cgrouptest.MountCgroup2(t)
	written := cgroupWrites(t, cgroup.Root)
	s, _, l := treeSession(t, true)
	out, code := run(t, s, l.root, "cat /proc/self/cgroup")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	for _, file := range written() {
		if filepath.Base(file) == "cgroup.procs" && strings.HasPrefix(file, s.group.Dir()) {
			t.Errorf("the helper was moved into its cgroup (%s written), not born in it", file)
		}
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", s.helper.Process.Pid))
	must(t, err)
	if want := "0::" + strings.TrimPrefix(s.group.HelperLeaf(), cgroup.Root) + "\n"; !strings.Contains(string(b), want) {
		t.Errorf("the helper is not in its cgroup %s:\n%s", want, b)
	}
}

// On v1 (hybrid included) the session's helper is born in its cgroups too:
// the thread that forks it moves itself alone into them and back
// (cgroup.Group.ForkInto), which takes no lock of every thread group, where
// writing the helper's PID to cgroup.procs waited for an RCU grace period
// (7–15 ms after 300 ms idle here) on every one-shot run's path. Nothing
// writes a cgroup.procs of the session's cgroups, and the helper is in the
// session's pids and memory cgroups.
func TestHelperBornInCgroupV1(t *testing.T) {
	lane.Live(t)
	if cgroup.IsV2(cgroup.Root) {
		t.Skip("cgroup2: TestHelperBornInCgroupV2")
	}
	var mounts []string
	for _, c := range []string{"pids", "memory"} {
		var st unix.Statfs_t
		if m := filepath.Join(cgroup.Root, c); unix.Statfs(m, &st) == nil && st.Type == unix.CGROUP_SUPER_MAGIC {
			mounts = append(mounts, m)
		}
	}
	written := cgroupWrites(t, mounts...)
	l := newLab(t)
	s := start(t, l.spec())
	if s.group == nil {
		t.Skipf("no writable cgroup here (%s)", s.Report())
	}
	if out, code := run(t, s, l.root, "true"); code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	name := filepath.Base(s.group.Dir())
	for _, file := range written() {
		if filepath.Base(file) == "cgroup.procs" && strings.Contains(file, "/"+name+"/") {
			t.Errorf("the helper was moved into its cgroup (%s written), not born in it", file)
		}
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", s.helper.Process.Pid))
	must(t, err)
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			if (c == "pids" || c == "memory" && s.Report().Layers[LayerMemory] != "") && filepath.Base(parts[2]) != name {
				t.Errorf("the helper is not in the session's %s cgroup %s: %s", c, name, line)
			}
		}
	}
}

// cgroupWrites watches every write to a file of the cgroup mounts from now
// on; the returned func lists the files written so far.
func cgroupWrites(t *testing.T, mounts ...string) func() []string {
	t.Helper()
	fan, err := unix.FanotifyInit(unix.FAN_CLASS_NOTIF|unix.FAN_CLOEXEC|unix.FAN_NONBLOCK, unix.O_RDONLY|unix.O_CLOEXEC)
	if err != nil {
		t.Skipf("no fanotify here (%v): what writes the cgroup files cannot be seen", err)
	}
	t.Cleanup(func() { unix.Close(fan) })
	for _, m := range mounts {
		if err := unix.FanotifyMark(fan, unix.FAN_MARK_ADD|unix.FAN_MARK_MOUNT, unix.FAN_MODIFY, unix.AT_FDCWD, m); err != nil {
			t.Skipf("cannot watch the cgroup mount %s (%v)", m, err)
		}
	}
	var files []string
	return func() []string {
		buf := make([]byte, 64<<10)
		for {
			n, _ := unix.Read(fan, buf)
			if n <= 0 {
				return files
			}
			for off := 0; off+int(unsafe.Sizeof(unix.FanotifyEventMetadata{})) <= n; {
				ev := (*unix.FanotifyEventMetadata)(unsafe.Pointer(&buf[off]))
				off += int(ev.Event_len)
				if ev.Fd < 0 {
					continue
				}
				file, _ := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", ev.Fd))
				unix.Close(int(ev.Fd))
				files = append(files, file)
			}
		}
	}
}

// A session's first command is born in a cgroup made while the helper set
// up (makeSpare), not on the command's way to its start: Start returns with
// it made, and the command runs there.
func TestFirstCommandsCgroupMadeAhead(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	s := start(t, l.spec())
	if s.group == nil {
		t.Skipf("no writable cgroup here (%s)", s.Report())
	}
	s.mu.Lock()
	spare := s.spare
	s.mu.Unlock()
	if spare == nil {
		t.Fatal("no cgroup made for the first command by the session's start")
	}
	if _, err := os.Stat(spare.dir); err != nil {
		t.Fatal(err)
	}
	out, code := run(t, s, l.root, "cat /proc/self/cgroup")
	if code != 0 || !strings.Contains(out, "/"+filepath.Base(spare.dir)+"\n") {
		t.Errorf("the first command did not run in %s (exit %d):\n%s", spare.dir, code, out)
	}
}
