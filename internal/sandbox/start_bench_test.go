package sandbox

import (
	"os/exec"
	"slices"
	"testing"
	"time"
)

// BenchmarkStart: starting and closing a session — what every new MCP session
// pays once — alternating with starting `true`, as a baseline of the same run.
//
//	go test -run '^$' -bench Start -benchtime 50x ./sandbox
func BenchmarkStart(b *testing.B) {
	root := b.TempDir()
	var session, baseline []time.Duration
	for b.Loop() {
		t0 := time.Now()
		s, err := Start(Spec{Writable: []string{root}})
		if err != nil {
			b.Skipf("no sandbox: %v", err)
		}
		s.Close()
		t1 := time.Now()
		if err := exec.Command("true").Run(); err != nil {
			b.Fatal(err)
		}
		session, baseline = append(session, t1.Sub(t0)), append(baseline, time.Since(t1))
	}
	median := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2].Microseconds()) / 1000
	}
	b.ReportMetric(median(session), "session-median-ms")
	b.ReportMetric(median(baseline), "true-median-ms")
}
