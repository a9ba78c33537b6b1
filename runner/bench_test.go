//go:build unix

package runner

import (
	"bytes"
	"context"
	"os/exec"
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
// and reports their time ratio, which drifts less with machine load than two
// separate benchmarks do. Target: run/exec ≤ 1.15.
func BenchmarkRunVsExec(b *testing.B) {
	s := newSupervisor(b)
	path := bash(b)
	var out, errs bytes.Buffer
	spec := Spec{Argv: []string{path, "-c", "true"}, Stdout: &out, Stderr: &errs}
	ctx := context.Background()
	var runTime, execTime time.Duration
	for b.Loop() {
		t0 := time.Now()
		if res, err := s.Run(ctx, spec); err != nil || *res.ExitCode != 0 {
			b.Fatal(res, err)
		}
		t1 := time.Now()
		if err := exec.Command(path, "-c", "true").Run(); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		runTime += t1.Sub(t0)
		execTime += t2.Sub(t1)
	}
	b.ReportMetric(float64(runTime)/float64(execTime), "run/exec")
}
