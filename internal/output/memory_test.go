package output

import (
	"os"
	"runtime"
	"testing"
)

func removeFile(path string) error { return os.Remove(path) }

// TestCaptureMemoryBounded streams 256 MiB through one Capture (1 GiB runs as
// BenchmarkCapture1GiB) and checks the live heap does not grow with the volume.
func TestCaptureMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 256 MiB")
	}
	chunk := filled(64<<10, "memory must not grow with output\n")
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)

	c := New(Options{SpillDir: t.TempDir(), Name: "stdout"})
	var peak uint64
	for i := range (256 << 20) / len(chunk) {
		c.Write(chunk)
		if i%512 == 0 {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapAlloc)
		}
	}
	r := c.Close()
	defer os.Remove(r.SpillPath)
	if r.Total != 256<<20 || r.SpillErr != nil {
		t.Fatalf("Total %d, SpillErr %v", r.Total, r.SpillErr)
	}
	if grown := int64(peak) - int64(before.HeapAlloc); grown > 4<<20 {
		t.Errorf("heap grew by %d bytes while capturing 256 MiB", grown)
	}
}
