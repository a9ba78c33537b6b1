package sandbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shellgate/shellgate/internal/cgroup"
	"github.com/shellgate/shellgate/internal/cgroup/cgrouptest"
	"github.com/shellgate/shellgate/internal/lane"
	"github.com/shellgate/shellgate/internal/runner"
)

// treeSession starts a session whose commands get cgroups of their own, and a
// Supervisor that runs commands in it; it skips, saying why, where cgroups
// cannot be made — except on a hierarchy the test mounted (ours), where it
// fails.
func treeSession(t *testing.T, ours bool) (*Session, *runner.Supervisor, *lab) {
	t.Helper()
	l := newLab(t)
	s := start(t, l.spec())
	if ours && (s.group == nil || !s.group.Unified()) {
		t.Fatalf("no cgroup2 session on the test's cgroup2 (%s)", s.Report())
	}
	if s.group == nil {
		t.Skipf("no writable cgroup here (procs: %s): a descendant that leaves its group and clears its environment lives until the session ends", s.Report().Layers[LayerProcs])
	}
	sup := runner.NewSupervisor()
	sup.KillGrace = 200 * time.Millisecond
	sup.SetLauncher(s)
	t.Cleanup(func() { sup.Close() })
	return s, sup, l
}

func bashRun(t *testing.T, sup *runner.Supervisor, ctx context.Context, dir, command string, timeout time.Duration) runner.Result {
	t.Helper()
	res, err := sup.Run(ctx, runner.Spec{
		Argv:    []string{"/bin/bash", "--noprofile", "--norc", "-c", command},
		Env:     []string{"PATH=/usr/bin:/bin"},
		Dir:     dir,
		Timeout: timeout,
	})
	must(t, err)
	return res
}

// seen polls in the background until a process with arg in its command line
// shows up; the returned func reports whether one did.
func seen(arg string) func() bool {
	found := make(chan struct{})
	stop := make(chan struct{})
	go func() {
		for {
			if len(procsNamed(arg)) > 0 {
				close(found)
				return
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	return func() bool {
		select {
		case <-found:
			return true
		case <-time.After(time.Second):
			close(stop)
			return false
		}
	}
}

// A descendant that left the command's process group and cleared its
// environment dies with the command on a timeout and on cancellation, while
// the session lives on.
func TestTreeDiesWithItsCommand(t *testing.T) {
	lane.Live(t)
	cgrouptest.ForEachHierarchy(t, testTreeDiesWithItsCommand)
}

func testTreeDiesWithItsCommand(t *testing.T, ours bool) {
	s, sup, l := treeSession(t, ours)
	for _, c := range []struct {
		name, arg string
		timeout   time.Duration
		cancel    bool
	}{
		{"timeout", "7001.5" + runTag, time.Second, false},
		{"cancel", "7004.5" + runTag, 0, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			started := seen(c.arg)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if c.cancel {
				time.AfterFunc(time.Second, cancel)
			}
			res := bashRun(t, sup, ctx, l.root, "setsid -f env -i sleep "+c.arg+" >/dev/null 2>&1; sleep 100", c.timeout)
			if !started() {
				t.Fatalf("the escape never started: %+v", res)
			}
			if !res.TimedOut && !res.Cancelled {
				t.Fatalf("not ended: %+v", res)
			}
			// Killed processes end once the kernel has run them: on a
			// loaded machine that can take a moment after the result.
			for deadline := time.Now().Add(2 * time.Second); len(procsNamed(c.arg)) > 0 && time.Now().Before(deadline); {
				time.Sleep(10 * time.Millisecond)
			}
			if left := procsNamed(c.arg); len(left) > 0 {
				t.Errorf("survived its command: %v", left)
			}
			if !s.Alive() {
				t.Error("the session ended with the command")
			}
			dirs, _ := filepath.Glob(filepath.Join(s.group.Dir(), "cmd-*"))
			s.mu.Lock()
			if s.spare != nil { // made for the next command (makeSpare)
				dirs = slices.DeleteFunc(dirs, func(d string) bool { return d == s.spare.dir })
			}
			s.mu.Unlock()
			if len(dirs) > 0 {
				t.Errorf("command cgroups left: %v", dirs)
			}
		})
	}
}

// What a command leaves running when it exits normally keeps running, in or
// out of its group, until the Supervisor closes; the session outlives both.
func TestTreeLeftRunningUntilClose(t *testing.T) {
	lane.Live(t)
	cgrouptest.ForEachHierarchy(t, testTreeLeftRunningUntilClose)
}

func testTreeLeftRunningUntilClose(t *testing.T, ours bool) {
	s, sup, l := treeSession(t, ours)
	res := bashRun(t, sup, context.Background(), l.root, "sleep 7002.5"+runTag+" >/dev/null 2>&1 & setsid -f env -i sleep 7003.5"+runTag+" >/dev/null 2>&1", 10*time.Second)
	if res.ExitCode == nil || *res.ExitCode != 0 {
		t.Fatalf("the command failed: %+v", res)
	}
	for deadline := time.Now().Add(5 * time.Second); len(procsNamed("7002.5"+runTag, "7003.5"+runTag)) != 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the background processes are not running: %v", procsNamed("7002.5"+runTag, "7003.5"+runTag))
		}
	}
	time.Sleep(100 * time.Millisecond)
	if n := len(procsNamed("7002.5"+runTag, "7003.5"+runTag)); n != 2 {
		t.Fatalf("%d of 2 background processes left after a normal exit", n)
	}
	must(t, sup.Close())
	if left := procsNamed("7002.5"+runTag, "7003.5"+runTag); len(left) > 0 {
		t.Errorf("survived the Supervisor's Close: %v", left)
	}
	if !s.Alive() {
		t.Error("the session ended with the Supervisor")
	}
}

// The command is born in its cgroup, and no thread of the helper stays there:
// a kill of the command's tree must not reach the session's PID 1.
func TestCommandBornInItsCgroup(t *testing.T) {
	lane.Live(t)
	cgrouptest.ForEachHierarchy(t, testCommandBornInItsCgroup)
}

func testCommandBornInItsCgroup(t *testing.T, ours bool) {
	s, _, l := treeSession(t, ours)
	r, w, err := os.Pipe()
	must(t, err)
	defer r.Close()
	launched, err := s.Launch([]string{"/bin/sh", "-c", "cat /proc/self/cgroup; exec sleep 7005.5" + runTag}, []string{"PATH=/usr/bin:/bin"}, l.root, nil, w, nil)
	w.Close()
	must(t, err)
	defer func() { s.KillTree(launched.PID(), 9); launched.Wait() }()
	if !launched.(interface{ Placed() bool }).Placed() {
		t.Error("the command was moved into its cgroup after it started, not born there")
	}
	buf := make([]byte, 4096)
	n, _ := r.Read(buf)
	if !strings.Contains(string(buf[:n]), "/cmd-") {
		t.Errorf("the command started outside its cgroup:\n%s", buf[:n])
	}
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/cgroup", s.NetPID()))
	for _, task := range tasks {
		if b, _ := os.ReadFile(task); strings.Contains(string(b), "/cmd-") {
			t.Errorf("a thread of the helper is in a command's cgroup: %s\n%s", task, b)
		}
	}
	// cat may not have exited yet when its output is read: wait for the tree
	// to be the shell (now sleep) alone.
	tree := s.Tree(launched.PID())
	for deadline := time.Now().Add(5 * time.Second); len(tree) != 1 && time.Now().Before(deadline); tree = s.Tree(launched.PID()) {
		time.Sleep(10 * time.Millisecond)
	}
	if len(tree) != 1 || tree[0] != launched.PID() {
		t.Errorf("Tree = %v, want [%d]", tree, launched.PID())
	}
}

// Tree lists what the command started, a descendant that left its session
// and cleared its environment included; KillTree ends them all.
func TestTreeListsEscapees(t *testing.T) {
	lane.Live(t)
	cgrouptest.ForEachHierarchy(t, testTreeListsEscapees)
}

func testTreeListsEscapees(t *testing.T, ours bool) {
	s, _, l := treeSession(t, ours)
	launched, err := s.Launch([]string{"/bin/sh", "-c", "setsid -f env -i sleep 7030.5" + runTag + "; exec sleep 7031.5" + runTag}, []string{"PATH=/usr/bin:/bin"}, l.root, nil, nil, nil)
	must(t, err)
	defer func() { s.KillTree(launched.PID(), syscall.SIGKILL); launched.Wait() }()
	var escapee int
	for deadline := time.Now().Add(5 * time.Second); escapee == 0 || len(procsNamed("7031.5"+runTag)) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the command did not start: %v", procsNamed("7030.5"+runTag, "7031.5"+runTag))
		}
		// The sleep itself, not setsid's first process, which exits.
		if found := procsNamed("7030.5" + runTag); len(found) == 1 && strings.Fields(found[0])[1] == "sleep" {
			escapee, _ = strconv.Atoi(strings.Fields(found[0])[0])
		}
	}
	tree := s.Tree(launched.PID())
	slices.Sort(tree)
	want := []int{launched.PID(), escapee}
	slices.Sort(want)
	if !slices.Equal(tree, want) {
		t.Errorf("Tree = %v, want the command and its escapee %v", tree, want)
	}
	s.KillTree(launched.PID(), syscall.SIGKILL)
	if _, sig := launched.Wait(); sig != "SIGKILL" {
		t.Errorf("the command ended by %q, want SIGKILL", sig)
	}
	for deadline := time.Now().Add(5 * time.Second); len(procsNamed("7030.5"+runTag, "7031.5"+runTag)) > 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("survived KillTree: %v", procsNamed("7030.5"+runTag, "7031.5"+runTag))
		}
	}
}

// The next command's cgroup is made while a command runs (makeSpare), not
// on the next command's way to its start; that command is born in it, and
// Close leaves none behind.
func TestNextCommandsCgroupMadeAhead(t *testing.T) {
	lane.Live(t)
	cgrouptest.ForEachHierarchy(t, func(t *testing.T, ours bool) {
		s, _, l := treeSession(t, ours)
		cmdCgroup := func() string {
			t.Helper()
			out, code := run(t, s, l.root, "cat /proc/self/cgroup")
			for line := range strings.Lines(out) {
				if i := strings.Index(line, "/cmd-"); i >= 0 {
					return strings.TrimSpace(line[i+1:])
				}
			}
			t.Fatalf("the command ran in no cgroup of its own (%d):\n%s", code, out)
			return ""
		}
		cmdCgroup()
		s.mu.Lock()
		spare := s.spare
		s.mu.Unlock()
		if spare == nil {
			t.Fatal("no cgroup made ahead for the next command")
		}
		if got := cmdCgroup(); got != filepath.Base(spare.dir) {
			t.Errorf("the next command ran in %s, not in %s, made for it", got, filepath.Base(spare.dir))
		}
		s.mu.Lock()
		spare = s.spare
		s.mu.Unlock()
		if spare == nil {
			t.Fatal("no cgroup made ahead after the second command")
		}
		s.Close()
		if _, err := os.Stat(spare.dir); !os.IsNotExist(err) {
			t.Errorf("the cgroup made ahead is still there after Close: %v", err)
		}
	})
}

// A command's cgroup that its command left empty is the next command's
// (release), with no mkdir and rmdir a command; one that holds a job is not,
// and the next command's kill does not reach that job. A command in a
// reused cgroup still has everything it started killed with it, and a
// cgroup so killed is not reused.
func TestEmptyCommandCgroupReused(t *testing.T) {
	lane.Live(t)
	cgrouptest.ForEachHierarchy(t, func(t *testing.T, ours bool) {
		s, sup, l := treeSession(t, ours)
		// Its output, and the cgroup it ran in.
		bash := func(command string, timeout time.Duration) (runner.Result, string) {
			t.Helper()
			var out strings.Builder
			res, err := sup.Run(context.Background(), runner.Spec{
				Argv:    []string{"/bin/bash", "--noprofile", "--norc", "-c", "cat /proc/self/cgroup; " + command},
				Env:     []string{"PATH=/usr/bin:/bin"},
				Dir:     l.root,
				Timeout: timeout,
				Stdout:  &out,
			})
			must(t, err)
			return res, out.String()
		}
		cmdCgroup := func(command string) string {
			t.Helper()
			res, out := bash(command, 10*time.Second)
			if res.ExitCode == nil || *res.ExitCode != 0 {
				t.Fatalf("the command failed: %+v\n%s", res, out)
			}
			for line := range strings.Lines(out) {
				if i := strings.Index(line, "/cmd-"); i >= 0 {
					return strings.TrimSpace(line[i+1:])
				}
			}
			t.Fatalf("the command ran in no cgroup of its own: %+v", res)
			return ""
		}
		cmdCgroup("")
		s.mu.Lock()
		v1 := s.spare != nil && s.spare.kind != cgroup.V2
		s.mu.Unlock()
		if v1 {
			t.Skip("v1 alone: a command's cgroup counts its refused forks, and is not reused")
		}
		second := cmdCgroup("")
		for i := range 3 {
			if got := cmdCgroup("sleep 0.01 & wait"); got != second {
				t.Fatalf("command %d ran in %s, not in %s, which the last one left empty", i+3, got, second)
			}
		}
		dirs, _ := filepath.Glob(filepath.Join(filepath.Dir(s.spareDir(t)), "cmd-*"))
		if len(dirs) != 1 {
			t.Errorf("command cgroups after five commands one after the other: %v, want the one", dirs)
		}
		// What the session holds open of it (its directory and
		// cgroup.events, for the look after each command) does not grow
		// with the commands, and goes with Close (below).
		cgroups := filepath.Dir(s.spareDir(t)) + "/"
		if held := fdsUnder(cgroups); len(held) > 2 {
			t.Errorf("descriptors on the session's cgroups after five commands: %v", held)
		}

		// A job left running keeps its cgroup: the next command gets another.
		job := "7040.5" + runTag
		withJob := cmdCgroup("setsid -f env -i sleep " + job + " >/dev/null 2>&1")
		if withJob != second {
			t.Fatalf("the command ran in %s, not in %s, which the last one left empty", withJob, second)
		}
		for deadline := time.Now().Add(5 * time.Second); len(procsNamed(job)) == 0; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the job did not start")
			}
		}
		// Killed at its timeout with what it started, in a cgroup that is
		// not the job's.
		escapee := "7041.5" + runTag
		started := seen(escapee)
		res, out := bash("setsid -f env -i sleep "+escapee+" >/dev/null 2>&1; sleep 100", time.Second)
		if !started() {
			t.Fatalf("the escape never started: %+v", res)
		}
		if !res.TimedOut {
			t.Fatalf("not timed out: %+v", res)
		}
		if strings.Contains(out, "/"+withJob+"\n") {
			t.Errorf("the command ran in %s, which its job still holds:\n%s", withJob, out)
		}
		for deadline := time.Now().Add(2 * time.Second); len(procsNamed(escapee)) > 0 && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
		if left := procsNamed(escapee); len(left) > 0 {
			t.Errorf("survived its command: %v", left)
		}
		if len(procsNamed(job)) == 0 {
			t.Error("an earlier command's job was killed with a later command")
		}
		// That timed-out command's cgroup, emptied by the kill, serves the
		// next, whose tree kill still ends all it started.
		last := cmdCgroup("")
		started = seen("7042.5" + runTag)
		// Deaf to SIGTERM: the runner's SIGKILL ends them, through
		// cgroup.kill.
		res, out = bash("trap '' TERM; setsid -f env -i sleep 7042.5"+runTag+" >/dev/null 2>&1; sleep 100", time.Second)
		if !started() || !res.TimedOut {
			t.Fatalf("the escape did not start, or the command did not time out: %+v", res)
		}
		if !strings.Contains(out, "/"+last+"\n") {
			t.Errorf("the command did not run in %s, which the last one left empty:\n%s", last, out)
		}
		for deadline := time.Now().Add(2 * time.Second); len(procsNamed("7042.5"+runTag)) > 0 && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
		if left := procsNamed("7042.5" + runTag); len(left) > 0 {
			t.Errorf("survived its command in a reused cgroup: %v", left)
		}
		// A cgroup killed through cgroup.kill is not reused: the kernel
		// kills what is born in it since (cgroup.Group.Reuse). The next
		// command runs (cmdCgroup: it exits 0), in another.
		if got := cmdCgroup(""); got == last {
			t.Errorf("the next command ran in %s, which a kill ended", got)
		}
		must(t, sup.Close())
		spare := s.spareDir(t)
		s.Close()
		if _, err := os.Stat(spare); !os.IsNotExist(err) {
			t.Errorf("the reused cgroup is still there after Close: %v", err)
		}
		if held := fdsUnder(cgroups); len(held) > 0 {
			t.Errorf("descriptors on the session's cgroups after Close: %v", held)
		}
	})
}

// fdsUnder lists what this process's descriptors open under dir.
func fdsUnder(dir string) []string {
	var held []string
	fds, _ := os.ReadDir("/proc/self/fd")
	for _, fd := range fds {
		if p, err := os.Readlink("/proc/self/fd/" + fd.Name()); err == nil && strings.HasPrefix(p, dir) {
			held = append(held, p)
		}
	}
	return held
}

// spareDir is the spare cgroup's directory; the test fails without one.
func (s *Session) spareDir(t *testing.T) string {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.spare == nil {
		t.Fatal("no spare cgroup")
	}
	return s.spare.dir
}
