package output

import (
	"bytes"
	"fmt"
	"runtime"
	"runtime/debug"
	"slices"
	"testing"
	"time"
)

// BenchmarkCaptureThroughput streams text through a Capture in 64 KiB writes, as the
// runner does, including the spill to disk. Target: ≥ 500 MB/s.
func BenchmarkCaptureThroughput(b *testing.B) {
	chunk := filled(64<<10, "2026-11-22T09:00:00Z INFO compiling package 042 of 317 ...\n")
	dir := b.TempDir()
	const perCapture = 256 << 20 // a fresh Capture (and file) every 256 MiB
	b.SetBytes(int64(len(chunk)))
	b.ReportAllocs()
	c := New(Options{SpillDir: dir, Name: "stdout"})
	for b.Loop() {
		if c.Total() >= perCapture {
			removeSpill(b, c.Close())
			c = New(Options{SpillDir: dir, Name: "stdout"})
		}
		c.Write(chunk)
	}
	removeSpill(b, c.Close())
}

// BenchmarkCaptureRedacting is BenchmarkCaptureThroughput with ten secret values to
// redact (none occurring): run the two side by side for the cost of redaction.
func BenchmarkCaptureRedacting(b *testing.B) {
	chunk := filled(64<<10, "2026-11-22T09:00:00Z INFO compiling package 042 of 317 ...\n")
	secrets := map[string]string{}
	for i := range 10 {
		secrets[fmt.Sprintf("TOKEN_%d", i)] = fmt.Sprintf("ghp_%036d", i)
	}
	dir := b.TempDir()
	const perCapture = 256 << 20
	b.SetBytes(int64(len(chunk)))
	b.ReportAllocs()
	c := New(Options{SpillDir: dir, Name: "stdout", Redact: secrets})
	for b.Loop() {
		if c.Total() >= perCapture {
			removeSpill(b, c.Close())
			c = New(Options{SpillDir: dir, Name: "stdout", Redact: secrets})
		}
		c.Write(chunk)
	}
	removeSpill(b, c.Close())
}

// BenchmarkCaptureInMemory fills a Capture up to the limit, as most commands do: no
// spill file, one Text built at Close.
func BenchmarkCaptureInMemory(b *testing.B) {
	chunk := bytes.Repeat([]byte("short line of output\n"), 40) // 840 B
	writes := DefaultLimit / len(chunk)
	dir := b.TempDir()
	b.SetBytes(int64(writes * len(chunk)))
	b.ReportAllocs()
	for b.Loop() {
		c := New(Options{SpillDir: dir})
		for range writes {
			c.Write(chunk)
		}
		if r := c.Close(); r.Truncated {
			b.Fatal("truncated")
		}
	}
}

// BenchmarkCapture1GiB pushes 1 GiB through one Capture and reports the peak heap in
// use and held from the OS (HeapSys-HeapReleased) meanwhile: memory must stay bounded
// whatever the volume. Earlier benchmarks' memory is returned to the OS first.
func BenchmarkCapture1GiB(b *testing.B) {
	chunk := filled(64<<10, "0123456789abcdef ten-gigabyte-logs-are-a-thing\n")
	dir := b.TempDir()
	b.SetBytes(1 << 30)
	debug.FreeOSMemory()
	var peakInuse, peakHeld uint64
	for b.Loop() {
		c := New(Options{SpillDir: dir, Name: "stdout"})
		for i := range (1 << 30) / len(chunk) {
			c.Write(chunk)
			if i%1024 == 0 { // every 64 MiB
				inuse, held := heap()
				peakInuse, peakHeld = max(peakInuse, inuse), max(peakHeld, held)
			}
		}
		r := c.Close()
		if r.Total != 1<<30 || r.SpillCapped {
			b.Fatalf("Total %d, SpillCapped %v", r.Total, r.SpillCapped)
		}
		removeSpill(b, r)
	}
	b.ReportMetric(float64(peakInuse)/(1<<20), "MB-heap-inuse")
	b.ReportMetric(float64(peakHeld)/(1<<20), "MB-heap-held")
}

func heap() (inuse, held uint64) {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse, m.HeapSys - m.HeapReleased
}

func removeSpill(b *testing.B, r Result) {
	if r.SpillErr != nil {
		b.Fatal(r.SpillErr)
	}
	// Each spill file is large; keep the disk free between iterations.
	if r.SpillPath != "" {
		if err := removeFile(r.SpillPath); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCaptureClose: what closing a Capture that spilled 64 MiB of text
// costs beside writing it. The digest of the omitted middle is found while it
// is written (it used to be read back from the spill file at close).
func BenchmarkCaptureClose(b *testing.B) {
	chunk := filled(64<<10, "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abc\n")
	dir := b.TempDir()
	const n = 64 << 20
	var writes, closes []float64
	for b.Loop() {
		c := New(Options{SpillDir: dir, Name: "stdout"})
		t0 := time.Now()
		for c.Total() < n {
			c.Write(chunk)
		}
		t1 := time.Now()
		r := c.Close()
		closes = append(closes, float64(time.Since(t1))/1e6)
		writes = append(writes, float64(t1.Sub(t0))/1e6)
		removeSpill(b, r)
	}
	slices.Sort(writes)
	slices.Sort(closes)
	b.ReportMetric(writes[len(writes)/2], "write-ms")
	b.ReportMetric(closes[len(closes)/2], "close-ms")
}

// BenchmarkDigestScan: the digest's search alone, over 256 KiB of lines
// holding none of its words: hex (CaptureClose's and the root package's
// CaptureVsCat's text) and English, whose many e, t, w, f and p make the
// pairs it looks for common. The pure-Go search of other processors is
// `-tags purego`.
func BenchmarkDigestScan(b *testing.B) {
	for _, tc := range []struct{ name, line string }{
		{"hex", "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abc\n"},
		{"english", "The quick brown fox jumps over the lazy dog; tests pass, a parser reads every token.\n"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			buf := filled(256<<10, tc.line)
			b.SetBytes(int64(len(buf)))
			for b.Loop() {
				if wordAt(buf) >= 0 {
					b.Fatal("a word found in text without one")
				}
			}
		})
	}
}
