package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shellgate/shellgate/internal/lane"
	"github.com/shellgate/shellgate/internal/runner"
	"github.com/shellgate/shellgate/internal/sandbox/helper"
	"github.com/shellgate/shellgate/internal/textpages/textpagestest"
)

// An idle session costs nothing: once its commands and jobs are gone, its
// helper sleeps until the next command, with no timer waking it. (While the
// guard ran in every session its helper woke about 50 times a second.)
func TestIdleSessionSleeps(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	s := start(t, l.spec())
	cmd, _ := launch(t, s, l.root, "sleep 0.3 & true")
	cmd.Wait()
	waitEmpty(t, s)
	// Any second without a wake-up will do: another test's load may delay
	// the guard's last look, never add looks to an idle helper.
	pid := s.helper.Process.Pid
	var last int
	for i := 0; i < 10; i++ {
		before, _, _ := threadCost(t, pid)
		time.Sleep(time.Second)
		after, _, _ := threadCost(t, pid)
		if last = int(after - before); last <= 1 {
			return
		}
	}
	t.Errorf("an idle session's helper woke %d times in a second, every second for 10 s", last)
}

// BenchmarkIdleHelper: what an idle session's helper costs, after a command
// that left a job has ended: its wake-ups (context switches, all threads) and
// CPU time per second, one second per op.
//
//	go test -run '^$' -bench IdleHelper -benchtime 10x ./internal/sandbox
func BenchmarkIdleHelper(b *testing.B) {
	s, root := benchSession(b, "idle")
	l, err := s.Launch([]string{"/bin/sh", "-c", "sleep 0.3 & true"}, []string{"PATH=/usr/bin:/bin"}, root, nil, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	l.Wait()
	waitEmpty(b, s)
	time.Sleep(time.Second) // the guard's last look
	pid := s.helper.Process.Pid
	switches0, cpu0, _ := threadCost(b, pid)
	b.ResetTimer()
	for b.Loop() {
		time.Sleep(time.Second)
	}
	switches, cpu, _ := threadCost(b, pid)
	b.ReportMetric(float64(switches-switches0)/float64(b.N), "wakeups/s")
	b.ReportMetric(float64(cpu-cpu0)/1e3/float64(b.N), "cpu-µs/s")
}

// threadCost sums the context switches, the CPU time (ns) and the time spent
// runnable, waiting for a core (ns), of every thread of a process, as
// /proc/PID/task/*/ says.
func threadCost(b testing.TB, pid int) (switches, cpu, waited int64) {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*", pid))
	if err != nil || len(tasks) == 0 {
		b.Fatalf("no threads of %d: %v", pid, err)
	}
	for _, task := range tasks {
		if st, err := os.ReadFile(filepath.Join(task, "status")); err == nil {
			for _, line := range strings.Split(string(st), "\n") {
				if k, v, ok := strings.Cut(line, ":"); ok && strings.HasSuffix(k, "ctxt_switches") {
					n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
					switches += n
				}
			}
		}
		if ss, err := os.ReadFile(filepath.Join(task, "schedstat")); err == nil {
			if f := strings.Fields(string(ss)); len(f) > 1 {
				n, _ := strconv.ParseInt(f[0], 10, 64)
				w, _ := strconv.ParseInt(f[1], 10, 64)
				cpu, waited = cpu+n, waited+w
			}
		}
	}
	return switches, cpu, waited
}

// exeResident returns the resident kB of pid's mappings of its executable.
func exeResident(t testing.TB, pid int) int {
	t.Helper()
	kb, err := textpagestest.ExeResidentKB(pid)
	if err != nil {
		t.Skip(err)
	}
	return kb
}

// An idle helper gives up its mappings of the executable's pages
// (textpages.Drop) once shellgate says it is idle (Session.Idle) and its
// session is empty, well before idleDrop, and commands started afterwards,
// several at once, run as before.
func TestIdleHelperDropsTextAndRunsOn(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	s := start(t, l.spec())
	pid := s.helper.Process.Pid
	out, code := run(t, s, l.root, "echo first")
	if code != 0 || out != "first\n" {
		t.Fatalf("first command: %d %q", code, out)
	}
	mapped := exeResident(t, pid)
	waitEmpty(t, s)
	time.Sleep(helper.GuardEvery + 300*time.Millisecond) // the guard's spell is over: said during it, Idle is for the call that ran
	s.Idle()
	var idle int
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		// Without the drop nothing unmaps them (what the helper touches
		// maps more); with it, what is touched after maps some back
		// (alone 5 of 11 MB, 7 MB in the whole package's run with -race).
		if idle = exeResident(t, pid); idle < mapped-1024 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("an idle helper still maps %d kB of its executable (%d kB after a command)", idle, mapped)
		}
	}
	t.Logf("the helper's executable pages resident: %d kB after a command, %d kB idle", mapped, idle)
	// Four at once: each starts while the others run.
	var outs []func() string
	var cmds []runner.Launched
	for i := range 4 {
		cmd, out := launch(t, s, l.root, fmt.Sprintf("sleep 0.2; echo %d", i))
		cmds, outs = append(cmds, cmd), append(outs, out)
	}
	for i, cmd := range cmds {
		if code, _ := cmd.Wait(); code == nil || *code != 0 || outs[i]() != fmt.Sprintf("%d\n", i) {
			t.Errorf("command %d after the drop: %v %q", i, code, outs[i]())
		}
	}
}

// A helper gives up the pages its start touched once it has sat idle after
// its set-up (setUpIdle), not at once: a one-shot run's command follows the
// set-up at once, and waited for the drop.
func TestHelperDropsSetUpPagesOnceIdle(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	s := start(t, l.spec())
	pid := s.helper.Process.Pid
	time.Sleep(100 * time.Millisecond) // a drop at once is over by now
	set := exeResident(t, pid)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if idle := exeResident(t, pid); idle < set-1024 {
			t.Logf("the helper's executable pages resident: %d kB set up, %d kB idle", set, idle)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the helper maps %d kB of its executable as it did after its set-up: it dropped them at once, or never", set)
		}
	}
}

// Between an agent's calls, seconds apart, the helper keeps the pages of
// its executable that its commands touch (guard: idleDrop) until shellgate
// says it is idle: a drop at each spell's end made every call after a gap
// wait for ~25 faults mapping them back, and read smaps besides; a drop
// after 4 s of the helper's own quiet did the same to an agent's calls ten
// seconds apart. Nor does a Session.Idle said while a command runs drop
// them once it ends: the server has heard from its client since.
func TestHelperKeepsPagesBetweenCalls(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	s := start(t, l.spec())
	pid := s.helper.Process.Pid
	for i := range 3 {
		command := "echo hi"
		if i == 2 {
			command = "sleep 0.3; echo hi"
		}
		cmd, out := launch(t, s, l.root, command)
		if i == 2 {
			s.Idle() // while the command runs
		}
		if code, _ := cmd.Wait(); code == nil || *code != 0 || out() != "hi\n" {
			t.Fatalf("call %d: %v %q", i, code, out())
		}
		mapped := exeResident(t, pid)
		waitEmpty(t, s)
		quiet := helper.GuardEvery + 600*time.Millisecond // the guard's spell is over
		if i == 1 {
			quiet = helper.GuardEvery + 4500*time.Millisecond // and the helper's old 4 s of its own
		}
		time.Sleep(quiet)
		if idle := exeResident(t, pid); idle < mapped-1024 {
			t.Fatalf("call %d: the helper gave up its executable's pages %v after it: %d kB mapped, then %d kB", i, quiet, mapped, idle)
		}
	}
}
