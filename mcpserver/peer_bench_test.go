//go:build linux

package mcpserver

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkCodexPeerEchoHi is issue 22's comparison with Codex's own sandboxed
// MCP shell server (@openai/codex-shell-tool-mcp, installed by npm ci in e2e
// with the Codex release of the same version, whose codex-linux-sandbox it
// needs on Linux): `echo hi` through shellgate's binary with its default
// sandbox (on), with --sandbox off (off) and through Codex's server with
// workspace-write, the root its only writable place and the network off
// (codex), one call each per round in a rotating order, back to back and
// after each gap of SHELLGATE_BENCH_GAPS (default "10ms,200ms"). All three are
// real processes behind the same client, the Go SDK's over stdio, so the
// client's share cancels. Codex's sandbox on Linux is codex-linux-sandbox
// started for each command: no_new_privs, a seccomp filter (the network) and
// Landlock (writes only in the root), then exec of its patched bash, in the
// host's namespaces and cgroup. Before timing, each sandbox is shown to be on: a
// write outside the root whose path the command reads at run time (so no
// policy can refuse it beforehand) fails under both, while the same write by a
// plain bash succeeds. Reported: the medians, the medians of each round's
// on/codex and on/off (target: on/codex ≤ 1.0, on/off ≤ 1.2) and each one's
// p95/median. The tools' and `echo hi`'s sizes as a model reads them are
// logged (-v). SHELLGATE_BENCH_CODEX_LOGIN=1 calls Codex's tool as a model
// does by default, with a login shell (`bash -lc`, which reads the profile);
// by default it is told login=false (`bash -c`), its cheapest call.
// $SHELLGATE_TEST_BIN names a shellgate binary to use instead of building one.
//
//	SHELLGATE_BENCH_GAPS=10ms,200ms,2s go test -run '^$' -bench CodexPeerEchoHi -benchtime 12x ./mcpserver
func BenchmarkCodexPeerEchoHi(b *testing.B) {
	codex := findCodexShellMCP(b)
	bin := shellgateBinary(b)
	// The client Codex's server is made for; shellgate answers it as it answers
	// Codex (text content alone), so both send a model-sized result.
	client := &mcp.Implementation{Name: "codex-mcp-client", Version: "0.97.0"}
	servers := map[string]*peerServer{
		"on":    startShellgate(b, client, bin),
		"off":   startShellgate(b, client, bin, "--sandbox", "off"),
		"codex": codex.start(b, client),
	}
	for _, name := range []string{"on", "codex"} {
		servers[name].provesSandbox(b, name)
	}
	logModelSizes(b, servers)
	for range 5 { // both sandboxes set up, the page cache and the CPUs' caches warm
		for _, s := range servers {
			s.echoHi(b)
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
	// Every order in turn, so each server follows each other as often.
	orders := [][]string{{"on", "off", "codex"}, {"codex", "off", "on"}, {"off", "codex", "on"}, {"on", "codex", "off"}, {"codex", "on", "off"}, {"off", "on", "codex"}}
	for _, gap := range gaps {
		b.Run("gap-"+gap.String(), func(b *testing.B) {
			ms := map[string][]float64{}
			var onCodex, onOff []float64
			round := 0
			for b.Loop() {
				took := map[string]time.Duration{}
				for _, name := range orders[round%len(orders)] {
					time.Sleep(gap)
					took[name] = servers[name].echoHi(b)
					ms[name] = append(ms[name], float64(took[name])/1e6)
				}
				round++
				onCodex = append(onCodex, float64(took["on"])/float64(took["codex"]))
				onOff = append(onOff, float64(took["on"])/float64(took["off"]))
			}
			q := func(xs []float64, p float64) float64 {
				xs = slices.Clone(xs)
				slices.Sort(xs)
				return xs[int(p*float64(len(xs)-1))]
			}
			for _, name := range []string{"on", "off", "codex"} {
				b.ReportMetric(q(ms[name], 0.5), name+"-ms")
				b.ReportMetric(q(ms[name], 0.95)/q(ms[name], 0.5), name+"-p95/median")
			}
			b.ReportMetric(q(onCodex, 0.5), "on/codex")
			b.ReportMetric(q(onOff, 0.5), "on/off")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// peerServer is one MCP server over stdio with what an `echo hi` call to it is.
type peerServer struct {
	cs    *mcp.ClientSession
	root  string
	tool  string
	args  func(command string) map[string]any
	check func(res *mcp.CallToolResult) (output string, err error) // the command's output
}

func (s *peerServer) call(b *testing.B, command string) string {
	b.Helper()
	res, err := s.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: s.tool, Arguments: s.args(command)})
	if err != nil {
		b.Fatalf("%s: %v", command, err)
	}
	out, err := s.check(res)
	if err != nil {
		b.Fatalf("%s: %v", command, err)
	}
	return out
}

func (s *peerServer) echoHi(b *testing.B) time.Duration {
	t0 := time.Now()
	if out := s.call(b, "echo hi"); out != "hi\n" {
		b.Fatalf("echo hi printed %q", out)
	}
	return time.Since(t0)
}

// sandboxProbe writes to the path in the root's file dest: the path is known
// only at run time, so a policy that reads the command cannot refuse it and
// what stops it, if anything does, is the sandbox.
const sandboxProbe = `read -r p < dest; echo x > "$p"; echo "write $?"`

// provesSandbox fails the benchmark unless the server's sandbox stops a write
// outside its root (in /var/tmp, not a temporary directory any sandbox keeps
// writable) that a plain bash makes, while a write inside the root succeeds.
func (s *peerServer) provesSandbox(b *testing.B, name string) {
	b.Helper()
	victim, err := os.MkdirTemp("/var/tmp", "shellgate-bench-victim-")
	if err != nil {
		b.Skipf("no /var/tmp for the sandbox's probe: %v", err)
	}
	b.Cleanup(func() { os.RemoveAll(victim) })
	target := filepath.Join(victim, name)
	if err := os.WriteFile(filepath.Join(s.root, "dest"), []byte(target+"\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	plain := exec.Command("bash", "-c", sandboxProbe)
	plain.Dir = s.root
	if out, err := plain.CombinedOutput(); err != nil || string(out) != "write 0\n" {
		b.Fatalf("the probe does not write outside the root even without a sandbox: %q %v", out, err)
	}
	if err := os.Remove(target); err != nil {
		b.Fatalf("the probe wrote nothing without a sandbox: %v", err)
	}
	out := s.call(b, sandboxProbe)
	if _, err := os.Stat(target); !errors.Is(err, os.ErrNotExist) || !strings.Contains(out, "write 1") {
		b.Fatalf("%s: the sandbox let a write outside the root through (%q, stat: %v)", name, out, err)
	}
	if out := s.call(b, `echo y > inside; echo "write $?"`); out != "write 0\n" {
		b.Fatalf("%s: a write inside the root failed: %q", name, out)
	}
	if got, err := os.ReadFile(filepath.Join(s.root, "inside")); err != nil || string(got) != "y\n" {
		b.Fatalf("%s: the write inside the root left %q, %v", name, got, err)
	}
}

// shellgateBinary is $SHELLGATE_TEST_BIN or shellgate built as README installs
// it (CGO_ENABLED=0).
func shellgateBinary(b *testing.B) string {
	if bin := os.Getenv("SHELLGATE_TEST_BIN"); bin != "" {
		return bin
	}
	bin := filepath.Join(b.TempDir(), "shellgate")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/shellgate/shellgate/cmd/shellgate")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// peerEnv is the environment of a server under the benchmark: a home, a
// TMPDIR and a Codex home of its own, so no user configuration or rule
// applies; the audit log and checkpoints at their defaults, as a user runs it.
func peerEnv(b *testing.B) []string {
	home := b.TempDir()
	if err := os.Mkdir(filepath.Join(home, ".codex"), 0o755); err != nil {
		b.Fatal(err)
	}
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "SHELLGATE_AUDIT_LOG=") || strings.HasPrefix(kv, "SHELLGATE_CHECKPOINTS=")
	})
	return append(env, "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "CODEX_HOME="+filepath.Join(home, ".codex"),
		"TMPDIR="+b.TempDir(), "BASH_ALLOW_NETWORK=")
}

func connectPeer(b *testing.B, client *mcp.Implementation, cmd *exec.Cmd) (*mcp.ClientSession, *rawConn) {
	b.Helper()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	t := &rawTransport{Transport: &mcp.CommandTransport{Command: cmd}}
	// The handshake Codex's server knows (it closes the connection on the
	// SDK's newer server/discover), for all three alike.
	cs, err := mcp.NewClient(client, nil).Connect(context.Background(), t, &mcp.ClientSessionOptions{ProtocolVersion: "2025-06-18"})
	if err != nil {
		b.Fatalf("%s: %v\n%s", cmd.Args, err, stderr.String())
	}
	b.Cleanup(func() { cs.Close() })
	return cs, t.conn
}

func startShellgate(b *testing.B, client *mcp.Implementation, bin string, flags ...string) *peerServer {
	root := b.TempDir()
	cmd := exec.Command(bin, append([]string{"mcp", "--root", root}, flags...)...)
	cmd.Env = peerEnv(b)
	cs, _ := connectPeer(b, client, cmd)
	return &peerServer{
		cs:   cs,
		root: root,
		tool: DefaultToolName,
		args: func(command string) map[string]any { return map[string]any{"command": command} },
		check: func(res *mcp.CallToolResult) (string, error) {
			text := res.Content[0].(*mcp.TextContent).Text
			if res.IsError {
				return "", errors.New(text)
			}
			// The text puts the output last, after its header line.
			_, out, ok := strings.Cut(text, " ---\n")
			if !ok {
				return "", fmt.Errorf("no output in %q", text)
			}
			return out + "\n", nil
		},
	}
}

// codexShellMCP is where e2e's npm ci put Codex's MCP shell server and the
// Codex binary whose codex-linux-sandbox it runs each command under.
type codexShellMCP struct{ node, launcher, sandboxExe string }

func findCodexShellMCP(b *testing.B) codexShellMCP {
	modules, err := filepath.Abs(filepath.Join("..", "e2e", "node_modules"))
	if err != nil {
		b.Fatal(err)
	}
	triple := map[string]string{"amd64": "x86_64-unknown-linux-musl", "arm64": "aarch64-unknown-linux-musl"}[runtime.GOARCH]
	c := codexShellMCP{
		launcher:   filepath.Join(modules, "@openai", "codex-shell-tool-mcp", "bin", "mcp-server.js"),
		sandboxExe: filepath.Join(modules, "codex-for-shell-tool-mcp", "vendor", triple, "codex", "codex"),
	}
	for _, p := range []string{c.launcher, c.sandboxExe} {
		if _, err := os.Stat(p); err != nil {
			b.Skipf("Codex's MCP shell server is not installed here (%v): run `npm ci` in e2e", err)
		}
	}
	if c.node, err = exec.LookPath("node"); err != nil {
		b.Skip("no node to start Codex's MCP shell server")
	}
	return c
}

// start starts Codex's server and sets its sandbox as the Codex harness does
// (the codex/sandbox-state/update request its README describes): workspace-
// write with the root writable, and neither /tmp nor $TMPDIR, and no network,
// as close to shellgate's default as its policy goes.
func (c codexShellMCP) start(b *testing.B, client *mcp.Implementation) *peerServer {
	root := b.TempDir()
	cmd := exec.Command(c.node, c.launcher)
	cmd.Env = peerEnv(b)
	cs, conn := connectPeer(b, client, cmd)
	state := map[string]any{
		"sandboxPolicy": map[string]any{
			"type": "workspace-write", "writable_roots": []string{root}, "network_access": false,
			"exclude_tmpdir_env_var": true, "exclude_slash_tmp": true,
		},
		"codexLinuxSandboxExe": c.sandboxExe,
		"sandboxCwd":           root,
		"useLinuxSandboxBwrap": false, // this release's codex-linux-sandbox has no bubblewrap built in
	}
	if ack, err := conn.request("codex/sandbox-state/update", state); err != nil || string(ack) != "{}" {
		b.Fatalf("codex/sandbox-state/update: %s %v", ack, err)
	}
	login := os.Getenv("SHELLGATE_BENCH_CODEX_LOGIN") == "1"
	return &peerServer{
		cs:   cs,
		root: root,
		tool: "shell",
		args: func(command string) map[string]any {
			a := map[string]any{"command": command, "workdir": root}
			if !login {
				a["login"] = false
			}
			return a
		},
		check: func(res *mcp.CallToolResult) (string, error) {
			text := res.Content[0].(*mcp.TextContent).Text
			var r struct {
				ExitCode int    `json:"exit_code"`
				Output   string `json:"output"`
			}
			if err := json.Unmarshal([]byte(text), &r); err != nil || res.IsError {
				return "", fmt.Errorf("%q: %v", text, err)
			}
			return r.Output, nil
		},
	}
}

// rawTransport lets a test send a request outside the MCP schema, which the
// SDK's client session has no call for, on the session's own connection: its
// answer is taken out before the session reads it.
type rawTransport struct {
	mcp.Transport
	conn *rawConn
}

func (t *rawTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	t.conn = &rawConn{Connection: c, answers: map[jsonrpc.ID]chan *jsonrpc.Response{}}
	return t.conn, nil
}

type rawConn struct {
	mcp.Connection
	mu      sync.Mutex
	answers map[jsonrpc.ID]chan *jsonrpc.Response
}

func (c *rawConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		if r, ok := msg.(*jsonrpc.Response); ok && err == nil {
			c.mu.Lock()
			ch := c.answers[r.ID]
			delete(c.answers, r.ID)
			c.mu.Unlock()
			if ch != nil {
				ch <- r
				continue
			}
		}
		return msg, err
	}
}

// request sends method with params and waits for its answer.
func (c *rawConn) request(method string, params any) (json.RawMessage, error) {
	id, err := jsonrpc.MakeID("raw-" + method)
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	ch := make(chan *jsonrpc.Response, 1)
	c.mu.Lock()
	c.answers[id] = ch
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.Connection.Write(ctx, &jsonrpc.Request{ID: id, Method: method, Params: raw}); err != nil {
		return nil, err
	}
	select {
	case r := <-ch:
		return r.Result, r.Error
	case <-ctx.Done():
		return nil, fmt.Errorf("no answer to %s: %w", method, ctx.Err())
	}
}

// logModelSizes logs what a model reads of each server: the tool's
// description and input schema from tools/list, and `echo hi`'s result.
func logModelSizes(b *testing.B, servers map[string]*peerServer) {
	for _, name := range []string{"on", "codex"} {
		s := servers[name]
		b.Logf("%s: instructions %d chars", name, utf8.RuneCountInString(s.cs.InitializeResult().Instructions))
		tools, err := s.cs.ListTools(context.Background(), nil)
		if err != nil {
			b.Fatal(err)
		}
		for _, t := range tools.Tools {
			in, _ := json.Marshal(t.InputSchema)
			out := []byte{} // none
			if t.OutputSchema != nil {
				out, _ = json.Marshal(t.OutputSchema)
			}
			b.Logf("%s: tool %s: description %d chars, inputSchema %d, outputSchema %d", name, t.Name,
				utf8.RuneCountInString(t.Description), utf8.RuneCount(in), utf8.RuneCount(out))
		}
		res, err := s.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: s.tool, Arguments: s.args("echo hi")})
		if err != nil {
			b.Fatal(err)
		}
		structured := []byte{} // none
		if res.StructuredContent != nil {
			structured, _ = json.Marshal(res.StructuredContent)
		}
		b.Logf("%s: echo hi: text content %d chars %q, structuredContent %d", name,
			utf8.RuneCountInString(res.Content[0].(*mcp.TextContent).Text), res.Content[0].(*mcp.TextContent).Text, utf8.RuneCount(structured))
	}
}
