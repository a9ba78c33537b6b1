package mcpserver

import (
	"cmp"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/envelope"
	"github.com/shellgate/shellgate/internal/benchfloor"
	"github.com/shellgate/shellgate/internal/sandbox"
)

// BenchmarkCallEchoHi is one in-process tools/call of `echo hi`: the SDK's JSON-RPC
// over an in-memory pipe, this package, and the Gate running bash.
func BenchmarkCallEchoHi(b *testing.B) {
	cs := benchClient(b, shellgate.Config{Root: b.TempDir()})
	params := &mcp.CallToolParams{Name: DefaultToolName, Arguments: map[string]any{"command": "echo hi"}}
	for b.Loop() {
		if res, err := cs.CallTool(context.Background(), params); err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}

// BenchmarkCallEchoHiSandbox is tools/call of `echo hi` through a server with
// the default sandbox and through one with --sandbox off, in turn (the order
// too), each call after an idle gap, as an agent calls: back to back and
// after each gap of SHELLGATE_BENCH_GAPS (default "10ms,200ms"; add 2s with
// a smaller -benchtime). Reported: the medians, the median ratio of the
// pairs (target ≤ 1.2; it was ≤ 1.5 back to back) and the sandboxed call's
// p95/median (target ≤ 2). Beside them, after the same gaps, the kernel's
// floor (package benchfloor): `true` started in a cgroup made for it, as
// each sandboxed command is, against a plain `true`: what the sandbox's
// cgroups cost whatever shellgate does; and the same `true` started by a
// sleeping peer process asked over a socket (benchfloor.Peer), as the
// session's helper is asked, against a plain one: what any sandbox whose
// commands start in a second process pays; and that peer living in user,
// mount and PID namespaces of its own (nspeer), as the helper does.
// SHELLGATE_BENCH_ROOT=git makes each server's root a git repository (one
// commit), as most users' roots are: the sandbox's guard looks at .git
// around each call.
func BenchmarkCallEchoHiSandbox(b *testing.B) {
	clients := map[string]*mcp.ClientSession{}
	for _, mode := range []string{"auto", "off"} {
		root := b.TempDir()
		if os.Getenv("SHELLGATE_BENCH_ROOT") == "git" {
			gitRepo(b, root)
		}
		clients[mode] = benchClient(b, shellgate.Config{Root: root, SpillDir: b.TempDir(), Sandbox: shellgate.SandboxConfig{Mode: sandbox.Mode(mode)}})
	}
	params := &mcp.CallToolParams{Name: DefaultToolName, Arguments: map[string]any{"command": "echo hi"}}
	call := func(mode string) time.Duration {
		t0 := time.Now()
		if res, err := clients[mode].CallTool(context.Background(), params); err != nil || res.IsError {
			b.Fatal(err, res)
		}
		return time.Since(t0)
	}
	call("auto") // the sandbox session starts with the first command
	spawn := func(s benchfloor.Spawn) time.Duration {
		d, err := s.Time()
		if err != nil {
			b.Fatal(err)
		}
		return d
	}
	_, err := benchfloor.Spawn{InCgroup: true}.Time()
	floor := err == nil
	var peer, nsPeer *benchfloor.Peer
	if floor {
		if peer, err = benchfloor.StartPeer(false); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { peer.Close() })
		if nsPeer, err = benchfloor.StartPeer(true); err != nil {
			b.Logf("no peer in namespaces here: %v", err)
		} else {
			b.Cleanup(func() { nsPeer.Close() })
		}
	}
	gaps := []time.Duration{0}
	for _, g := range strings.Split(cmp.Or(os.Getenv("SHELLGATE_BENCH_GAPS"), "10ms,200ms"), ",") {
		d, err := time.ParseDuration(g)
		if err != nil {
			b.Fatalf("SHELLGATE_BENCH_GAPS: %v", err)
		}
		gaps = append(gaps, d)
	}
	for _, gap := range gaps {
		b.Run("gap-"+gap.String(), func(b *testing.B) {
			var ratios, diffs, on, off, floorRatios, floorDiffs, peerRatios, peerDiffs, nsRatios, nsDiffs []float64
			ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
			after := func(f func() time.Duration) time.Duration { time.Sleep(gap); return f() }
			i := 0
			for b.Loop() {
				var a, o time.Duration
				if i++; i%2 == 0 {
					a, o = after(func() time.Duration { return call("auto") }), after(func() time.Duration { return call("off") })
				} else {
					o, a = after(func() time.Duration { return call("off") }), after(func() time.Duration { return call("auto") })
				}
				ratios, diffs = append(ratios, float64(a)/float64(o)), append(diffs, ms(a-o))
				on, off = append(on, ms(a)), append(off, ms(o))
				if floor {
					c, p := after(func() time.Duration { return spawn(benchfloor.Spawn{InCgroup: true}) }), after(func() time.Duration { return spawn(benchfloor.Spawn{}) })
					floorRatios, floorDiffs = append(floorRatios, float64(c)/float64(p)), append(floorDiffs, ms(c-p))
					ask := func(peer *benchfloor.Peer) time.Duration {
						d, err := peer.Time()
						if err != nil {
							b.Fatal(err)
						}
						return d
					}
					r := after(func() time.Duration { return ask(peer) })
					p = after(func() time.Duration { return spawn(benchfloor.Spawn{}) })
					peerRatios, peerDiffs = append(peerRatios, float64(r)/float64(p)), append(peerDiffs, ms(r-p))
					if nsPeer != nil {
						r = after(func() time.Duration { return ask(nsPeer) })
						p = after(func() time.Duration { return spawn(benchfloor.Spawn{}) })
						nsRatios, nsDiffs = append(nsRatios, float64(r)/float64(p)), append(nsDiffs, ms(r-p))
					}
				}
			}
			q := func(xs []float64, p float64) float64 { slices.Sort(xs); return xs[int(p*float64(len(xs)-1))] }
			b.ReportMetric(q(on, 0.5), "on-ms")
			b.ReportMetric(q(off, 0.5), "off-ms")
			b.ReportMetric(q(ratios, 0.5), "on/off")
			b.ReportMetric(q(diffs, 0.5), "on-extra-ms")
			b.ReportMetric(q(on, 0.95)/q(on, 0.5), "on-p95/median")
			if floor {
				b.ReportMetric(q(floorDiffs, 0.5), "floor-cgroup-extra-ms")
				b.ReportMetric(q(floorRatios, 0.5), "floor-cgroup/plain")
				b.ReportMetric(q(peerDiffs, 0.5), "floor-peer-extra-ms")
				b.ReportMetric(q(peerRatios, 0.5), "floor-peer/plain")
			}
			if nsPeer != nil {
				b.ReportMetric(q(nsDiffs, 0.5), "floor-nspeer-extra-ms")
				b.ReportMetric(q(nsRatios, 0.5), "floor-nspeer/plain")
			}
			b.ReportMetric(0, "ns/op")
		})
	}
}

// benchClient serves a Gate of cfg in-process and returns a connected client;
// all of it is closed when the benchmark ends.
// gitRepo makes dir a git repository of one commit.
func gitRepo(b *testing.B, dir string) {
	b.Helper()
	if err := os.WriteFile(filepath.Join(dir, "README"), []byte("hi\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "README"}, {"-c", "user.name=b", "-c", "user.email=b@example.com", "commit", "-qm", "first"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Skipf("git %v: %v %s", args, err, out)
		}
	}
}

func benchClient(b *testing.B, cfg shellgate.Config) *mcp.ClientSession {
	gate, err := shellgate.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { gate.Close() })
	srv, err := New(gate, Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(srv.Close)
	ct, st := mcp.NewInMemoryTransports()
	go srv.Serve(context.Background(), st)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}

// BenchmarkOwnOverhead is what this package adds to a call: parsing the arguments
// and building the result (with its size check).
func BenchmarkOwnOverhead(b *testing.B) {
	raw := []byte(`{"command":"echo hi","directory":".","timeout_ms":5000,"description":"greet"}`)
	zero := 0
	env := envelope.Envelope{Data: envelope.Data{Command: "echo hi", Stdout: "hi\n", ExitCode: &zero},
		Stats: envelope.Stats{StdoutBytes: 3}, Context: envelope.Context{ParamsInput: map[string]any{"command": "echo hi"}}}
	env.Settle()
	b.ReportAllocs()
	for b.Loop() {
		if _, bad := parseArguments(raw, 600000, 1<<20); bad != nil {
			b.Fatal(bad.Text)
		}
		if _, err := toolResult(env, MaxMessage, true, 0, envelope.Known{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMCPLayer is what serving a call over MCP adds to running it: each
// iteration runs `echo hi` through the in-process MCP client and through the
// same kind of Session directly, back to back (which goes first alternates);
// the median of the difference is the MCP layer's cost (JSON-RPC both ways,
// arguments, result). The p95 of that difference is mostly the command's own
// jitter; the spread the layer adds shows as the MCP calls' p95/median beside
// the direct calls'.
func BenchmarkMCPLayer(b *testing.B) {
	cs := benchClient(b, shellgate.Config{Root: b.TempDir(), SpillDir: b.TempDir()})
	gate, err := shellgate.New(shellgate.Config{Root: b.TempDir(), SpillDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer gate.Close()
	sess := gate.NewSession(shellgate.SessionConfig{})
	defer sess.Close()
	ctx := context.Background()
	params := &mcp.CallToolParams{Name: DefaultToolName, Arguments: map[string]any{"command": "echo hi"}}
	viaMCP := func() float64 {
		t0 := time.Now()
		if res, err := cs.CallTool(ctx, params); err != nil || res.IsError {
			b.Fatal(err, res)
		}
		return float64(time.Since(t0)) / 1e6
	}
	direct := func() float64 {
		t0 := time.Now()
		if env := sess.Run(ctx, shellgate.Request{Command: "echo hi"}); env.Status != envelope.Success {
			b.Fatal(env.Text)
		}
		return float64(time.Since(t0)) / 1e6
	}
	viaMCP() // both sandboxes start
	direct()
	var diffs, mcpMS, directMS []float64
	odd := false
	for b.Loop() {
		var m, d float64
		if odd {
			d, m = direct(), viaMCP()
		} else {
			m, d = viaMCP(), direct()
		}
		odd = !odd
		diffs, mcpMS, directMS = append(diffs, m-d), append(mcpMS, m), append(directMS, d)
	}
	q := func(xs []float64, p float64) float64 { return xs[int(float64(len(xs)-1)*p)] }
	for _, xs := range [][]float64{diffs, mcpMS, directMS} {
		slices.Sort(xs)
	}
	b.ReportMetric(q(diffs, 0.5), "mcp-layer-ms")
	b.ReportMetric(q(diffs, 0.95), "mcp-layer-p95-ms")
	b.ReportMetric(q(directMS, 0.5), "direct-ms")
	b.ReportMetric(q(mcpMS, 0.95)/q(mcpMS, 0.5), "mcp-p95/median")
	b.ReportMetric(q(directMS, 0.95)/q(directMS, 0.5), "direct-p95/median")
}

// BenchmarkSDKRoundTrip is the SDK alone, the floor under BenchmarkMCPLayer: a
// tools/call over the same in-memory transport to a bare tool answering "hi".
func BenchmarkSDKRoundTrip(b *testing.B) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "floor"}, nil)
	srv.AddTool(&mcp.Tool{Name: "t", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}}, nil
	})
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(context.Background(), st, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	params := &mcp.CallToolParams{Name: "t", Arguments: map[string]any{"command": "echo hi"}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := cs.CallTool(context.Background(), params); err != nil {
			b.Fatal(err)
		}
	}
}
