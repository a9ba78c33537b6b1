package shellgate_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/shellgate/shellgate/internal/lane"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/envelope"
	"github.com/shellgate/shellgate/policy"
)

// questions is an approver that answers with answer and keeps what it was
// asked.
type questions struct {
	mu     sync.Mutex
	asked  []shellgate.Question
	answer shellgate.Answer
}

func (q *questions) approve(_ context.Context, x shellgate.Question) shellgate.Answer {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.asked = append(q.asked, x)
	return q.answer
}

func (q *questions) count() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.asked)
}

// A connection to a domain not on the allow-list is asked about through the
// call's approver while the proxy holds it: yes lets it through (and, for
// the session, the next commands without asking), no refuses it with the
// proxy's message; approval mode never asks no one. Each connection is one
// audit line naming the session and the command.
//
// The domain is "localhost" and the allow-list holds 127.0.0.1, the address
// it resolves to: the name is what is asked about, and nothing leaves this
// machine.
func TestEgressAsksAboutUnlistedDomain(t *testing.T) {
	lane.Live(t)
	requireSandbox(t)
	host := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "hello from the host")
	}))
	defer host.Close()
	port := strconv.Itoa(host.Listener.Addr().(*net.TCPAddr).Port)
	// --noproxy '': localhost goes through the proxy despite NO_PROXY.
	fetch := "curl -sS --max-time 60 --noproxy '' -x \"$HTTP_PROXY\" -w ' (%{http_code})' http://localhost:" + port + "/"

	for _, tc := range []struct {
		name   string
		mode   policy.Mode
		answer shellgate.Answer
		asked  int // questions over the two commands
		want   string
		ok     bool
	}{
		{"allowed for the session", policy.ModeAuto, shellgate.AllowSession, 1, "hello from the host (200)", true},
		{"allowed once", policy.ModeUntrusted, shellgate.AllowOnce, 2, "hello from the host (200)", true},
		{"declined", policy.ModeAuto, shellgate.Deny, 2, `localhost is not on the network allow-list, and the user declined it; the user can allow it with --allow-domain localhost or [network] allow = ["localhost"]` + "\n (403)", false},
		{"no one could be asked", policy.ModeAuto, shellgate.NotAsked, 2, `shellgate: localhost is not on the network allow-list; the user can allow it with --allow-domain localhost or [network] allow = ["localhost"]` + "\n (403)", false},
		{"mode never", policy.ModeNever, shellgate.AllowSession, 0, `shellgate: localhost is not on the network allow-list; the user can allow it with --allow-domain localhost or [network] allow = ["localhost"]` + "\n (403)", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logPath := filepath.Join(t.TempDir(), "audit.jsonl")
			cfg := shellgate.Config{Root: newLab(t).root, Network: shellgate.NetworkConfig{Allow: []string{"127.0.0.1"}},
				Audit: shellgate.AuditConfig{Path: logPath}}
			cfg.Policy.Mode = tc.mode
			cfg.Policy.Allow = []string{"curl *"} // untrusted mode would ask about curl itself
			s := gate(t, cfg).NewSession(shellgate.SessionConfig{ID: "sess-1"})
			defer s.Close()
			q := &questions{answer: tc.answer}
			for i := range 2 {
				env := s.Run(context.Background(), shellgate.Request{Command: fetch}, shellgate.WithApprover(q.approve))
				out := env.Data.Stdout + env.Data.Stderr
				if env.Status != envelope.Success || !strings.Contains(out, tc.want) {
					t.Errorf("command %d: %s, want %q in:\n%s", i+1, env.Status, tc.want, env.Text)
				}
			}
			if n := q.count(); n != tc.asked {
				t.Errorf("asked %d times, want %d: %+v", n, tc.asked, q.asked)
			}
			for _, x := range q.asked {
				if x.Command != fetch || x.Domain != "localhost" || x.Port != host.Listener.Addr().(*net.TCPAddr).Port ||
					x.SessionKey != "network localhost" || !strings.Contains(x.Why(), "not on the network allow-list") {
					t.Errorf("question %+v, why %q", x, x.Why())
				}
			}

			// One egress line a connection, naming the session, the
			// command and its call (whose decision line is there too).
			calls := map[any]bool{}
			var egress []map[string]any
			for _, l := range auditLines(t, logPath) {
				switch l["event"] {
				case "decision":
					calls[l["call"]] = true
				case "egress":
					egress = append(egress, l)
				}
			}
			if len(egress) != 2 {
				t.Fatalf("%d egress lines, want 2: %v", len(egress), egress)
			}
			decision := map[bool]string{true: "allow", false: "deny"}[tc.ok]
			for _, l := range egress {
				e, _ := l["egress"].(map[string]any)
				if l["session"] != "sess-1" || l["command"] != fetch || !calls[l["call"]] || l["decision"] != decision ||
					e["domain"] != "localhost" || e["port"] != float64(host.Listener.Addr().(*net.TCPAddr).Port) {
					t.Errorf("egress line %v", l)
				}
				if sent, _ := e["sent_bytes"].(float64); tc.ok && (sent == 0 || e["received_bytes"].(float64) < float64(len("hello from the host"))) {
					t.Errorf("bytes: %v", e)
				}
			}
		})
	}
}

// Connections that come together to a domain not on the list are one
// question: the others wait for its answer, and "once" covers the rest of
// the command.
func TestEgressAsksOnceForConcurrentConnections(t *testing.T) {
	lane.Live(t)
	requireSandbox(t)
	host := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "hi")
	}))
	defer host.Close()
	url := "http://localhost:" + strconv.Itoa(host.Listener.Addr().(*net.TCPAddr).Port) + "/"
	fetch := "curl -sS --max-time 60 --noproxy '' -x \"$HTTP_PROXY\" " + url
	g := gate(t, shellgate.Config{Root: newLab(t).root, Network: shellgate.NetworkConfig{Allow: []string{"127.0.0.1"}}})
	q := &questions{answer: shellgate.AllowOnce}
	env := run(t, g, shellgate.Request{Command: fetch + " & " + fetch + " & " + fetch + "; wait"}, shellgate.WithApprover(q.approve))
	if env.Data.Stdout != "hihihi" || q.count() != 1 {
		t.Errorf("stdout %q after %d questions, want hihihi after one:\n%s", env.Data.Stdout, q.count(), env.Text)
	}
}

// The proxy finds the process that connects by the cgroup of the command
// that started it: a process an earlier command left running (cmd &) that
// connects while a later command runs is asked about under the earlier
// command's name, said to be left running, through the running command's
// approver.
func TestEgressQuestionNamesCommandsLeftRunning(t *testing.T) {
	lane.Live(t)
	requireSandbox(t)
	host := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "hello from the host") }))
	defer host.Close()
	port := strconv.Itoa(host.Listener.Addr().(*net.TCPAddr).Port)
	cfg := shellgate.Config{Root: newLab(t).root, Network: shellgate.NetworkConfig{Allow: []string{"127.0.0.1"}}}
	s := gate(t, cfg).NewSession(shellgate.SessionConfig{ID: "sess-1"})
	defer s.Close()
	left := "(sleep 1; curl -sS --max-time 60 --noproxy '' -x \"$HTTP_PROXY\" http://localhost:" + port + "/ > fetched.txt 2>&1) &"
	if env := s.Run(context.Background(), shellgate.Request{Command: left}); env.Status != envelope.Success || len(env.Data.BackgroundPIDs) == 0 {
		t.Fatalf("%s, background %v:\n%s", env.Status, env.Data.BackgroundPIDs, env.Text)
	}
	q := &questions{answer: shellgate.Deny}
	later := "sleep 4; echo built"
	if env := s.Run(context.Background(), shellgate.Request{Command: later}, shellgate.WithApprover(q.approve)); env.Status != envelope.Success {
		t.Fatalf("%s:\n%s", env.Status, env.Text)
	}
	if q.count() != 1 {
		t.Fatalf("asked %d times, want once: %+v", q.count(), q.asked)
	}
	if x := q.asked[0]; x.Domain != "localhost" || x.Command != left || !x.Left || len(x.Others) != 0 || !strings.Contains(x.Why(), "left running") {
		t.Errorf("question %+v: want the domain and, as the one connecting, left running, %q", x, left)
	}
}

// "Only this command" is the command's own processes: allowed once for a
// command that connects, a domain stays closed to a process an earlier
// command left running, which connects while it runs, and is asked about on
// its own: a command's left just before (before the proxy found the process
// by its cgroup, the answer let any connection through while the command
// ran), or more than 16 commands before, too old to be among those the
// proxy keeps (taken for not found, it rode on the running command's answer
// too).
func TestEgressOnceIsTheCommandsOwn(t *testing.T) {
	lane.Live(t)
	requireSandbox(t)
	host := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "hello from the host") }))
	defer host.Close()
	port := strconv.Itoa(host.Listener.Addr().(*net.TCPAddr).Port)
	fetch := "curl -sS --max-time 60 --noproxy '' -x \"$HTTP_PROXY\" -w ' (%{http_code})' http://localhost:" + port + "/"
	for _, c := range []struct {
		name, left, later string
		between           int // commands run between the left one and the later one
	}{
		{"left just before", "(sleep 2; " + fetch + " > fetched.txt 2>&1) &", fetch + "; sleep 5", 0},
		{"left 17 commands before", "(while [ ! -e go ]; do sleep 0.05; done; " + fetch + " > fetched.txt 2>&1) &",
			fetch + "; touch go; for i in $(seq 100); do [ -s fetched.txt ] && break; sleep 0.1; done", 17},
	} {
		t.Run(c.name, func(t *testing.T) {
			lab := newLab(t)
			cfg := shellgate.Config{Root: lab.root, Network: shellgate.NetworkConfig{Allow: []string{"127.0.0.1"}}}
			cfg.Policy.Allow = []string{"curl *"}
			s := gate(t, cfg).NewSession(shellgate.SessionConfig{ID: "sess-1"})
			defer s.Close()
			for i := range c.between + 1 {
				cmd := c.left
				if i > 0 {
					cmd = "echo " + strconv.Itoa(i)
				}
				if env := s.Run(context.Background(), shellgate.Request{Command: cmd}); env.Status != envelope.Success {
					t.Fatalf("%s:\n%s", env.Status, env.Text)
				}
			}
			// The later command's own fetch is allowed once; anything else declined.
			q := &questions{}
			approve := func(ctx context.Context, x shellgate.Question) shellgate.Answer {
				q.approve(ctx, x)
				if x.Command == c.later && !x.Left && len(x.Others) == 0 {
					return shellgate.AllowOnce
				}
				return shellgate.Deny
			}
			env := s.Run(context.Background(), shellgate.Request{Command: c.later}, shellgate.WithApprover(approve))
			if !strings.Contains(env.Data.Stdout, "hello from the host (200)") {
				t.Fatalf("the command's own fetch, allowed once: %s", env.Text)
			}
			fetched, err := os.ReadFile(filepath.Join(lab.root, "fetched.txt"))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(fetched), "hello from the host") || !strings.Contains(string(fetched), "(403)") {
				t.Errorf("the left process's fetch while the command allowed once ran: %q; want it refused (403)", fetched)
			}
			if q.count() != 2 {
				t.Errorf("asked %d times, want twice (each command's process once): %+v", q.count(), q.asked)
			}
		})
	}
}
