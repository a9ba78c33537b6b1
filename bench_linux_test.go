package shellgate_test

import (
	"slices"
	"testing"

	"github.com/shellgate/shellgate/internal/benchfloor"
)

// BenchmarkNamespaceExitFloor: the floor under the sandbox's part of exit on
// EOF. A shell in new user, mount and PID namespaces, as the sandbox's helper
// runs in, with 50 bind mounts (about as many as the helper's view) or none,
// with IPC and network namespaces too, and as the helper with its caches'
// overlays (benchfloor.Helper), beside a plain shell: each waits on its
// stdin, and the time from closing it to the shell being reaped is its exit,
// namespace teardown included. Medians. No shellgate code runs: what it
// shows is the kernel's cost.
func BenchmarkNamespaceExitFloor(b *testing.B) {
	times := make([][]float64, len(benchfloor.Kinds))
	for b.Loop() {
		for i, k := range benchfloor.Kinds {
			d, err := k.Exit.Time(b.TempDir())
			if err != nil {
				b.Skipf("%s cannot be made here: %v", k.Name, err)
			}
			times[i] = append(times[i], float64(d)/1e6)
		}
	}
	for i, k := range benchfloor.Kinds {
		slices.Sort(times[i])
		b.ReportMetric(times[i][len(times[i])/2], k.Name+"-exit-ms")
	}
	b.ReportMetric(0, "ns/op")
}
