package cgroup_test

import (
	"slices"
	"testing"
	"time"

	"github.com/shellgate/shellgate/internal/cgroup"
)

// BenchmarkReuseAfterGap is the look at an empty command cgroup after its
// command, as the session makes it on the way from the command's exit to
// the call's result (cgroup.Group.Reuse), after idle gaps: by the cgroup's
// path (path-us: open its directory and cgroup.events, read) and through the
// descriptors the session holds from one command to the next (kept-us:
// cgroup.Kept), in turn, in one run.
//
//	go test -run '^$' -bench ReuseAfterGap -benchtime 20x ./internal/cgroup
func BenchmarkReuseAfterGap(b *testing.B) {
	g, err := cgroup.Make(100, 0)
	if err != nil {
		b.Skipf("no cgroup here: %v", err)
	}
	defer g.Remove()
	dir, kind, files, err := g.Command(1)
	if err != nil || kind != cgroup.V2 || len(files) != 1 {
		cgroup.CloseFiles(files)
		b.Skipf("no cgroup2 command cgroup here (%v, %q)", err, kind)
	}
	kept := cgroup.Keep(files[0])
	defer kept.Close()
	for _, gap := range []time.Duration{0, 10 * time.Millisecond, 200 * time.Millisecond} {
		b.Run("gap-"+gap.String(), func(b *testing.B) {
			var byPath, held []float64
			us := func(d time.Duration) float64 { return float64(d) / 1e3 }
			for b.Loop() {
				time.Sleep(gap)
				t0 := time.Now()
				_, fs, ok := g.Reuse(dir, nil)
				d := time.Since(t0)
				cgroup.CloseFiles(fs)
				if !ok {
					b.Fatal("an empty cgroup not reusable by its path")
				}
				byPath = append(byPath, us(d))
				time.Sleep(gap)
				t0 = time.Now()
				if _, _, ok := g.Reuse(dir, kept); !ok {
					b.Fatal("an empty cgroup not reusable through what is kept of it")
				}
				held = append(held, us(time.Since(t0)))
			}
			median := func(x []float64) float64 { slices.Sort(x); return x[len(x)/2] }
			b.ReportMetric(median(byPath), "path-us")
			b.ReportMetric(median(held), "kept-us")
			b.ReportMetric(0, "ns/op")
		})
	}
}
