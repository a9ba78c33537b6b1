package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/shellgate/shellgate"
)

func TestMCPUsage(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	t.Setenv("SHELLGATE_MCP_TOKEN", "")
	root := t.TempDir()
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"help", []string{"-h"}, 0, "--http"},
		{"unknown flag", []string{"--nope"}, exitUsage, "unknown flag --nope"},
		{"stray argument", []string{"--root", root, "serve"}, exitUsage, "unexpected arguments"},
		{"non-loopback without token", []string{"--root", root, "--http", "0.0.0.0:0"}, exitUsage, "without an explicit token"},
		{"all interfaces without token", []string{"--root", root, "--http", ":0"}, exitUsage, "without an explicit token"},
		// An address without a port is bad usage, said as such, with no
		// token printed for a server that cannot listen (it said "not a
		// loopback address" for "nonsense", and exited 125 after printing a
		// token for "localhost").
		{"address without a port", []string{"--root", root, "--http", "localhost"}, exitUsage, `--http "localhost": want HOST:PORT, such as 127.0.0.1:8765 (missing port in address)`},
		{"not an address", []string{"--root", root, "--http", "nonsense"}, exitUsage, `--http "nonsense": want HOST:PORT`},
		{"port not a number", []string{"--root", root, "--http", "127.0.0.1:http"}, exitUsage, `--http "127.0.0.1:http": want HOST:PORT, such as 127.0.0.1:8765 (port "http" is not a number from 0 to 65535)`},
		{"bad tool name", []string{"--root", root, "--tool-name", "run shell"}, exitUsage, `--tool-name: tool name "run shell": ' ' is not allowed`},
		{"missing root", []string{"--root", filepath.Join(root, "nope")}, exitShellgate, "nope"},
		{"bad origin", []string{"--root", root, "--http", "127.0.0.1:0", "--token-file", tokenFile(t, "t"), "--allow-origin", "example.com"}, exitUsage, `--allow-origin: allowed origin "example.com"`},
		{"empty token file", []string{"--root", root, "--http", "0.0.0.0:0", "--token-file", tokenFile(t, " ")}, exitUsage, "is empty"},
		{"missing token file", []string{"--root", root, "--http", "0.0.0.0:0", "--token-file", filepath.Join(root, "none")}, exitUsage, "--token-file"},
		// A token on the command line is visible in ps: it still works, with a warning.
		{"token on the command line", []string{"--root", filepath.Join(root, "nope"), "--http", "127.0.0.1:0", "--token", "t"}, exitShellgate, "shows the token to every process"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := cmdMCP(tc.args, &out, &errb)
			if code != tc.code || !strings.Contains(errb.String()+out.String(), tc.want) ||
				code == exitUsage && strings.Contains(errb.String(), "bearer token") {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, errb.String(), tc.code, tc.want)
			}
			if out.Len() > 0 && tc.code != 0 {
				t.Errorf("wrote to stdout: %q", out.String())
			}
		})
	}
}

// buildBinary builds shellgate into a temporary directory as README says to
// install it (CGO_ENABLED=0); $SHELLGATE_TEST_BIN names a binary to use
// instead (another build to compare, or one a profiler must still find when
// the run ends).
func buildBinary(tb testing.TB) string {
	tb.Helper()
	if bin := os.Getenv("SHELLGATE_TEST_BIN"); bin != "" {
		return bin
	}
	bin := filepath.Join(visibleTempDir(tb), "shellgate")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	goBuild(tb, false, bin, ".")
	return bin
}

// goBuild builds args (packages and flags) into out: with cgo off, as the
// documented build is made, or as `go build` makes it where a C compiler
// is found (cgo on: shellgate then links the C library dynamically).
func goBuild(tb testing.TB, cgo bool, out string, args ...string) {
	tb.Helper()
	cmd := exec.Command("go", append([]string{"build", "-o", out}, args...)...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if cgo {
		cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	}
	if b, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("%s go build %q: %v\n%s", cmd.Env[len(cmd.Env)-1], args, err, b)
	}
}

// tokenFile writes an HTTP bearer token to a file, as --token-file reads it.
func tokenFile(tb testing.TB, token string) string {
	tb.Helper()
	p := filepath.Join(tb.TempDir(), "token")
	if err := os.WriteFile(p, []byte(token+"\n"), 0o600); err != nil {
		tb.Fatal(err)
	}
	return p
}

// visibleTempDir is a temporary directory outside /tmp, which the sandbox
// replaces with a session's own: a binary there can be run through the
// sandbox, as one in PATH would be.
func visibleTempDir(tb testing.TB) string {
	tb.Helper()
	dir, err := os.MkdirTemp("/var/tmp", "shellgate-test-")
	if err != nil {
		return tb.TempDir()
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// mcpCommand is `shellgate mcp` in a fresh root, with no user configuration.
func mcpCommand(tb testing.TB, bin string, args ...string) (*exec.Cmd, string) {
	root := tb.TempDir()
	home := tb.TempDir()
	cmd := exec.Command(bin, append([]string{"mcp", "--root", root}, args...)...)
	// A private TMPDIR: the default spill dir and the commands' temp dirs go there.
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "BASH_ALLOW_NETWORK=", "TMPDIR="+tb.TempDir())
	return cmd, root
}

// The real binary over stdio, with the Go SDK's client.
func TestMCPBinaryStdio(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t)
	cmd, _ := mcpCommand(t, bin, "--tool-name", "Bash")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "Bash", Arguments: map[string]any{"command": "echo hi"}})
	if err != nil {
		t.Fatal(err)
	}
	env, _ := res.StructuredContent.(map[string]any)
	if env["status"] != "success" || env["data"].(map[string]any)["stdout"] != "hi\n" {
		t.Errorf("echo hi: %v", res.StructuredContent)
	}
	if err := cs.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if err := cmd.Wait(); err != nil && !strings.Contains(err.Error(), "Wait was already called") {
		t.Errorf("exit: %v\n%s", err, stderr.String())
	}
}

// The help says what --structured-content's default is: the client's shape,
// not "(default true)".
func TestMCPStructuredContentHelp(t *testing.T) {
	var out, errb bytes.Buffer
	if code := dispatch([]string{"mcp", "-h"}, &out, &errb); code != 0 {
		t.Skipf("mcp -h: exit %d %s", code, errb.String()) // built without the MCP server
	}
	_, help, _ := strings.Cut(out.String(), "  -structured-content")
	help, _, _ = strings.Cut(help, "\n  -")
	if !strings.Contains(help, "default: per client") || strings.Contains(help, "(default true)") || strings.Contains(help, "(default false)") {
		t.Errorf("-structured-content%s", help)
	}
	if code := dispatch([]string{"mcp", "--structured-content=maybe"}, &out, &errb); code != exitUsage {
		t.Errorf("--structured-content=maybe: exit %d", code)
	}
}

// --structured-content is an override for every client; without it the shape
// is the connecting client's (text only for Claude Code).
func TestMCPStructuredContentFlag(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t)
	for _, tc := range []struct {
		client     string
		flags      []string
		structured bool
	}{
		{"claude-code", nil, false},
		{"claude-code", []string{"--structured-content=true"}, true},
		{"claude-code", []string{"--structured-content"}, true},
		{"opencode", nil, true},
		{"opencode", []string{"--structured-content=false"}, false},
	} {
		t.Run(tc.client+strings.Join(tc.flags, ""), func(t *testing.T) {
			cmd, _ := mcpCommand(t, bin, tc.flags...)
			cs, err := mcp.NewClient(&mcp.Implementation{Name: tc.client, Version: "1"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_shell_command", Arguments: map[string]any{"command": "echo hi"}})
			if err != nil {
				t.Fatal(err)
			}
			if got := res.StructuredContent != nil; got != tc.structured {
				t.Errorf("structuredContent %v, want %v", got, tc.structured)
			}
			if text := res.Content[0].(*mcp.TextContent).Text; !strings.HasSuffix(text, "hi") {
				t.Errorf("text %q", text)
			}
		})
	}
}

// Everything on stdout is JSON-RPC, one message per line, each under 1 MiB, however
// much the command prints; the command's output never reaches the server's stdout.
func TestMCPStdoutIsOnlyJSONRPC(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t)
	cmd, _ := mcpCommand(t, bin, "--verbose")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for _, msg := range []string{
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"progressToken":"p"},"name":"run_shell_command","arguments":{"command":"yes stdout-noise | head -c 30000000; yes stderr-noise | head -c 3000000 >&2; sleep 1.2; echo done"}}}`,
	} {
		fmt.Fprintln(stdin, msg)
	}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	var methods []string
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) > 1<<20 {
			t.Errorf("a %d-byte message", len(line))
		}
		var msg struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      *int            `json:"id"`
			Method  string          `json:"method"`
			Result  json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal(line, &msg); err != nil || msg.JSONRPC != "2.0" {
			t.Fatalf("not JSON-RPC on stdout: %.200q", line)
		}
		methods = append(methods, msg.Method)
		if msg.ID != nil && *msg.ID == 1 {
			if !bytes.Contains(msg.Result, []byte(`"stdout_bytes":30000005`)) {
				t.Errorf("result does not count all the output: %.300s", msg.Result)
			}
			stdin.Close() // EOF: the server must exit
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("exit: %v\n%s", err, stderr.String())
	}
	if !slices.Contains(methods, "notifications/progress") {
		t.Errorf("no progress notification among %q", methods)
	}
	if strings.Contains(stderr.String(), "noise\nstderr-noise") || strings.Contains(stderr.String(), "noise\nstdout-noise") {
		t.Errorf("command output reached the server's stderr: %.300s", stderr.String())
	}
	if !strings.Contains(stderr.String(), "msg=call") {
		t.Errorf("--verbose logged nothing on stderr: %q", stderr.String())
	}
}

// BenchmarkMCPEchoHi measures sequential `echo hi` round trips through the real
// binary over stdio, against fork/exec of `bash -c 'echo hi'` from Go, interleaved in
// the same run so both see the same machine load. It reports medians and p95s.
//
//	go test -run '^$' -bench MCPEchoHi -benchtime 300x ./cmd/shellgate
func BenchmarkMCPEchoHi(b *testing.B) {
	bin := buildBinary(b)
	cmd, _ := mcpCommand(b, bin)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	bash, err := exec.LookPath("bash")
	if err != nil {
		b.Skip("no bash")
	}
	params := &mcp.CallToolParams{Name: "run_shell_command", Arguments: map[string]any{"command": "echo hi"}}
	roundTrip := func() time.Duration {
		start := time.Now()
		res, err := cs.CallTool(context.Background(), params)
		if err != nil || res.IsError {
			b.Fatalf("echo hi: %v %v", err, res)
		}
		return time.Since(start)
	}
	direct := func() time.Duration {
		start := time.Now()
		out, err := exec.Command(bash, "-c", "echo hi").Output()
		if err != nil || string(out) != "hi\n" {
			b.Fatalf("bash -c 'echo hi': %q %v", out, err)
		}
		return time.Since(start)
	}
	for range 10 { // warm up both paths
		roundTrip()
		direct()
	}
	var viaMCP, viaExec []time.Duration
	b.ResetTimer()
	for b.Loop() {
		viaMCP = append(viaMCP, roundTrip())
		viaExec = append(viaExec, direct())
	}
	b.StopTimer()
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	mcpMedian, execMedian := quantile(viaMCP, 0.5), quantile(viaExec, 0.5)
	b.ReportMetric(ms(mcpMedian), "mcp-median-ms")
	b.ReportMetric(ms(quantile(viaMCP, 0.95)), "mcp-p95-ms")
	b.ReportMetric(ms(execMedian), "exec-median-ms")
	b.ReportMetric(ms(quantile(viaExec, 0.95)), "exec-p95-ms")
	b.ReportMetric(float64(mcpMedian)/float64(execMedian), "median-ratio")
	b.ReportMetric(0, "ns/op") // the interleaved total is not meaningful
}

func quantile(ds []time.Duration, q float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[int(q*float64(len(s)-1))]
}

// A negative --summarize budget is a usage error, said in one line.
func TestMCPSummarizeFlag(t *testing.T) {
	var stdout, stderr strings.Builder
	if code := cmdMCP([]string{"--summarize", "-5"}, &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), "--summarize -5: want a number of tokens") || strings.Count(stderr.String(), "\n") != 1 {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
}

// A stdio client that goes away mid-session (its end of our stdout closed,
// as when it is killed) ends the session as an EOF does: the server exits on
// its own, not killed by SIGPIPE, and removes the session's output files. It
// died of SIGPIPE at its next write and left a 4.8 MB spill file behind.
func TestMCPClientGoneClosesTheSession(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	if runtime.GOOS == "windows" {
		t.Skip("no SIGPIPE")
	}
	bin := buildBinary(t)
	cmd, _ := mcpCommand(t, bin)
	tmp := ""
	for _, kv := range cmd.Env {
		if v, ok := strings.CutPrefix(kv, "TMPDIR="); ok {
			tmp = v
		}
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(stdin, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if _, err := stdout.Read(make([]byte, 1)); err != nil { // the answer has begun
		t.Fatal(err)
	}
	stdout.Close() // the client is gone: our stdout's reader with it
	fmt.Fprintln(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	fmt.Fprintln(stdin, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"run_shell_command","arguments":{"command":"seq 1 700000"}}}`)
	time.Sleep(2 * time.Second) // the call runs, spills, and its answer meets the closed pipe
	stdin.Close()
	err = cmd.Wait()
	if st, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && st.Signaled() {
		t.Fatalf("the server died of %v\n%s", st.Signal(), stderr.String())
	}
	var left []string
	filepath.WalkDir(tmp, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".log") {
			left = append(left, p)
		}
		return nil
	})
	if len(left) > 0 {
		t.Errorf("exit %v; the session's output files are left: %v\n%s", err, left, stderr.String())
	}
}

// `shellgate mcp` started in the home directory (a server registered for
// the user, started where the agent was) says once, on stderr, that every
// command will be refused and why, and serves on: each call's envelope says
// it to the model in one sentence (it failed each write with a 520-character
// CHECKPOINT_FAILED, and ran what did not write).
func TestMCPRootHoldsCheckpoints(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t)
	home := visibleTempDir(t)
	cmd := exec.Command(bin, "mcp", "--root", home, "--no-user-config", "--tool-name", "shell")
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_STATE_HOME=", "XDG_CONFIG_HOME=", shellgate.CheckpointsEnv+"=", "TMPDIR="+t.TempDir())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := "the project root is your home directory (" + home + "), which holds shellgate's checkpoints (in ~/.local/state/shellgate/checkpoints): start shellgate in the project's directory (or --root DIR), or turn checkpoints off (--checkpoints off)"
	for _, command := range []string{"ls", "touch x"} {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "shell", Arguments: map[string]any{"command": command}})
		if err != nil {
			t.Fatal(err)
		}
		env, _ := res.StructuredContent.(map[string]any)
		e, _ := env["error"].(map[string]any)
		if e["code"] != "CHECKPOINT_FAILED" || e["message"] != "Not run: "+want+"." {
			t.Errorf("%s: %v", command, res.StructuredContent)
		}
	}
	cs.Close()
	cmd.Wait()
	if got := stderr.String(); got != "shellgate mcp: every command will be refused: "+want+"\n" {
		t.Errorf("stderr:\n%q\nwant\n%q", got, want)
	}
	if _, err := os.Stat(filepath.Join(home, "x")); err == nil {
		t.Errorf("touch x ran")
	}
}
