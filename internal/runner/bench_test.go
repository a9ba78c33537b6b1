//go:build unix

package runner

import (
	"bytes"
	"context"
	"os/exec"
	"slices"
	"testing"
	"time"
)

// BenchmarkRunTrue is the per-Run overhead: compare with BenchmarkExecCommandTrue.
func BenchmarkRunTrue(b *testing.B) {
	s := newSupervisor(b)
	var out, errs bytes.Buffer
	spec := Spec{Argv: []string{bash(b), "-c", "true"}, Stdout: &out, Stderr: &errs}
	ctx := context.Background()
	for b.Loop() {
		if res, err := s.Run(ctx, spec); err != nil || *res.ExitCode != 0 {
			b.Fatal(res, err)
		}
	}
}

// BenchmarkExecCommandTrue is the baseline: a bare exec.Command, output to the
// null device.
func BenchmarkExecCommandTrue(b *testing.B) {
	path := bash(b)
	for b.Loop() {
		if err := exec.Command(path, "-c", "true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkThroughput reads 256 MiB of output into a counting writer.
func BenchmarkThroughput(b *testing.B) {
	s := newSupervisor(b)
	const size = 256 << 20
	var w counter
	spec := Spec{Argv: []string{bash(b), "-c", "head -c 268435456 /dev/zero"}, Stdout: &w}
	b.SetBytes(size)
	for b.Loop() {
		w.n.Store(0)
		if res, err := s.Run(context.Background(), spec); err != nil || *res.ExitCode != 0 {
			b.Fatal(res, err)
		}
		if w.n.Load() != size {
			b.Fatalf("read %d bytes, want %d", w.n.Load(), size)
		}
	}
}

// BenchmarkRunVsExec alternates a Run and a bare exec.Command of `bash -c true`
// and reports the median of their paired time ratios, which machine load moves
// far less than it moves two separate benchmarks. Target: run/exec ≤ 1.15.
func BenchmarkRunVsExec(b *testing.B) {
	s := newSupervisor(b)
	path := bash(b)
	var out, errs bytes.Buffer
	spec := Spec{Argv: []string{path, "-c", "true"}, Stdout: &out, Stderr: &errs, Timeout: time.Minute}
	ctx := context.Background()
	var ratios []float64
	for b.Loop() {
		t0 := time.Now()
		if res, err := s.Run(ctx, spec); err != nil || *res.ExitCode != 0 {
			b.Fatal(res, err)
		}
		t1 := time.Now()
		if err := exec.Command(path, "-c", "true").Run(); err != nil {
			b.Fatal(err)
		}
		ratios = append(ratios, float64(t1.Sub(t0))/float64(time.Since(t1)))
	}
	slices.Sort(ratios)
	b.ReportMetric(ratios[len(ratios)/2], "run/exec")
}
