package runner

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/shellgate/shellgate/internal/lane"
)

// TestSubreap runs this package's tests of what commands leave again in a
// child process that is a subreaper (Subreap is for the whole process and for
// good), TestSubreapChild among them.
func TestSubreap(t *testing.T) {
	lane.Live(t)
	if subreaping() {
		t.Skip("in the child")
	}
	// The tests of what commands leave, end and report, not every one.
	run := "^(TestSubreapChild|TestJob.*|TestTimeoutKillsGroup|TestCancel|TestBackground.*|TestBusyGroupDrainIsBounded|TestEscapedDescendants|TestClose.*|TestMarkedProcs.*|TestExitStatus|TestConcurrentRuns|TestDrain.*|TestLastOutput.*|TestPassedPipeHeldByABackgroundJob|TestTreeLauncher.*|Example.*)$"
	args := []string{"-test.run", run, "-test.v", "-test.count=1", "-test.timeout=10m"}
	if testing.Short() {
		args = append(args, "-test.short")
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), subreapEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestSubreapChild") {
		t.Fatalf("the tests as a subreaper: %v\n%s", err, tail(string(out), 8000))
	}
}

// TestSubreapLate: a program that becomes a subreaper only after commands
// ran (a library's user calling Subreap late) still gets each later
// command's exit status: the reaper takes none of them as an orphan.
func TestSubreapLate(t *testing.T) {
	lane.Live(t)
	if os.Getenv(subreapEnv) == "late" {
		s := NewSupervisor()
		defer s.Close()
		if res, _, _ := runScript(t, s, "exit 3", Spec{}); res.ExitCode == nil || *res.ExitCode != 3 {
			t.Fatalf("before Subreap: exit %v", res.ExitCode)
		}
		if err := Subreap(); err != nil {
			t.Fatal(err)
		}
		for i := range 100 {
			res, _, _ := runScript(t, s, "exit 7", Spec{})
			if res.ExitCode == nil || *res.ExitCode != 7 {
				t.Fatalf("command %d after Subreap: exit %v, %+v", i, res.ExitCode, res)
			}
		}
		return
	}
	if subreaping() {
		t.Skip("in TestSubreap's child")
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestSubreapLate$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), subreapEnv+"=late")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestSubreapLate") {
		t.Fatalf("as a late subreaper: %v\n%s", err, tail(string(out), 4000))
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// As a subreaper, what a command leaves running (setsid …&, nohup …&) is
// reparented to this process, found and reported without a look at every
// process of the machine, and ended by Close; the orphans that end are
// reaped, and the commands' own exit statuses are not taken by the reaper.
func TestSubreapChild(t *testing.T) {
	if !subreaping() {
		t.Skip("only in TestSubreap's child")
	}
	var r int32
	if err := unix.Prctl(unix.PR_GET_CHILD_SUBREAPER, uintptr(unsafe.Pointer(&r)), 0, 0, 0); err != nil || r != 1 {
		t.Fatalf("not a subreaper: %d, %v", r, err)
	}
	self := os.Getpid()
	scans := hostScans.Load()
	s := NewSupervisor()
	defer s.Close()

	res, _, _ := runScript(t, s, `setsid sleep 30 &`, Spec{})
	if len(res.BackgroundPIDs) != 1 {
		t.Fatalf("setsid: BackgroundPIDs %v, want the sleep", res.BackgroundPIDs)
	}
	escaped := res.BackgroundPIDs[0]
	if ppid := parentOf(escaped); ppid != self {
		t.Errorf("the setsid job's parent is %d, want this process (%d)", ppid, self)
	}
	// The look after a later command's exit does not read this job.
	later, ok := beforeLaunch(nil).(Lister).Processes()
	if !ok || slices.Contains(later, escaped) {
		t.Errorf("the look after a later command reads %v (%v), the earlier job %d among them", later, ok, escaped)
	}
	// A process this process started before (a sandbox helper, a running
	// command), on whichever thread, is not read either.
	running := exec.Command("sleep", "30")
	if err := running.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { running.Process.Kill(); running.Wait() }()
	// The looks after the next command's exit read only what it left.
	var looked [][]int
	onCandidates = func(scope Launcher, pids []int) {
		if _, ok := scope.(orphans); ok {
			looked = append(looked, pids)
		}
	}
	res, _, _ = runScript(t, s, `nohup sleep 30 &`, Spec{})
	onCandidates = nil
	if len(looked) == 0 {
		t.Error("the look after the nohup command's exit was not of the orphans since it started")
	}
	for _, pids := range looked {
		if slices.Contains(pids, escaped) || slices.Contains(pids, running.Process.Pid) || len(pids) > 1 {
			t.Errorf("the look after the nohup command's exit read %v, not only its job (the earlier job: %d, a running process: %d)", pids, escaped, running.Process.Pid)
		}
	}
	if len(res.BackgroundPIDs) != 1 {
		t.Fatalf("nohup: BackgroundPIDs %v, want the sleep", res.BackgroundPIDs)
	}
	member := res.BackgroundPIDs[0]
	if st, _ := readStat(member); st.pgrp != res.PID {
		t.Errorf("the nohup job %d is not in the command's group %d", member, res.PID)
	}
	// A child of this process's own, in its session, that no one waits for:
	// not reaped here, and no hindrance to reaping the orphans.
	unwaited, err := syscall.ForkExec("/bin/true", []string{"true"}, &syscall.ProcAttr{})
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Wait4(unwaited, nil, 0, nil)
	// Orphans that end at once: reaped, and the exit statuses of commands
	// started meanwhile are theirs.
	var wg sync.WaitGroup
	codes := make([]*int, 40)
	for i := range codes {
		wg.Go(func() {
			r, _, _ := runScript(t, s, `(true &); (sleep 0.01 &); exit 7`, Spec{})
			codes[i] = r.ExitCode
		})
	}
	wg.Wait()
	for i, c := range codes {
		if c == nil || *c != 7 {
			t.Errorf("run %d: exit code %s, want 7", i, describe(c))
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	requireGone(t, "after Close", escaped, member)
	if n := hostScans.Load() - scans; n != 0 {
		t.Errorf("%d looks at every process of the machine; want none as a subreaper", n)
	}
	var zombies []int
	for range 200 {
		if zombies = zombieChildren(t, self); slices.Equal(zombies, []int{unwaited}) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !slices.Equal(zombies, []int{unwaited}) {
		t.Errorf("zombie children %v, want only the one not waited for (%d)", zombies, unwaited)
	}
}

// parentOf returns pid's parent, 0 if it is gone.
func parentOf(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

// zombieChildren lists the zombies among the children of every thread of pid.
func zombieChildren(t *testing.T, pid int) []int {
	t.Helper()
	all, ok := descendants(pid)
	if !ok {
		t.Fatal("no lists of children")
	}
	var z []int
	for _, m := range all[1:] {
		if st, ok := readStat(m.pid); ok && st.state == 'Z' && parentOf(m.pid) == pid {
			z = append(z, m.pid)
		}
	}
	return z
}
