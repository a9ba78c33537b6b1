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
