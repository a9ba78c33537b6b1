package shellgate_test

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/envelope"
	"github.com/shellgate/shellgate/internal/sandbox"
)

// The overhead of a Gate (policy check, process group, capture, envelope) over a bare
// fork/exec of the same shell: compare BenchmarkRunTrue with BenchmarkExecTrue.
// Target: ≤ 1.15×.
func BenchmarkRunTrue(b *testing.B) {
	g, err := shellgate.New(shellgate.Config{Root: b.TempDir(), SpillDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	req := shellgate.Request{Command: cmp.Or(os.Getenv("SHELLGATE_BENCH_COMMAND"), "true")}
	for b.Loop() {
		if env := g.Run(context.Background(), req); env.Status != envelope.Success {
			b.Fatal(env.Text)
		}
	}
}

func BenchmarkExecTrue(b *testing.B) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		b.Skip("no bash")
	}
	for b.Loop() {
		if err := exec.Command(bash, "--noprofile", "--norc", "-c", "true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}

// The same comparison made fairly on a busy machine: each iteration times one Gate.Run
// and one bare exec back to back, and the median of their ratios is reported as
// gate/exec. Target: ≤ 1.15.
func BenchmarkRunVsExec(b *testing.B) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		b.Skip("no bash")
	}
	g, err := shellgate.New(shellgate.Config{Root: b.TempDir(), SpillDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	req := shellgate.Request{Command: cmp.Or(os.Getenv("SHELLGATE_BENCH_COMMAND"), "true")}
	var ratios []float64
	for b.Loop() {
		t0 := time.Now()
		if env := g.Run(context.Background(), req); env.Status != envelope.Success {
			b.Fatal(env.Text)
		}
		t1 := time.Now()
		if err := exec.Command(bash, "--noprofile", "--norc", "-c", "true").Run(); err != nil {
			b.Fatal(err)
		}
		ratios = append(ratios, float64(t1.Sub(t0))/float64(time.Since(t1)))
	}
	slices.Sort(ratios)
	b.ReportMetric(ratios[len(ratios)/2], "gate/exec")
}

// yes prints a 64-byte line forever; head cuts it to n bytes.
func yesCommand(n int64) string {
	return "yes 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abc | head -c " + strconv.FormatInt(n, 10)
}

// Capture throughput through the whole Gate, spill file included. Target ≥ 500 MB/s.
func BenchmarkCaptureThroughput(b *testing.B) {
	const n = 256 << 20
	g, err := shellgate.New(shellgate.Config{Root: b.TempDir(), SpillDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	req := shellgate.Request{Command: yesCommand(n)}
	b.SetBytes(n)
	for b.Loop() {
		env := g.Run(context.Background(), req)
		if env.Stats.StdoutBytes != n {
			b.Fatalf("captured %d bytes: %s", env.Stats.StdoutBytes, env.Text)
		}
		os.Remove(*env.Data.FullOutputPath)
	}
}

// The same output written to a file by the shell itself, without shellgate: the
// machine's ceiling for BenchmarkCaptureThroughput.
func BenchmarkCaptureBaseline(b *testing.B) {
	const n = 256 << 20
	out := b.TempDir() + "/out"
	b.SetBytes(n)
	for b.Loop() {
		if err := exec.Command("bash", "-c", yesCommand(n)+" | cat > "+out).Run(); err != nil {
			b.Fatal(err)
		}
		os.Remove(out)
	}
}

// Capture through the whole Gate against `cat` into a file, alternating, with
// the default sandbox and with --sandbox off: the median ratio of the Gate's
// throughput to cat's (64 MiB each). Target: ≥ 0.8. On a machine whose cores
// are all busy, throughput is the share of CPU each side gets, so with
// --sandbox off, where every process of both sides is a child of this one,
// the CPU time of each side (this process's and its reaped children's) is
// reported too: cat-cpu/gate-cpu is the Gate's throughput per CPU second
// against cat's, what the load does not move.
func BenchmarkCaptureVsCat(b *testing.B) {
	const n = 64 << 20
	out := b.TempDir() + "/out"
	for _, mode := range []string{"auto", "off"} {
		g, err := shellgate.New(shellgate.Config{Root: b.TempDir(), SpillDir: b.TempDir(), Sandbox: shellgate.SandboxConfig{Mode: sandbox.Mode(mode)}})
		if err != nil {
			b.Fatal(err)
		}
		defer g.Close()
		b.Run(mode, func(b *testing.B) {
			req := shellgate.Request{Command: yesCommand(n)}
			var ratios, gates, cpus []float64
			for b.Loop() {
				c0 := cpuTime()
				t0 := time.Now()
				env := g.Run(context.Background(), req)
				t1 := time.Now()
				c1 := cpuTime()
				if env.Stats.StdoutBytes != n {
					b.Fatalf("captured %d bytes: %s", env.Stats.StdoutBytes, env.Text)
				}
				os.Remove(*env.Data.FullOutputPath)
				t2 := time.Now()
				if err := exec.Command("bash", "-c", yesCommand(n)+" | cat > "+out).Run(); err != nil {
					b.Fatal(err)
				}
				cat := time.Since(t2)
				c2 := cpuTime()
				os.Remove(out)
				gates = append(gates, n/t1.Sub(t0).Seconds()/1e6)
				ratios = append(ratios, float64(cat)/float64(t1.Sub(t0)))
				if c1 > c0 {
					cpus = append(cpus, float64(c2-c1)/float64(c1-c0))
				}
			}
			slices.Sort(ratios)
			slices.Sort(gates)
			slices.Sort(cpus)
			b.ReportMetric(gates[len(gates)/2], "gate-MB/s")
			b.ReportMetric(ratios[len(ratios)/2], "gate/cat")
			if mode == "off" && len(cpus) > 0 {
				b.ReportMetric(cpus[len(cpus)/2], "cat-cpu/gate-cpu")
			}
		})
	}
}

// Peak resident memory while a command prints 1 GiB. Target ≤ 32 MiB RSS for the
// whole process (the Go test binary included).
func BenchmarkPeakRSS1GiB(b *testing.B) {
	g, err := shellgate.New(shellgate.Config{Root: b.TempDir(), SpillDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	peakRSS(b, func(req shellgate.Request) envelope.Envelope { return g.Run(context.Background(), req) })
}

// BenchmarkPeakRSS1GiBSession is BenchmarkPeakRSS1GiB through a session, as
// every MCP call runs: the call's output goes to its job log (its first
// 64 KiB in memory, then a file) as well as to its capture.
func BenchmarkPeakRSS1GiBSession(b *testing.B) {
	s := benchSession(b)
	peakRSS(b, func(req shellgate.Request) envelope.Envelope { return s.Run(context.Background(), req) })
}

// benchSession is a session of a Gate with the default sandbox, closed with
// the benchmark.
func benchSession(b *testing.B) *shellgate.Session {
	g, err := shellgate.New(shellgate.Config{Root: b.TempDir(), SpillDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	s := g.NewSession(shellgate.SessionConfig{})
	b.Cleanup(func() { s.Close(); g.Close() })
	return s
}

// peakRSS reports the peak resident memory while run runs a command that
// prints 1 GiB, whose full output file must hold all of it.
func peakRSS(b *testing.B, run func(shellgate.Request) envelope.Envelope) {
	const n = 1 << 30
	var peak atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			if rss := residentBytes(); rss > peak.Load() {
				peak.Store(rss)
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	b.SetBytes(n)
	for b.Loop() {
		env := run(shellgate.Request{Command: yesCommand(n)})
		if env.Stats.StdoutBytes != n || env.Data.FullOutputPath == nil {
			b.Fatalf("captured %d bytes: %s", env.Stats.StdoutBytes, env.Text)
		}
		if fi, err := os.Stat(*env.Data.FullOutputPath); err != nil || fi.Size() != n {
			b.Fatalf("the full output file: %v", err)
		}
		os.Remove(*env.Data.FullOutputPath)
	}
	close(stop)
	wg.Wait()
	b.ReportMetric(float64(peak.Load())/(1<<20), "peak-RSS-MiB")
}

// residentBytes reads VmRSS from /proc/self/status (Linux).
func residentBytes() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// The sandbox's cost per command: each iteration runs `true` through a Gate with
// the default sandbox and through one with --sandbox off, back to back, and the
// medians of the difference and of the ratio are reported. Target: ≤ 3 ms.
// SHELLGATE_BENCH_COMMAND runs another command instead, e.g. one that writes
// files (`for i in $(seq 100); do echo $i >> log; done`: 100 opens for writing,
// each handed to the helper by the hard-link guard).
func BenchmarkSandboxOverhead(b *testing.B) {
	gates := map[string]*shellgate.Gate{}
	for _, mode := range []string{"auto", "off"} {
		g, err := shellgate.New(shellgate.Config{Root: b.TempDir(), SpillDir: b.TempDir(), Sandbox: shellgate.SandboxConfig{Mode: sandbox.Mode(mode)}})
		if err != nil {
			b.Fatal(err)
		}
		defer g.Close()
		gates[mode] = g
	}
	req := shellgate.Request{Command: cmp.Or(os.Getenv("SHELLGATE_BENCH_COMMAND"), "true")}
	if env := gates["auto"].Run(context.Background(), req); env.Context.Sandbox == "off" {
		b.Skip("no sandbox here")
	}
	// SHELLGATE_BENCH_PAUSE (e.g. 300ms) waits before each pair, as an agent
	// does between calls: caches and the CPU cool down between commands.
	pause, _ := time.ParseDuration(os.Getenv("SHELLGATE_BENCH_PAUSE"))
	var diffs, ratios []float64
	for b.Loop() {
		time.Sleep(pause)
		t0 := time.Now()
		if env := gates["auto"].Run(context.Background(), req); env.Status != envelope.Success {
			b.Fatal(env.Text)
		}
		t1 := time.Now()
		if env := gates["off"].Run(context.Background(), req); env.Status != envelope.Success {
			b.Fatal(env.Text)
		}
		on, off := t1.Sub(t0), time.Since(t1)
		diffs = append(diffs, float64(on-off)/float64(time.Millisecond))
		ratios = append(ratios, float64(on)/float64(off))
	}
	slices.Sort(diffs)
	slices.Sort(ratios)
	b.ReportMetric(diffs[len(diffs)/2], "sandbox-ms")
	b.ReportMetric(ratios[len(ratios)/2], "on/off")
}

// How soon a command blocked on its input is reported as waiting for it
// (target: within 1 s), beside a session call of `true` in the same run:
// each iteration runs `read x` until it is reported, then kills that job.
func BenchmarkWaitingForInput(b *testing.B) {
	s := benchSession(b)
	ctx := context.Background()
	s.Run(ctx, shellgate.Request{Command: "true"}) // the sandbox starts
	var waits, trues []float64
	for b.Loop() {
		t0 := time.Now()
		env := s.Run(ctx, shellgate.Request{Command: "read x"})
		waits = append(waits, float64(time.Since(t0))/1e6)
		if env.Data.Job == nil || env.Data.Job.State != envelope.JobWaiting {
			b.Fatal(env.Text)
		}
		s.Kill(ctx, env.Data.Job.ID)
		t1 := time.Now()
		s.Run(ctx, shellgate.Request{Command: "true"})
		trues = append(trues, float64(time.Since(t1))/1e6)
	}
	slices.Sort(waits)
	slices.Sort(trues)
	b.ReportMetric(waits[len(waits)/2], "waiting-ms")
	b.ReportMetric(trues[len(trues)/2], "true-ms")
}

// A call that leaves a job running in the background (`setsid sleep 30 &`,
// `nohup sleep 30 &`: the job keeps the output pipes) beside a plain call of
// `true` on the same Gate, alternating, with the default sandbox and with
// --sandbox off; the median of each kind and of their ratio. Target: ≤ 2×.
func BenchmarkBackgroundCall(b *testing.B) {
	// As the shellgate command does: without the sandbox, what a call left
	// is looked for in this process's tree, not among every process.
	if err := shellgate.Subreap(); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		b.Fatal(err)
	}
	for _, mode := range []string{"auto", "off"} {
		g, err := shellgate.New(shellgate.Config{Root: b.TempDir(), SpillDir: b.TempDir(), Sandbox: shellgate.SandboxConfig{Mode: sandbox.Mode(mode)}})
		if err != nil {
			b.Fatal(err)
		}
		defer g.Close()
		for _, bg := range []string{"setsid sleep 30 &", "nohup sleep 30 &"} {
			b.Run(mode+"/"+strings.Fields(bg)[0], func(b *testing.B) {
				ctx := context.Background()
				var bgs, plains, ratios, bgCPU, plainCPU []float64
				for b.Loop() {
					c0, t0 := selfCPU(), time.Now()
					env := g.Run(ctx, shellgate.Request{Command: bg})
					c1, t1 := selfCPU(), time.Now()
					if env.Status != envelope.Success || len(env.Data.BackgroundPIDs) == 0 {
						b.Fatalf("%s: %s, background PIDs %v:\n%s", bg, env.Status, env.Data.BackgroundPIDs, env.Text)
					}
					if env := g.Run(ctx, shellgate.Request{Command: "true"}); env.Status != envelope.Success {
						b.Fatal(env.Text)
					}
					on, off := t1.Sub(t0), time.Since(t1)
					// This process's own CPU (not the shell's): what its
					// look for what the call left costs, whatever the load.
					bgCPU = append(bgCPU, float64(c1-c0)/1e6)
					plainCPU = append(plainCPU, float64(selfCPU()-c1)/1e6)
					bgs = append(bgs, float64(on)/1e6)
					plains = append(plains, float64(off)/1e6)
					ratios = append(ratios, float64(on)/float64(off))
				}
				for _, s := range [][]float64{bgs, plains, ratios, bgCPU, plainCPU} {
					slices.Sort(s)
				}
				b.ReportMetric(bgCPU[len(bgCPU)/2], "bg-cpu-ms")
				b.ReportMetric(plainCPU[len(plainCPU)/2], "plain-cpu-ms")
				b.ReportMetric(bgs[len(bgs)/2], "bg-ms")
				b.ReportMetric(plains[len(plains)/2], "plain-ms")
				b.ReportMetric(ratios[len(ratios)/2], "bg/plain")
			})
		}
	}
}
