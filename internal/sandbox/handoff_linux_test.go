package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shellgate/shellgate/internal/lane"
	"github.com/shellgate/shellgate/internal/procfs"
	"github.com/shellgate/shellgate/internal/sandbox/helper"
	"golang.org/x/sys/unix"
)

// A command's start does not go through the helper's main thread. The
// helper is set up in the package's init, when the main goroutine is locked
// to the main thread; serving the control socket there made every frame a
// wake of the poller's thread and then of the main thread, and every start
// on the launcher's thread two hand-offs each way (about four switches of
// the main thread a command). Served by a goroutine of its own, the main
// thread sleeps while commands run.
func TestHelperMainThreadSleeps(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	s := start(t, l.spec())
	pid := s.helper.Process.Pid
	run := func() {
		cmd, _ := launch(t, s, l.root, "true")
		cmd.Wait()
	}
	run()
	before := mainThreadSwitches(t, pid)
	const n = 20
	for range n {
		run()
	}
	if got := mainThreadSwitches(t, pid) - before; got > n/4 {
		t.Errorf("the helper's main thread switched %d times in %d commands", got, n)
	}
}

// mainThreadSwitches returns the context switches of pid's main thread.
func mainThreadSwitches(t *testing.T, pid int) int64 {
	t.Helper()
	return taskSwitches(t, pid, pid)
}

// taskSwitches returns the context switches of pid's thread tid, 0 if it
// has ended.
func taskSwitches(t *testing.T, pid, tid int) int64 {
	t.Helper()
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/status", pid, tid))
	if os.IsNotExist(err) && tid != pid {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, line := range strings.Split(string(st), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.HasSuffix(k, "ctxt_switches") {
			c, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			n += c
		}
	}
	return n
}

// The helper's threads sleep with a coarse timer slack, so that its runtime
// monitor (sysmon), which sleeps 20 µs at a time while the helper works,
// wakes a few times a command instead of 20–30; the commands keep the timer
// slack of shellgate's own threads.
func TestHelperTimerSlack(t *testing.T) {
	lane.Live(t)
	n, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0)
	must(t, err)
	if n >= helper.TimerSlack {
		t.Skipf("this process's timer slack is %d ns already", n)
	}
	ours := strconv.Itoa(n)
	l := newLab(t)
	s := start(t, l.spec())
	cmd, out := launch(t, s, l.root, "cat /proc/self/timerslack_ns")
	cmd.Wait()
	if got := out(); strings.TrimSpace(got) != ours {
		t.Errorf("a command's timer slack is %q, shellgate's %q", got, ours)
	}
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", s.helper.Process.Pid))
	must(t, err)
	var slacks []string
	coarse := 0
	for _, task := range tasks {
		b, err := os.ReadFile("/proc/" + task.Name() + "/timerslack_ns")
		if err != nil {
			t.Skipf("cannot read the helper's timer slack: %v", err)
		}
		slacks = append(slacks, strings.TrimSpace(string(b)))
		if n, _ := strconv.Atoi(strings.TrimSpace(string(b))); n >= helper.TimerSlack {
			coarse++
		}
	}
	// All but the launcher's thread, and at least the monitor's.
	if coarse == 0 || coarse < len(tasks)-1 {
		t.Errorf("the helper's threads' timer slack: %v ns, want %d but for the launcher's", slacks, helper.TimerSlack)
	}
}

// A command's exit sends the helper no SIGCHLD: the signal's disposition is
// the kernel's default, so the kernel drops it rather than wake the thread
// that forked the command to run the Go runtime's handler (which woke
// os/signal's goroutine, which woke the reaper's), three hand-offs beside the
// exit's report. What the signal was for is still done: the commands' exits
// are reported (their pidfds), and a process a command left behind, an
// orphan the helper inherits as the session's PID 1, is reaped when it ends.
func TestHelperCatchesNoSIGCHLD(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	s := start(t, l.spec())
	pid := s.helper.Process.Pid
	cmd, out := launch(t, s, l.root, "(sleep 0.3; exit 7) >/dev/null 2>&1 & echo started")
	if code, sig := cmd.Wait(); code == nil || *code != 0 {
		t.Fatalf("the command ended with %v %s", code, sig)
	}
	if got := out(); strings.TrimSpace(got) != "started" {
		t.Fatalf("the command said %q", got)
	}
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	must(t, err)
	for _, line := range strings.Split(string(st), "\n") {
		if v, ok := strings.CutPrefix(line, "SigCgt:"); ok {
			caught, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			must(t, err)
			if caught&(1<<(unix.SIGCHLD-1)) != 0 {
				t.Errorf("the helper catches SIGCHLD (SigCgt %s)", strings.TrimSpace(v))
			}
		}
	}
	// The orphan ends after 0.3 s; its zombie must not stay.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		kids := helperChildren(t, pid)
		if len(kids) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the helper's children %v are still there 10 s after the orphan's end", kids)
		}
	}
}

// helperChildren lists the processes whose parent is one of pid's threads.
func helperChildren(t *testing.T, pid int) []string {
	t.Helper()
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	must(t, err)
	var kids []string
	for _, task := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, task.Name()))
		if err != nil {
			continue // the thread ended
		}
		kids = append(kids, strings.Fields(string(b))...)
	}
	return kids
}

// Once a command has ended and left nothing running, the helper sleeps: its
// guard's spell, which looks every GuardEvery while the session has
// processes, ends with the command rather than at its next tick. At an
// agent's pace, a call every few seconds, that tick was a wake of the
// helper's threads after every call.
func TestHelperSleepsAfterACommand(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	s := start(t, l.spec())
	pid := s.helper.Process.Pid
	for range 3 {
		cmd, _ := launch(t, s, l.root, "true")
		cmd.Wait()
		time.Sleep(50 * time.Millisecond) // the exit's own work done
		before := threadSwitches(t, pid)
		time.Sleep(helper.GuardEvery * 3 / 2)
		if got := threadSwitches(t, pid) - before; got == 0 {
			return
		}
	}
	t.Errorf("the helper's threads woke in each of three quiet spells of %v after a command", helper.GuardEvery*3/2)
}

// threadSwitches returns the context switches of all of pid's threads.
func threadSwitches(t *testing.T, pid int) int64 {
	t.Helper()
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	must(t, err)
	var n int64
	for _, task := range tasks {
		tid, _ := strconv.Atoi(task.Name())
		n += taskSwitches(t, pid, tid)
	}
	return n
}

// A frame read wakes no poller on the side that wrote it. A socket's
// reader, as it consumes a frame, wakes every watcher of the writer's end
// (room to write again), and both sides' runtime pollers watched the one
// socket they shared: about two wakes of a sleeping process a command for
// nothing. The helper reads on its fd 3 and writes on its fd 4 (helper.Pair),
// and only the end it reads is watched.
func TestHelperWatchesOnlyTheSocketItReads(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	s := start(t, l.spec())
	pid := s.helper.Process.Pid
	cmd, _ := launch(t, s, l.root, "true")
	cmd.Wait()
	watched, err := procfs.EpollWatches(pid)
	if errors.Is(err, fs.ErrPermission) {
		t.Skipf("the helper's descriptors are not this user's to read (it is not dumpable): %v", err)
	}
	must(t, err)
	for _, c := range []struct {
		fd      int
		what    string
		watched bool
	}{{3, "the socket it reads frames from", true}, {4, "the socket it writes frames to", false}} {
		ino, err := procfs.SocketInode(pid, c.fd)
		if err != nil {
			t.Errorf("the helper's fd %d, %s: %v", c.fd, c.what, err)
			continue
		}
		if watched[ino] != c.watched {
			t.Errorf("the helper's fd %d, %s: watched by its poller %v, want %v", c.fd, c.what, watched[ino], c.watched)
		}
	}
}
