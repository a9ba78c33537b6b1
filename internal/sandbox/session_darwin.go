package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/shellgate/shellgate/internal/protect"
	"github.com/shellgate/shellgate/internal/relay"
	"github.com/shellgate/shellgate/internal/runner"
	"github.com/shellgate/shellgate/internal/seatbelt"
)

// containing are the layers that contain what the policy cannot check (see
// Report.Uncontained): here, the write confinement.
var (
	containing = []string{LayerFS}
	breaking   []string
)

// A Session on macOS is a Seatbelt profile (see Seatbelt) that every command
// of the Gate starts under: /usr/bin/sandbox-exec, started by the runner as it
// starts any command — a child in a process group of its own, ended with it —
// applies the profile and executes the command, and everything the command
// starts inherits it. There is no helper process: the session is the profile.
//
// What Seatbelt cannot give, Report lists: no PID namespace or /proc of the
// session's own (ps shows the host's processes; the runner still finds a
// command's descendants by its marker and ends them, but a SIGKILL of
// shellgate leaves them running: macOS has no parent-death signal); no /tmp
// of the session's own (TMPDIR is a private host directory; /tmp is read-only);
// no loopback of the session's own; no process limit (RLIMIT_NPROC counts all
// of the user's processes).
type Session struct {
	helperless
	wrap   runner.Wrapper
	report Report
	proxy  *relay.Server // the egress proxy's listener on the host's loopback

	mu     sync.Mutex
	closed bool
}

// probeTimeout bounds the check that sandbox-exec accepts the profile.
const probeTimeout = 10 * time.Second

// Start builds the profile and checks, by running /usr/bin/true under it,
// that this system's sandbox-exec accepts it: a profile it rejects would fail
// every command instead.
func Start(spec Spec) (*Session, error) {
	if _, err := os.Stat(seatbelt.Exec); err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	report := seatbeltReport(spec)
	proxy := serveEgress(&spec, &report)
	sb, err := seatbelt.Build(seatbelt.RealPaths(seatbeltPolicy(spec), filepath.EvalSymlinks))
	if err != nil {
		proxy.Stop()
		return nil, err
	}
	argv := sb.Command([]string{"/usr/bin/true"})
	probe := exec.Command(argv[0], argv[1:]...)
	var stderr bytes.Buffer
	probe.Stderr = &stderr
	probe.Env = []string{}
	if err := probe.Start(); err != nil {
		return nil, fmt.Errorf("sandbox: %s: %w", seatbelt.Exec, err)
	}
	done := make(chan error, 1)
	go func() { done <- probe.Wait() }()
	select {
	case err = <-done:
	case <-time.After(probeTimeout):
		probe.Process.Kill()
		<-done
		err = errors.New("timed out")
	}
	if err != nil {
		proxy.Stop()
		return nil, fmt.Errorf("sandbox: %s refused the profile: %v: %s", seatbelt.Exec, err, strings.TrimSpace(stderr.String()))
	}
	return &Session{wrap: runner.Wrapper{Argv: func(argv []string, _ int) []string { return sb.Command(argv) }}, report: report, proxy: proxy}, nil
}

// serveEgress serves the egress proxy (Spec.EgressHandler) on the host's
// loopback at Spec.EgressPort, the one port the profile lets commands reach
// besides the host ports. Where that port is taken, the allow-list is not in
// force and the network stays off: spec loses its EgressPort and report says
// why. The loopback is the host's, so other local programs reach the proxy
// too, which lets them no further than the allow-list.
func serveEgress(spec *Spec, report *Report) *relay.Server {
	if spec.EgressHandler == nil || spec.EgressPort == 0 || spec.Network {
		spec.EgressPort = 0
		return nil
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(spec.EgressPort)))
	if err != nil {
		report.Missing = append(report.Missing, fmt.Sprintf("%s: port %d: %v (commands have no way out)", LayerEgress, spec.EgressPort, err))
		spec.EgressPort = 0
		return nil
	}
	report.Layers[LayerEgress] = ln.Addr().String()
	proxy, handle := relay.New(), spec.EgressHandler
	proxy.Serve(ln, func(ctx context.Context, c *net.TCPConn) { handle(ctx, c) })
	return proxy
}

// seatbeltPolicy is what Seatbelt enforces of spec: Limits and TmpSize have
// no Seatbelt equivalent.
func seatbeltPolicy(spec Spec) seatbelt.Policy {
	return seatbelt.Policy{TempDir: spec.TempDir, Writable: spec.Writable, Protected: unjudged(spec),
		Hidden: spec.Hidden, Visible: spec.Visible, Network: spec.Network,
		EgressPort: spec.EgressPort, HostPorts: spec.HostPorts}
}

// unjudged is spec.Protected without the entries whose content the table
// judges (protect.Entry.Harmless, .python-version): Linux keeps one a
// command makes where it holds a version and quarantines it otherwise;
// Seatbelt cannot look at what is written, and a denied write would fail
// `uv init`.
func unjudged(spec Spec) []string {
	var ps []string
	for _, p := range spec.Protected {
		if len(spec.Writable) > 0 {
			if rel, err := filepath.Rel(spec.Writable[0], p); err == nil && filepath.IsLocal(rel) {
				if e, ok := protect.Lookup(filepath.ToSlash(rel)); ok && e.Harmless != nil {
					continue
				}
			}
		}
		ps = append(ps, p)
	}
	return ps
}

// seatbeltReport says which guarantees Seatbelt gives and which it does not.
func seatbeltReport(spec Spec) Report {
	r := Report{Layers: map[string]string{
		LayerFS:      "seatbelt",
		LayerSecrets: "seatbelt", // unreadable (EPERM), not empty
	}}
	if spec.Network {
		r.Layers[LayerNet] = "host"
	} else {
		r.Layers[LayerNet] = "seatbelt"
		r.Missing = append(r.Missing, "net: the loopback is the host's, shared with every local service (Seatbelt has no network namespace)")
	}
	r.Missing = append(r.Missing,
		"pid: no PID namespace or /proc of the session's own on macOS; background processes survive a SIGKILL of shellgate",
		"tmp: no /tmp of the session's own on macOS: TMPDIR is a private host directory, /tmp is read-only",
		"procs: no process limit on macOS (RLIMIT_NPROC counts all of the user's processes)")
	return r
}

// Alive reports whether the session can start commands.
func (s *Session) Alive() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.closed
}

// Report says what the session applies.
func (s *Session) Report() Report { return s.report }

// Launch starts argv under sandbox-exec with the session's profile.
func (s *Session) Launch(argv, env []string, dir string, stdin, stdout, stderr *os.File, extra ...*os.File) (runner.Launched, error) {
	if !s.Alive() {
		return nil, errors.New("sandbox: session closed")
	}
	return s.wrap.Launch(argv, env, dir, stdin, stdout, stderr, extra...)
}

// Contains reports true: the commands are this process's children, and the
// runner looks for their descendants among all of the user's processes.
func (s *Session) Contains(int) bool { return true }

// Close ends the session; the runner's Supervisor ends its processes.
func (s *Session) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	s.proxy.Stop()
	return nil
}
