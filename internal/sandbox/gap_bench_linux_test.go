package sandbox

import (
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"
)

// BenchmarkLaunchAfterGap: a session's command after an idle gap, as an agent
// calls, the sandbox's own part of a sandboxed call: Launch of `true` (the
// request to the helper, its start in a cgroup, the answer) and Wait (the
// helper's report of its exit), beside a plain `true` after the same gap;
// medians, and per command the context switches of all the helper's threads,
// the CPU time they took (helper-cpu-ms: what the helper does for a command,
// which moves least with the machine's load) and the time they spent woken
// but waiting for a core (helper-runwait-ms).
//
//	go test -run '^$' -bench LaunchAfterGap -benchtime 12x ./internal/sandbox
func BenchmarkLaunchAfterGap(b *testing.B) {
	s, root := benchSession(b, "gap")
	pid := s.helper.Process.Pid
	for _, gap := range []time.Duration{0, 10 * time.Millisecond, 200 * time.Millisecond, 2 * time.Second} {
		b.Run("gap-"+gap.String(), func(b *testing.B) {
			var launch, wait, plain, switches, cpus, waited []float64
			ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
			for b.Loop() {
				time.Sleep(gap)
				sw0, c0, w0 := threadCost(b, pid)
				t0 := time.Now()
				l, err := s.Launch([]string{"/usr/bin/true"}, []string{"PATH=/usr/bin:/bin"}, root, nil, nil, nil)
				if err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				l.Wait()
				t2 := time.Now()
				sw1, c1, w1 := threadCost(b, pid)
				time.Sleep(gap)
				t3 := time.Now()
				if err := exec.Command("/usr/bin/true").Run(); err != nil {
					b.Fatal(err)
				}
				launch, wait = append(launch, ms(t1.Sub(t0))), append(wait, ms(t2.Sub(t1)))
				plain, switches = append(plain, ms(time.Since(t3))), append(switches, float64(sw1-sw0))
				cpus, waited = append(cpus, ms(time.Duration(c1-c0))), append(waited, ms(time.Duration(w1-w0)))
			}
			median := func(x []float64) float64 { slices.Sort(x); return x[len(x)/2] }
			b.ReportMetric(median(launch), "launch-ms")
			b.ReportMetric(median(wait), "wait-ms")
			b.ReportMetric(median(plain), "plain-ms")
			b.ReportMetric(median(switches), "helper-switches")
			b.ReportMetric(median(cpus), "helper-cpu-ms")
			b.ReportMetric(median(waited), "helper-runwait-ms")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// benchSession starts a session whose root is a new directory under /var/tmp
// (the session hides the host's /tmp); both are gone when b ends.
func benchSession(b *testing.B, name string) (*Session, string) {
	root, err := os.MkdirTemp("/var/tmp", "shellgate-"+name+"-bench-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(root) })
	s, err := Start(Spec{Writable: []string{root}})
	if err != nil {
		b.Skipf("no sandbox: %v", err)
	}
	b.Cleanup(func() { s.Close() })
	return s, root
}
