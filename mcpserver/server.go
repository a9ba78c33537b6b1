package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/shellgate/shellgate"
)

// DefaultToolName is seed 003's tool name. Seed 001 calls the same tool "Bash".
const DefaultToolName = "run_shell_command"

// Options configure a Server. The zero value is usable.
type Options struct {
	// ToolName is the name the tool is listed under. Default: run_shell_command.
	ToolName string
	// Version is reported to clients as the server's version. Default: "dev".
	Version string
	// Logger receives the server's own log. Default: discard. In stdio mode it must
	// not write to stdout, which carries only JSON-RPC.
	Logger *slog.Logger
	// ProgressInterval is the least time between two progress notifications for a
	// call. Default: one second (seed 003).
	ProgressInterval time.Duration
	// MaxMessage caps the size of one tool result message. Default: MaxMessage.
	MaxMessage int
	// KeepSpillFiles keeps the files holding a session's complete outputs after the
	// session ends; by default they are removed then (and when the server closes).
	KeepSpillFiles bool
	// TextOnly leaves structuredContent (and the tools' outputSchema) out of
	// results for every client; Structured keeps them for every client, the
	// output whole in both channels. Neither: chosen per client at initialize
	// (clientProfile): text only for Claude Code, Codex, Gemini CLI, VS Code
	// and Cline, whose models read the structured JSON instead of the text or
	// besides it; for others structuredContent repeats 4 KB of the output,
	// mostly its end. See docs/mcp.md.
	TextOnly   bool
	Structured bool
	// Summarize, when > 0, asks the client's model for a summary of output that
	// was cut, in at most that many tokens, through MCP sampling, for clients that
	// offer it; it goes first in the text and in data.summary. Off by default:
	// the client's user may pay for those tokens, and the digest of error-like
	// lines is always there.
	Summarize int
	// UndoTool offers the tool "undo", which lists the project's checkpoints
	// and restores one (Gate.Checkpoints). Off by default: a client may not
	// want its model to take back the user's own work; see docs/mcp.md.
	UndoTool bool
}

// Server serves a Gate's shell tool over MCP. One Server can serve many sessions
// (stdio serves one; HTTP one per client); calls run concurrently. A Server does not
// own its Gate: after Close, close the Gate to kill anything left in the background.
type Server struct {
	gate *shellgate.Gate
	info shellgate.Info
	opts Options
	mcp  *mcp.Server
	log  *slog.Logger

	approvals sessionApprovals
	rounds    *roundTrips
	spills    spillFiles
	sessions  shellSessions

	// base is cancelled by Close; every call's context ends with it.
	base      context.Context
	shutdown  context.CancelFunc
	mu        sync.Mutex
	closed    bool
	calls     sync.WaitGroup
	bySession map[string]map[*int]context.CancelFunc // calls in flight, by session key

	// unusedTimeout > 0 closes sessions (with an ID: HTTP ones) that have made
	// no call this long after they were first seen (closeUnused).
	unusedTimeout time.Duration
	firstSeen     map[string]time.Time // sessions not known to have made a call
	used          map[string]bool      // sessions that made a call
}

// New returns a Server offering one tool that runs commands through gate.
func New(gate *shellgate.Gate, opts Options) (*Server, error) {
	if gate == nil {
		return nil, errors.New("mcpserver: nil Gate")
	}
	if opts.ToolName == "" {
		opts.ToolName = DefaultToolName
	}
	if err := CheckToolName(opts.ToolName); err != nil {
		return nil, err
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler) // disabled: a call's log line is not even formatted
	}
	if opts.ProgressInterval <= 0 {
		opts.ProgressInterval = time.Second
	}
	if opts.MaxMessage <= 0 {
		opts.MaxMessage = MaxMessage
	}
	if opts.TextOnly && opts.Structured {
		return nil, errors.New("mcpserver: TextOnly and Structured both set")
	}
	if opts.MaxMessage < 2*resultOverhead {
		return nil, fmt.Errorf("mcpserver: MaxMessage %d is too small (at least %d)", opts.MaxMessage, 2*resultOverhead)
	}
	info := gate.Info()
	desc, err := describe(info)
	if err != nil {
		return nil, err
	}
	var out any         // an untyped nil: the SDK refuses a nil *jsonschema.Schema
	if !opts.TextOnly { // a declared outputSchema obliges every result to carry structuredContent
		if out, err = outputSchema(); err != nil {
			return nil, err
		}
	}
	s := &Server{gate: gate, info: info, opts: opts, log: opts.Logger, rounds: newRoundTrips()}
	s.base, s.shutdown = context.WithCancel(context.Background())
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "shellgate", Title: "shellgate", Version: opts.Version}, &mcp.ServerOptions{
		Logger:       opts.Logger,
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
		// A client that connected will run commands: its sandbox starts now,
		// not in its first call.
		InitializedHandler: func(_ context.Context, req *mcp.InitializedRequest) {
			if sess := s.session(sessionKey(req.Session)); sess != nil {
				sess.Warm()
			}
		},
	})
	s.mcp.AddReceivingMiddleware(s.perClient)
	s.mcp.AddTool(&mcp.Tool{
		Name:         opts.ToolName,
		Title:        "Shell",
		Description:  desc,
		InputSchema:  inputSchema(info.DefaultTimeout.Milliseconds(), info.MaxTimeout.Milliseconds(), info.OutputLimit, info.MaxOutputLimit),
		OutputSchema: out,
		Annotations: &mcp.ToolAnnotations{
			Title:           "Shell",
			DestructiveHint: ptr(true),
			OpenWorldHint:   ptr(info.Network),
		},
	}, s.call)
	s.addJobTools()
	if opts.UndoTool {
		s.addUndoTool()
	}
	return s, nil
}

// CheckToolName applies MCP's tool name rules (1–128 of A-Z a-z 0-9 _ - .),
// which New checks Options.ToolName against: a command line may check first.
func CheckToolName(name string) error {
	if len(name) > 128 {
		return fmt.Errorf("tool name %q is longer than 128 characters", name)
	}
	for _, r := range name {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_' || r == '-' || r == '.') {
			return fmt.Errorf("tool name %q: %q is not allowed; use letters, digits, '_', '-' and '.'", name, r)
		}
	}
	return nil
}

func ptr[T any](v T) *T { return &v }

// Serve serves one session over t (for example &mcp.StdioTransport{}) until the
// client disconnects (stdin EOF) or ctx is done, and returns once the session's calls
// have returned. A disconnect cancels the session's calls (the SDK cancels their
// contexts, which kills their commands); ctx being done closes the whole Server.
func (s *Server) Serve(ctx context.Context, t mcp.Transport) error {
	ss, err := s.mcp.Connect(ctx, t, nil)
	if err != nil {
		return fmt.Errorf("mcp: %w", err)
	}
	ended := make(chan error, 1)
	go func() { ended <- ss.Wait() }()
	select {
	case err = <-ended:
	case <-ctx.Done():
		// Cancel calls first: closing a session waits for the calls in flight.
		s.Close()
		ss.Close()
		err = <-ended
	}
	s.endSession(sessionKey(ss))
	forgetSessionKey(ss)
	if errors.Is(err, io.EOF) || ctx.Err() != nil {
		err = nil
	}
	return err
}

// Close cancels every call in flight (killing its command) and waits until they
// have all returned. Calls arriving later are answered with a CANCELLED envelope.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.shutdown()
	s.calls.Wait()
	// An HTTP session a client left without DELETE (a cut connection)
	// would otherwise keep its reader until the session timeout: the
	// embedding program's, past Close.
	for ss := range s.mcp.Sessions() {
		ss.Close()
	}
	s.sessions.closeAll()
	if !s.opts.KeepSpillFiles {
		s.spills.removeAll()
	}
}

// begin registers a call of session sessionID (a sessionKey), and returns its
// context: ctx, also cancelled by Close and by cancelSession.
func (s *Server) begin(ctx context.Context, sessionID string) (context.Context, func(), bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, nil, false
	}
	s.calls.Add(1)
	if sessionID != "" {
		if s.used == nil {
			s.used = map[string]bool{}
		}
		s.used[sessionID] = true
		delete(s.firstSeen, sessionID)
	}
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(s.base, cancel)
	key := new(int) // identifies this call in bySession
	if sessionID != "" {
		if s.bySession == nil {
			s.bySession = map[string]map[*int]context.CancelFunc{}
		}
		if s.bySession[sessionID] == nil {
			s.bySession[sessionID] = map[*int]context.CancelFunc{}
		}
		s.bySession[sessionID][key] = cancel
	}
	return ctx, func() {
		s.mu.Lock()
		idle := false
		if calls := s.bySession[sessionID]; calls != nil {
			delete(calls, key)
			if len(calls) == 0 {
				delete(s.bySession, sessionID)
				idle = true
			}
		}
		s.mu.Unlock()
		if idle {
			s.spills.idle(sessionID)
		}
		stop()
		cancel()
		s.calls.Done()
	}, true
}

// cancelSession cancels the calls in flight of one session, which is ending: the
// SDK closes a session only once its calls have returned, so they must not be left
// to run to their timeout.
func (s *Server) cancelSession(sessionID string) {
	s.mu.Lock()
	for _, cancel := range s.bySession[sessionID] {
		cancel()
	}
	s.mu.Unlock()
	s.endSession(sessionID)
}

// pruneSessions ends the shell sessions and removes the spill files of MCP
// sessions that ended without saying so (an HTTP client that went away, its
// session closed when idle).
//
// The keys are read before the live sessions: the SDK lists a session before any
// handler of it runs, so a key read first belongs to a session listed then, and
// one missing from the later snapshot has ended. The other order ends sessions
// that connected between the two reads.
func (s *Server) pruneSessions() {
	keys := append(s.spills.keys(), s.sessions.keys()...)
	live := map[string]bool{}
	for ss := range s.mcp.Sessions() {
		live[sessionKey(ss)] = true
	}
	for _, k := range keys {
		if k != "" && !live[k] {
			s.endSession(k)
		}
	}
}

// liveSessions counts the MCP sessions open: initialized (a request other than
// initialize, server/discover say, makes a session of its own for its length),
// and not ended (a DELETE ends its session here before the SDK has dropped it
// from its list).
func (s *Server) liveSessions() int {
	n := 0
	for ss := range s.mcp.Sessions() {
		if ss.InitializeParams() != nil && !s.sessions.isEnded(sessionKey(ss)) {
			n++
		}
	}
	return n
}

// closeUnused closes the sessions that have made no call within unusedTimeout
// of being first seen: a client that connected and went away would otherwise
// hold its sandbox helper until the SDK's idle timeout (30 minutes).
func (s *Server) closeUnused() {
	now := time.Now()
	var stale []*mcp.ServerSession
	s.mu.Lock()
	if s.unusedTimeout <= 0 {
		s.mu.Unlock()
		return
	}
	if s.firstSeen == nil {
		s.firstSeen = map[string]time.Time{}
	}
	live := map[string]bool{}
	for ss := range s.mcp.Sessions() {
		key := ss.ID()
		if key == "" {
			continue
		}
		live[key] = true
		if s.used[key] {
			continue
		}
		seen, ok := s.firstSeen[key]
		switch {
		case !ok:
			s.firstSeen[key] = now
		case now.Sub(seen) >= s.unusedTimeout:
			stale = append(stale, ss)
			delete(s.firstSeen, key)
		}
	}
	for key := range s.firstSeen {
		if !live[key] {
			delete(s.firstSeen, key)
		}
	}
	for key := range s.used {
		if !live[key] && len(s.bySession[key]) == 0 {
			delete(s.used, key)
		}
	}
	s.mu.Unlock()
	for _, ss := range stale {
		s.log.Info("closing a session that ran nothing", "session", ss.ID(), "after", s.unusedTimeout)
		ss.Close()
		s.endSession(ss.ID())
	}
}

// endSession ends a session's shell session, which kills its jobs, and removes
// its spill files, now or when its last call returns.
func (s *Server) endSession(key string) {
	s.sessions.end(key)
	if s.opts.KeepSpillFiles {
		return
	}
	s.mu.Lock()
	busy := len(s.bySession[key]) > 0
	s.mu.Unlock()
	s.spills.end(key, busy)
}

// live reports whether ss is still connected.
func (s *Server) live(ss *mcp.ServerSession) bool {
	return slices.Contains(slices.Collect(s.mcp.Sessions()), ss)
}
