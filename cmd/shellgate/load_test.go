package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkHTTPLoad: one `shellgate mcp --http` server runs 100 concurrent
// `sleep 1; echo ok` calls from 10 sessions, against the same 100 commands started at
// once by `xargs -P100` (with sh, and with bash as shellgate runs them), in the same
// run. Reports the wall times, the ratios and the server's peak RSS. Every call must
// succeed. Beside them, where the gap goes: the same burst through a second
// server with --sandbox off (shellgate-off), and the floor of any Go server,
// the same 100 bash commands started by this process's own concurrent
// exec.Command (go-exec: Go forks one at a time, from a larger process).
//
//	go test -run '^$' -bench HTTPLoad -benchtime 3x ./cmd/shellgate
func BenchmarkHTTPLoad(b *testing.B) {
	const sessions, perSession = 10, 10
	bin := buildBinary(b)
	xargs, err := exec.LookPath("xargs")
	if err != nil {
		b.Skip("no xargs")
	}
	cmd, _ := mcpCommand(b, bin, "--http", "127.0.0.1:0", "--token-file", tokenFile(b, "load"))
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() }()
	url := serverURL(b, stderr)
	off, _ := mcpCommand(b, bin, "--http", "127.0.0.1:0", "--token-file", tokenFile(b, "load"), "--sandbox", "off")
	offStderr, _ := off.StderrPipe()
	if err := off.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { off.Process.Signal(syscall.SIGTERM); off.Wait() }()
	offURL := serverURL(b, offStderr)

	// viaShellgate times the burst on 10 new sessions; warm, each session has
	// run one command first (its sandbox is up, as an agent's is after its
	// first call), so only the burst itself is timed.
	// serverCPU[warm] is the server's own CPU time (its helpers' and
	// commands' not counted) in each burst, what its code costs per command.
	serverCPU := map[bool][]time.Duration{}
	viaShellgate := func(warm bool) func() time.Duration {
		return func() time.Duration {
			cpu := processCPU(cmd.Process.Pid)
			d := burst(b, url, sessions, perSession, warm)
			serverCPU[warm] = append(serverCPU[warm], processCPU(cmd.Process.Pid)-cpu)
			return d
		}
	}
	viaXargs := func(shell ...string) func() time.Duration {
		return func() time.Duration {
			start := time.Now()
			x := exec.Command(xargs, append(append([]string{"-P100", "-n1"}, shell...), "-c", "sleep 1; echo ok")...)
			x.Stdin = strings.NewReader(strings.Repeat("x\n", sessions*perSession))
			out, err := x.Output()
			if err != nil || strings.Count(string(out), "ok\n") != sessions*perSession {
				b.Fatalf("xargs: %v, %d ok", err, strings.Count(string(out), "ok\n"))
			}
			return time.Since(start)
		}
	}
	goExec := func() time.Duration {
		start := time.Now()
		var wg sync.WaitGroup
		errs := make(chan error, sessions*perSession)
		for range sessions * perSession {
			wg.Go(func() {
				out, err := exec.Command("bash", "--noprofile", "--norc", "-c", "sleep 1; echo ok").Output()
				if err != nil || string(out) != "ok\n" {
					errs <- fmt.Errorf("%v: %q", err, out)
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	// shellgate runs bash, which starts slower than sh (often dash): the second
	// baseline runs the same bash.
	medians := interleave(b, "shellgate", viaShellgate(false), "xargs", viaXargs("sh"), "xargs-bash", viaXargs("bash", "--noprofile", "--norc"),
		"shellgate-warm", viaShellgate(true),
		"shellgate-off", func() time.Duration { return burst(b, offURL, sessions, perSession, false) },
		"go-exec", goExec)
	b.ReportMetric(float64(medians[0])/float64(medians[1]), "ratio")
	b.ReportMetric(float64(medians[0])/float64(medians[2]), "ratio-bash")
	b.ReportMetric(float64(medians[3])/float64(medians[2]), "ratio-bash-warm")
	b.ReportMetric(float64(medians[4])/float64(medians[2]), "ratio-bash-off")
	b.ReportMetric(float64(medians[5])/float64(medians[2]), "ratio-bash-go-exec")
	b.ReportMetric(float64(quantile(serverCPU[false], 0.5))/1e6, "server-cpu-ms")
	b.ReportMetric(float64(quantile(serverCPU[true], 0.5))/1e6, "server-cpu-warm-ms")
	if kb := peakRSS(cmd.Process.Pid); kb > 0 {
		b.ReportMetric(float64(kb)/1024, "server-peak-RSS-MiB")
	}
	b.ReportMetric(0, "ns/op")
}

// burst runs sessions×perSession concurrent `sleep 1; echo ok` calls on new
// sessions of the server at url and returns how long they took together;
// with warm, each session's first call (`true`) is made before the clock starts.
func burst(b *testing.B, url string, sessions, perSession int, warm bool) time.Duration {
	ctx := context.Background()
	var clients []*mcp.ClientSession
	for range sessions {
		tr := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer("load")}, MaxRetries: -1}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "load", Version: "1"}, nil).Connect(ctx, tr, nil)
		if err != nil {
			b.Fatal(err)
		}
		if warm {
			if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_shell_command", Arguments: map[string]any{"command": "true"}}); err != nil || res.IsError {
				b.Fatalf("warm-up call: %v %+v", err, res)
			}
		}
		clients = append(clients, cs)
	}
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, sessions*perSession)
	for _, cs := range clients {
		for range perSession {
			wg.Go(func() {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_shell_command", Arguments: map[string]any{"command": "sleep 1; echo ok"}})
				switch {
				case err != nil:
					errs <- err
				case res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "ok"):
					errs <- fmt.Errorf("%+v", res.Content[0])
				}
			})
		}
	}
	wg.Wait()
	took := time.Since(start)
	close(errs)
	for err := range errs {
		b.Fatalf("a call failed: %v", err)
	}
	for _, cs := range clients {
		cs.Close()
	}
	return took
}

// serverURL reads the server's address from its stderr, then drains the rest.
func serverURL(b testing.TB, stderr io.Reader) string {
	r := bufio.NewReader(stderr)
	re := regexp.MustCompile(`serving streamable HTTP at (http://\S+/)`)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			b.Fatalf("no serving line: %v", err)
		}
		if m := re.FindStringSubmatch(line); m != nil {
			go io.Copy(io.Discard, r)
			return m[1]
		}
	}
}

type bearer string

func (t bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(t))
	return http.DefaultTransport.RoundTrip(r)
}

// peakRSS is a process's peak resident set (VmHWM) in KiB, or 0 where /proc lacks it.
// processCPU is the user and system time of process pid so far, from
// /proc/PID/stat (in clock ticks, taken as 100 a second); 0 if unknown.
func processCPU(pid int) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.Atoi(f[11])
	stime, _ := strconv.Atoi(f[12])
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

func peakRSS(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return n
		}
	}
	return 0
}
