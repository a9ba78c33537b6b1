//go:build !shellgate_nomcp

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/internal/textpages"
	"github.com/shellgate/shellgate/mcpserver"

	"golang.org/x/term"
)

const mcpUsage = `Usage: shellgate mcp [flags]

Serves the shell tool over the Model Context Protocol: on stdin/stdout by default
(register "shellgate mcp --root DIR" as a stdio server in your agent), or over
streamable HTTP with --http ADDR.

Over HTTP every request needs "Authorization: Bearer TOKEN". The token comes from
$SHELLGATE_MCP_TOKEN or --token-file, else one is generated and printed on stderr
(--token still works but shows the token to every process on the machine).
Binding to a non-loopback address requires an explicit token. Host and Origin headers
are checked against DNS rebinding: loopback, the bound host and --allow-origin values
are accepted. At most --max-sessions HTTP sessions are open at once (503 past it); a
session that runs nothing is closed after 2 minutes, one idle for 30 minutes too.

Each client connection is a session: cd carries over to its next call, and its jobs
(run_in_background, yield_after_ms, tty, commands waiting for input) are read, typed
into and stopped with the tools job_output, job_input, job_kill and job_list. When the
connection ends, its jobs are killed.

At stdin EOF the requests already read are answered first, for up to a second, so
printf '{...}\n{...}\n' | shellgate mcp gets its replies; then, as on SIGINT or SIGTERM,
commands still running are killed and the server exits. Only JSON-RPC is written to
stdout; logs go to stderr.

Flags:
`

// optionalBool is a boolean flag whose default is decided elsewhere: its help
// shows no "(default …)", and set says whether it was given.
type optionalBool struct{ v, set bool }

func (b *optionalBool) String() string {
	if b == nil || !b.set {
		return ""
	}
	return strconv.FormatBool(b.v)
}

func (b *optionalBool) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return errors.New("want true or false")
	}
	b.v, b.set = v, true
	return nil
}

func (b *optionalBool) IsBoolFlag() bool { return true }

// originList collects repeated --allow-origin flags.
type originList []string

func (o *originList) String() string     { return strings.Join(*o, ",") }
func (o *originList) Set(v string) error { *o = append(*o, v); return nil }

func cmdMCP(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mcp", flag.ContinueOnError)
	var (
		cf        commonFlags
		addr      = fs.String("http", "", "serve streamable HTTP on `ADDR` (e.g. 127.0.0.1:8765) instead of stdio")
		token     = fs.String("token", "", "deprecated: every process can read a command line; use $SHELLGATE_MCP_TOKEN or --token-file")
		tokenFile = fs.String("token-file", "", "read the HTTP bearer token from `FILE` (default: $SHELLGATE_MCP_TOKEN, else generated)")
		toolName  = fs.String("tool-name", mcpserver.DefaultToolName, "name of the tool, e.g. Bash")
		verbose   = fs.Bool("verbose", false, "log every call on stderr")
		structd   optionalBool
		keep      = fs.Bool("keep-spill-files", false, "keep the files of a session's complete outputs after it ends (default: removed then)")
		undoTool  = fs.Bool("undo-tool", false, "offer the tool \"undo\": the model may list the project's checkpoints and restore one (off by default)")
		summarize = fs.Int("summarize", 0, "when output is cut, ask the client's model (MCP sampling) for a summary of at most `TOKENS` tokens, put first (0: off)")
		maxSess   = fs.Int("max-sessions", mcpserver.DefaultMaxSessions, "over HTTP, the most sessions open at once; a client past it gets 503 (-1: no cap)")
		origins   originList
	)
	fs.Var(&structd, "structured-content", "true: send the envelope, output whole, as structuredContent beside the text, to every client; false: the text alone, to every client (default: per client, the text alone to Claude Code, Codex, Gemini CLI, VS Code and Cline, whose models read the JSON instead or besides, and to others the envelope with 4 KB of the output, mostly its end; see docs/mcp.md)")
	fs.Var(&origins, "allow-origin", "also accept this browser `ORIGIN` over HTTP, e.g. https://app.example.com (repeatable)")
	cf.register(fs)
	cf.registerAudit(fs)
	head := func(w io.Writer) { fmt.Fprint(w, mcpUsage) }
	if help, err := parseFlags(fs, args, head, stdout); help {
		return 0
	} else if err != nil {
		return usageFailure(stderr, "mcp", err.Error())
	}
	if *summarize < 0 {
		return usageFailure(stderr, "mcp", fmt.Sprintf("--summarize %d: want a number of tokens, or 0 for none", *summarize))
	}
	if fs.NArg() > 0 {
		return usageFailure(stderr, "mcp", fmt.Sprintf("unexpected arguments %q", fs.Args()))
	}
	if err := mcpserver.CheckToolName(*toolName); err != nil {
		return usageFailure(stderr, "mcp", "--tool-name: "+err.Error())
	}
	for _, o := range origins {
		if err := mcpserver.CheckOrigin(o); err != nil {
			return usageFailure(stderr, "mcp", "--allow-origin: "+err.Error())
		}
	}
	lessGC()
	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelInfo
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	var httpOpts mcpserver.HTTPOptions
	if *addr != "" {
		// Before the token: "localhost" is not taken for a non-loopback
		// address, nor is a token printed for a server that cannot listen.
		if err := checkListenAddr(*addr); err != nil {
			return usageFailure(stderr, "mcp", err.Error())
		}
		if *token != "" {
			fmt.Fprintln(stderr, "shellgate mcp: warning: --token shows the token to every process on this machine (ps); use SHELLGATE_MCP_TOKEN or --token-file")
		}
		flagToken := *token
		if *tokenFile != "" {
			b, err := os.ReadFile(*tokenFile)
			if err != nil {
				return usageFailure(stderr, "mcp", fmt.Sprintf("--token-file: %v", err))
			}
			if flagToken = strings.TrimSpace(string(b)); flagToken == "" {
				return usageFailure(stderr, "mcp", fmt.Sprintf("--token-file %s is empty", *tokenFile))
			}
		}
		t, generated, err := httpToken(*addr, flagToken)
		if err != nil {
			return usageFailure(stderr, "mcp", err.Error())
		}
		if *maxSess == 0 || *maxSess < -1 {
			return usageFailure(stderr, "mcp", fmt.Sprintf("--max-sessions %d: want a number of sessions, or -1 for no cap", *maxSess))
		}
		httpOpts = mcpserver.HTTPOptions{Token: t, AllowOrigins: origins, MaxSessions: *maxSess}
		if generated {
			fmt.Fprintf(stderr, "shellgate mcp: bearer token (set SHELLGATE_MCP_TOKEN or --token-file to choose one): %s\n", t)
		}
	}

	cfg, _, err := cf.config(stderr)
	var usage *usageError
	if errors.As(err, &usage) {
		return usageFailure(stderr, "mcp", err.Error())
	}
	if err != nil {
		fmt.Fprintf(stderr, "shellgate mcp: %v\n", err)
		return exitShellgate
	}
	shellgate.Subreap() // what a command leaves stays below this process (unsupported: the scans of /proc stay)
	gate, err := shellgate.New(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "shellgate mcp: %v\n", err)
		return exitShellgate
	}
	// Deferred last so it runs after the server has cancelled its calls: it kills
	// whatever they left in the background.
	defer gate.Close()
	if err := gate.RootProblem(); err != nil {
		// It serves still, so that the agent's model reads why in each
		// call's envelope (an MCP server that exits shows as "failed"):
		// the user reads it here.
		fmt.Fprintf(stderr, "shellgate mcp: every command will be refused: %v\n", err)
	}
	opts := mcpserver.Options{ToolName: *toolName, Logger: log, KeepSpillFiles: *keep, Summarize: *summarize, UndoTool: *undoTool, Version: version()}
	if structd.set { // an override for every client
		opts.TextOnly, opts.Structured = !structd.v, structd.v
	}
	srv, err := mcpserver.New(gate, opts)
	if err != nil {
		fmt.Fprintf(stderr, "shellgate mcp: %v\n", err)
		return exitShellgate
	}
	defer srv.Close() // before gate.Close: cancels calls still running and waits for them

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	giveBack := func() { gate.Idle(); debug.FreeOSMemory(); textpages.Drop() }
	if *addr == "" {
		// A client that goes away closes the pipe of our stdout: the next
		// write must fail (the session then ends as at EOF, its jobs killed
		// and its output files removed), not kill the server with SIGPIPE,
		// which the runtime does for fd 1 unless SIGPIPE is notified.
		// Notified, not ignored: an ignored SIGPIPE would be the commands' too.
		signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
		trim := newIdleTrim(idleFree, giveBack)
		defer trim.stop()
		if term.IsTerminal(int(os.Stdin.Fd())) {
			// A person, not an agent, started it: without this line it waits in
			// silence for JSON-RPC that no one will type.
			fmt.Fprintf(stderr, "shellgate mcp: waiting for an MCP client's JSON-RPC on stdin (tool %s, root %s); an agent starts this itself (docs/clients.md). Ctrl-D ends it.\n", *toolName, gate.Info().Root)
		}
		if err := srv.Serve(ctx, mcpserver.StdioTransport(trim.reader(os.Stdin), trim.writer(stdout))); err != nil {
			fmt.Fprintf(stderr, "shellgate mcp: %v\n", err)
			return exitShellgate
		}
		return 0
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(stderr, "shellgate mcp: %v\n", err)
		return exitShellgate
	}
	// Quiet as on stdio: no request in flight (a client's standing event
	// stream aside) for idleFree.
	httpOpts.Quiet, httpOpts.QuietAfter = giveBack, idleFree
	httpOpts.BoundHost = ln.Addr().String()
	if host, _, err := net.SplitHostPort(*addr); err == nil && host != "" {
		httpOpts.BoundHost = host
	}
	fmt.Fprintf(stderr, "shellgate mcp: serving streamable HTTP at http://%s/ (tool %s, root %s)\n", ln.Addr(), *toolName, gate.Info().Root)
	if err := srv.ServeListener(ctx, ln, httpOpts); err != nil {
		fmt.Fprintf(stderr, "shellgate mcp: %v\n", err)
		return exitShellgate
	}
	return 0
}

// httpToken picks the bearer token: the flag, the environment, or a new one. A new
// one is only made for loopback addresses: anything reachable from the network must
// have a token its owner chose and can give to clients.
// checkListenAddr says what is wrong with --http's address, if anything: it
// is HOST:PORT (the host may be empty: every interface), the port a number.
func checkListenAddr(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err == nil {
		if n, perr := strconv.Atoi(port); perr != nil || n < 0 || n > 65535 {
			err = fmt.Errorf("port %q is not a number from 0 to 65535", port)
		}
	}
	if err != nil {
		var ae *net.AddrError
		if errors.As(err, &ae) {
			err = errors.New(ae.Err)
		}
		return fmt.Errorf("--http %q: want HOST:PORT, such as 127.0.0.1:8765 (%v)", addr, err)
	}
	return nil
}

func httpToken(addr, flagToken string) (token string, generated bool, _ error) {
	if flagToken != "" {
		return flagToken, false, nil
	}
	if env := os.Getenv("SHELLGATE_MCP_TOKEN"); env != "" {
		return env, false, nil
	}
	if !mcpserver.IsLoopback(addr) {
		return "", false, fmt.Errorf("--http %s is not a loopback address: refusing to serve it without an explicit token (SHELLGATE_MCP_TOKEN or --token-file)", addr)
	}
	t, err := mcpserver.NewToken()
	return t, err == nil, err
}

// lessGC collects garbage at 400% heap growth instead of 100%, with a soft limit
// of 48 MiB on the heap, unless GOGC or GOMEMLIMIT say otherwise: the MCP SDK
// leaves ~400 KB of garbage per call (a 32 KB buffer for each JSON value it
// decodes), so on a server's small heap the default ran a collection every few
// calls, about a third of a call's cost (BenchmarkMCPLayer: 0.77–1.0 → 0.19–0.52
// ms, alternated), while under load (BenchmarkHTTPLoad) the limit keeps the peak
// below the default's (55 vs 80 MiB).
func lessGC() {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetGCPercent(400)
	debug.SetMemoryLimit(48 << 20)
}
