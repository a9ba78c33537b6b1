package mcpserver

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTPOptions configure the streamable HTTP transport.
type HTTPOptions struct {
	// Token is the bearer token every request must carry
	// ("Authorization: Bearer TOKEN"). Required.
	Token string
	// BoundHost is the host the server listens on (from --http ADDR); requests
	// naming it in Host or Origin are allowed besides loopback ones.
	BoundHost string
	// AllowOrigins are further Origin values browsers may send, such as
	// "https://app.example.com". Loopback origins are always allowed.
	AllowOrigins []string
	// MaxSessions caps the MCP sessions open at once: each holds a sandbox
	// helper and its jobs. A client starting one more is answered 503 (with
	// Retry-After) until one ends. Default DefaultMaxSessions; negative: no cap.
	MaxSessions int
	// UnusedSessionTimeout closes a session that has run no tool call this long
	// after it started: a client that initialized and went away. Default
	// DefaultUnusedSessionTimeout. Sessions that ran a call are closed after
	// 30 minutes idle.
	UnusedSessionTimeout time.Duration
	// IdleTimeout closes a keep-alive connection with no request in flight after
	// this long. Default DefaultIdleTimeout.
	IdleTimeout time.Duration
	// WriteTimeout ends a connection when one write of a response (a result, an
	// event of a stream) cannot be sent for this long: a client that stops
	// reading does not hold its session and a goroutine forever. Default
	// DefaultWriteTimeout.
	WriteTimeout time.Duration
	// Quiet, if set, is called once no request has been in flight for
	// QuietAfter (a session's standing event stream, its GET, does not
	// count), and again after each later request and quiet spell: `shellgate
	// mcp --http` gives back memory then, and has its sandbox helpers give
	// back theirs (Gate.Idle), as it does on stdio. It runs on a goroutine of
	// its own, while a request may arrive. QuietAfter must be set with it.
	Quiet      func()
	QuietAfter time.Duration
}

// Defaults of HTTPOptions.
const (
	DefaultMaxSessions          = 64
	DefaultUnusedSessionTimeout = 2 * time.Minute
	DefaultIdleTimeout          = 2 * time.Minute
	DefaultWriteTimeout         = 30 * time.Second
	// readHeaderTimeout bounds how long a request's headers may take to arrive.
	readHeaderTimeout = 10 * time.Second
)

func (o *HTTPOptions) defaults() {
	if o.MaxSessions == 0 {
		o.MaxSessions = DefaultMaxSessions
	}
	if o.UnusedSessionTimeout <= 0 {
		o.UnusedSessionTimeout = DefaultUnusedSessionTimeout
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = DefaultWriteTimeout
	}
}

// NewToken returns a random bearer token (256 bits, hex).
func NewToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generating a token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// Handler returns the streamable HTTP handler, behind the token, Host and Origin
// checks. Each client gets its own MCP session (and its own session approvals).
func (s *Server) Handler(o HTTPOptions) (http.Handler, error) {
	if o.Token == "" {
		return nil, errors.New("mcpserver: HTTP needs a bearer token")
	}
	o.defaults()
	g := &guard{want: sha256.Sum256([]byte(o.Token)), bound: hostOnly(o.BoundHost), origins: map[string]bool{}, ending: s.cancelSession,
		maxSessions: o.MaxSessions, live: s.liveSessions, writeTimeout: o.WriteTimeout}
	s.mu.Lock()
	s.unusedTimeout = o.UnusedSessionTimeout
	s.mu.Unlock()
	for _, raw := range o.AllowOrigins {
		origin, err := normalizeOrigin(raw)
		if err != nil {
			return nil, fmt.Errorf("allowed origin %q: %w", raw, err)
		}
		g.origins[origin] = true
		u, _ := url.Parse(origin)
		g.hosts = append(g.hosts, strings.ToLower(u.Hostname()))
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, &mcp.StreamableHTTPOptions{
		Logger: s.log,
		// The guard does a stricter Host check for every address, not only loopback.
		DisableLocalhostProtection: true,
		// Forget clients that went away without ending their session. A session with
		// a call in flight is not idle, so this never cuts a command short.
		SessionTimeout: sessionTimeout,
	})
	if o.Quiet != nil && o.QuietAfter > 0 {
		// Inside the guard: a refused request is not the server's activity.
		return g.wrap(newQuietSpell(o.QuietAfter, o.Quiet, s.base.Done()).wrap(h)), nil
	}
	return g.wrap(h), nil
}

// A quietSpell calls its function once no request has been in flight for a
// while (HTTPOptions.Quiet).
type quietSpell struct {
	mu       sync.Mutex
	inFlight int
	after    time.Duration
	timer    *time.Timer // armed when the last request in flight ends
}

// newQuietSpell calls quiet on one goroutine, which lives until done, not on
// a new one each time: a goroutine's start and end look its function up in
// the binary's function table, which would map back pages of the executable
// that quiet may just have given up (textpages.Drop).
func newQuietSpell(after time.Duration, quiet func(), done <-chan struct{}) *quietSpell {
	q := &quietSpell{after: after, timer: time.NewTimer(after)}
	q.timer.Stop() // armed by the first request's end: a server no client spoke to has nothing to give back
	go func() {
		for {
			select {
			case <-q.timer.C:
				quiet()
			case <-done:
				q.mu.Lock()
				q.timer.Stop()
				q.after = 0 // never armed again
				q.mu.Unlock()
				return
			}
		}
	}()
	return q
}

// wrap counts h's requests in flight, but for GETs: a client holds its
// session's event stream open while it waits between calls.
func (q *quietSpell) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			h.ServeHTTP(w, r)
			return
		}
		q.mu.Lock()
		q.inFlight++
		q.timer.Stop()
		q.mu.Unlock()
		defer func() {
			q.mu.Lock()
			if q.inFlight--; q.inFlight == 0 && q.after > 0 {
				q.timer.Reset(q.after)
			}
			q.mu.Unlock()
		}()
		h.ServeHTTP(w, r)
	})
}

// ServeListener serves streamable HTTP on ln until ctx is done, then cancels calls in
// flight (killing their commands), waits for them, and stops the HTTP server.
func (s *Server) ServeListener(ctx context.Context, ln net.Listener, o HTTPOptions) error {
	h, err := s.Handler(o)
	if err != nil {
		return err
	}
	o.defaults()
	srv := &http.Server{Handler: h, ReadHeaderTimeout: readHeaderTimeout, IdleTimeout: o.IdleTimeout}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	// Sessions end without a call of ours seeing it (deleted, or idle past
	// sessionTimeout): look for them now and then, so their jobs die with them.
	prune := time.NewTicker(min(pruneEvery, o.UnusedSessionTimeout/2))
	defer prune.Stop()
	for running := true; running; {
		select {
		case err := <-served:
			s.Close()
			return err
		case <-prune.C:
			s.closeUnused()
			s.pruneSessions()
		case <-ctx.Done():
			running = false
		}
	}
	// Open event streams never end on their own: Close ends the sessions, and
	// so them, so that an idle server stops at once; responses still being
	// written get a moment.
	s.Close()
	stop, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := srv.Shutdown(stop); err != nil {
		srv.Close()
	}
	<-served
	return nil
}

// pruneEvery is how often an HTTP server looks for sessions that ended.
const pruneEvery = time.Second

// sessionTimeout is how long an HTTP session may stay idle before it is closed.
const sessionTimeout = 30 * time.Minute

// guard checks Host and Origin against DNS rebinding, then the bearer token.
type guard struct {
	want    [sha256.Size]byte
	bound   string
	hosts   []string        // hosts of allowed origins
	origins map[string]bool // normalized allowed origins
	ending  func(sessionID string)

	maxSessions  int        // < 0: no cap
	live         func() int // MCP sessions open
	mu           sync.Mutex
	starting     int // requests that may open a session, in flight
	writeTimeout time.Duration
}

func (g *guard) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w = newDeadlineWriter(w, g.writeTimeout)
		defer w.(*deadlineWriter).done()
		refuse := func(msg string, code int) {
			// A refused client gets no connection to keep.
			w.Header().Set("Connection", "close")
			http.Error(w, msg, code)
		}
		if !g.hostAllowed(r.Host) {
			refuse(fmt.Sprintf("Forbidden: Host %q is not allowed (DNS rebinding protection)", r.Host), http.StatusForbidden)
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" && !g.originAllowed(origin) {
			refuse(fmt.Sprintf("Forbidden: Origin %q is not allowed; start the server with --allow-origin %s to allow it", origin, origin), http.StatusForbidden)
			return
		}
		if !g.authorized(r.Header.Get("Authorization")) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="shellgate"`)
			refuse("Unauthorized: a valid bearer token is required (Authorization: Bearer TOKEN)", http.StatusUnauthorized)
			return
		}
		if r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") == "" && g.maxSessions >= 0 {
			// It may open a session: count it until it is answered.
			if !g.admit() {
				w.Header().Set("Retry-After", "30")
				http.Error(w, fmt.Sprintf("Service Unavailable: %d sessions are open, the most this server allows (--max-sessions); end one, or try again later", g.maxSessions), http.StatusServiceUnavailable)
				return
			}
			// Counted as starting until the answer begins: by then the
			// session it opened (if any) is counted as open.
			var once sync.Once
			admitted := func() { once.Do(g.admitted) }
			w.(*deadlineWriter).answering = admitted
			defer admitted()
		}
		if id := r.Header.Get("Mcp-Session-Id"); r.Method == http.MethodDelete && id != "" {
			// The client ends its session: kill its commands first, or the SDK
			// would wait for them before closing it.
			g.ending(id)
		}
		next.ServeHTTP(w, r)
	})
}

// admit reports whether one more session may open, counting it as starting.
// Sessions starting are counted beside those open, so that a burst of clients
// cannot pass the cap between the count and the session's creation.
func (g *guard) admit() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.live()+g.starting >= g.maxSessions {
		return false
	}
	g.starting++
	return true
}

func (g *guard) admitted() {
	g.mu.Lock()
	g.starting--
	g.mu.Unlock()
}

// deadlineWriter gives each write of a response (and each flush) a deadline:
// a write that cannot go out for timeout ends the connection, and the handler
// writing it returns. The server's own WriteTimeout would instead bound a whole
// response, which for an event stream or a long call is wrong.
type deadlineWriter struct {
	http.ResponseWriter
	rc        *http.ResponseController
	timeout   time.Duration
	answering func() // if not nil, called as the answer begins
}

func (d *deadlineWriter) WriteHeader(code int) {
	d.begin()
	d.ResponseWriter.WriteHeader(code)
}

func (d *deadlineWriter) begin() {
	if d.answering != nil {
		d.answering()
	}
}

func newDeadlineWriter(w http.ResponseWriter, timeout time.Duration) *deadlineWriter {
	return &deadlineWriter{ResponseWriter: w, rc: http.NewResponseController(w), timeout: timeout}
}

func (d *deadlineWriter) arm() { _ = d.rc.SetWriteDeadline(time.Now().Add(d.timeout)) }

func (d *deadlineWriter) Write(b []byte) (int, error) {
	d.begin()
	d.arm()
	return d.ResponseWriter.Write(b)
}

func (d *deadlineWriter) Flush() { _ = d.FlushError() }

func (d *deadlineWriter) FlushError() error {
	d.begin()
	d.arm()
	return d.rc.Flush()
}

func (d *deadlineWriter) Unwrap() http.ResponseWriter { return d.ResponseWriter }

// done arms the deadline for what the server writes after the handler (the end
// of a chunked body), and for nothing later: the next request's writes arm their own.
func (d *deadlineWriter) done() { d.arm() }

// authorized compares the token in constant time (hashing first hides its length).
func (g *guard) authorized(header string) bool {
	scheme, token, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	got := sha256.Sum256([]byte(strings.TrimSpace(token)))
	return subtle.ConstantTimeCompare(got[:], g.want[:]) == 1
}

// hostAllowed accepts loopback names, IP literals (a rebinding attack needs a
// domain name of the attacker's), the bound host and the hosts of allowed origins.
func (g *guard) hostAllowed(hostport string) bool {
	host := hostOnly(hostport)
	switch {
	case host == "":
		return false
	case isLoopbackHost(host), net.ParseIP(host) != nil, host == g.bound:
		return true
	}
	for _, h := range g.hosts {
		if host == h {
			return true
		}
	}
	return false
}

// originAllowed accepts loopback origins, the bound host and the allowed origins.
func (g *guard) originAllowed(raw string) bool {
	origin, err := normalizeOrigin(raw)
	if err != nil {
		return false
	}
	if g.origins[origin] {
		return true
	}
	u, _ := url.Parse(origin)
	host := strings.ToLower(u.Hostname())
	return isLoopbackHost(host) || (g.bound != "" && host == g.bound)
}

// CheckOrigin says what is wrong with raw as an allowed browser origin
// (HTTPOptions.AllowOrigins), which Handler checks: a command line may check
// first.
func CheckOrigin(raw string) error {
	_, err := normalizeOrigin(raw)
	if err != nil {
		return fmt.Errorf("allowed origin %q: %w", raw, err)
	}
	return nil
}

// normalizeOrigin returns scheme://host[:port] in lower case.
func normalizeOrigin(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return "", err
	}
	if u.Scheme == "" || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
		return "", errors.New("want scheme://host[:port]")
	}
	return strings.ToLower(u.Scheme + "://" + u.Host), nil
}

// hostOnly drops the port from a host[:port] and the brackets from an IPv6 address.
func hostOnly(hostport string) string {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	return strings.ToLower(strings.Trim(host, "[]"))
}

func isLoopbackHost(host string) bool {
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// IsLoopback reports whether addr (host:port, as for --http) binds only to a
// loopback interface. An empty host means every interface, so it is not loopback.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	return host != "" && isLoopbackHost(strings.ToLower(strings.Trim(host, "[]")))
}
