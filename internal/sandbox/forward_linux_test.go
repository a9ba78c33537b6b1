package sandbox

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shellgate/shellgate/internal/lane"
	"go.uber.org/goleak"
)

// hostServer listens on the host's 127.0.0.1 and, if echo, answers each line
// it reads with "host:" and the line; it records the connections it accepts.
type hostServer struct {
	ln       net.Listener
	port     int
	accepted chan net.Conn
}

func newHostServer(t *testing.T, echo bool) *hostServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	h := &hostServer{ln: ln, port: ln.Addr().(*net.TCPAddr).Port, accepted: make(chan net.Conn, 64)}
	done := make(chan struct{})
	var conns []net.Conn
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
			select {
			case h.accepted <- c:
			default: // enough recorded
			}
			if !echo {
				continue
			}
			go func() {
				sc := bufio.NewScanner(c)
				for sc.Scan() {
					fmt.Fprintf(c, "host:%s\n", sc.Text())
				}
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
	})
	return h
}

// talk is a command that connects to port on addr, sends a line and prints the
// answer.
func talk(addr string, port int) string {
	return fmt.Sprintf("exec 3<>/dev/tcp/%s/%d && echo ping >&3 && read -r -t 5 line <&3 && echo \"$line\"", addr, port)
}

// A host port in the list answers a command in the session, on 127.0.0.1, on
// ::1 where the session has IPv6, and over HTTP with curl; a port not in the
// list stays out of reach, and the report names what is forwarded.
func TestHostPorts(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	forwarded, other := newHostServer(t, true), newHostServer(t, true)
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "dev server at %s", r.URL.Path)
	}))
	defer web.Close()
	webPort := web.Listener.Addr().(*net.TCPAddr).Port

	spec := l.spec()
	spec.HostPorts = []int{forwarded.port, webPort}
	s := start(t, spec)
	if s.Report().Layers[LayerNet] != "netns" {
		t.Skipf("no network namespace here: %s", s.Report())
	}
	want := strconv.Itoa(forwarded.port) + "," + strconv.Itoa(webPort)
	if got := s.Report().Layers[LayerHostPorts]; got != want {
		t.Errorf("report: host_ports = %q, want %q (%s)", got, want, s.Report())
	}
	if got, code := run(t, s, l.root, talk("127.0.0.1", forwarded.port)); code != 0 || got != "host:ping\n" {
		t.Errorf("forwarded port over 127.0.0.1: exit %d, %q", code, got)
	}
	if out, _ := run(t, s, l.root, "cat /proc/net/if_inet6 2>/dev/null | grep -c ' lo$'"); strings.TrimSpace(out) != "0" {
		if got, code := run(t, s, l.root, talk("::1", forwarded.port)); code != 0 || got != "host:ping\n" {
			t.Errorf("forwarded port over ::1: exit %d, %q", code, got)
		}
	} else {
		t.Log("no IPv6 on the session's loopback: ::1 not tried")
	}
	if got, code := run(t, s, l.root, "curl -s --max-time 5 http://localhost:"+strconv.Itoa(webPort)+"/index"); code != 0 || got != "dev server at /index" {
		t.Errorf("curl to the forwarded dev server: exit %d, %q", code, got)
	}
	// Many connections at once, each its own relay.
	if got, _ := run(t, s, l.root, "for i in $(seq 20); do ("+talk("127.0.0.1", forwarded.port)+") & done; wait"); strings.Count(got, "host:ping") != 20 {
		t.Errorf("20 parallel connections: %q", got)
	}

	if got, code := run(t, s, l.root, talk("127.0.0.1", other.port)); code == 0 {
		t.Errorf("a port not in host_ports answered: %q", got)
	}
	select {
	case <-other.accepted:
		t.Error("the host's server on a port not in host_ports received a connection from the session")
	case <-time.After(100 * time.Millisecond):
	}
}

// Without host ports the host's loopback is out of reach, as before.
func TestHostPortsNone(t *testing.T) {
	l := newLab(t)
	h := newHostServer(t, true)
	s := start(t, l.spec())
	if s.Report().Layers[LayerNet] != "netns" {
		t.Skipf("no network namespace here: %s", s.Report())
	}
	if _, ok := s.Report().Layers[LayerHostPorts]; ok {
		t.Errorf("report names host ports without any: %s", s.Report())
	}
	if got, code := run(t, s, l.root, talk("127.0.0.1", h.port)); code == 0 {
		t.Errorf("the host's loopback answered without host_ports: %q", got)
	}
}

// A forwarded port whose host server is gone resets the command's connection at
// once; bad port numbers are reported, not fatal; with the network on nothing is
// forwarded.
func TestHostPortsEdges(t *testing.T) {
	l := newLab(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	closedPort := ln.Addr().(*net.TCPAddr).Port
	ln.Close()

	spec := l.spec()
	spec.HostPorts = []int{closedPort, 0, 70000}
	wantMissing := []string{"port 0: not a port number", "port 70000: not a port number"}
	if os.Getuid() != 0 {
		spec.HostPorts = append(spec.HostPorts, 80)
		wantMissing = append(wantMissing, "port 80: bind: permission denied (ports below 1024")
	}
	s := start(t, spec)
	if s.Report().Layers[LayerNet] != "netns" {
		t.Skipf("no network namespace here: %s", s.Report())
	}
	missing := strings.Join(s.Report().Missing, "\n")
	for _, p := range wantMissing {
		if !strings.Contains(missing, p) {
			t.Errorf("missing does not say %q:\n%s", p, missing)
		}
	}
	// A reset, not the read's 5 s timeout (which says nothing).
	got, code := run(t, s, l.root, talk("127.0.0.1", closedPort)+" 2>&1")
	if code == 0 || !strings.Contains(got, "reset") {
		t.Errorf("forwarded port with nothing on the host: exit %d, %q; want a reset", code, got)
	}

	spec.Network, spec.HostPorts = true, []int{closedPort}
	s2 := start(t, spec)
	if _, ok := s2.Report().Layers[LayerHostPorts]; ok || s2.fwd != nil {
		t.Errorf("host ports forwarded with the network on: %s", s2.Report())
	}
}

// Stopping the forwarder closes the listener in the session — the helper keeps
// no copy — and every relayed connection; Close leaves no goroutine behind.
func TestHostPortsStop(t *testing.T) {
	before := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, before) }) // the last cleanup
	l := newLab(t)
	h := newHostServer(t, false)
	spec := l.spec()
	spec.HostPorts = []int{h.port}
	s, err := Start(spec)
	if err != nil {
		t.Skipf("no sandbox on this machine: %v", err)
	}
	defer s.Close()
	if s.Report().Layers[LayerHostPorts] == "" {
		t.Skipf("no host ports here: %s", s.Report())
	}
	// A command holds a connection open in the background.
	run(t, s, l.root, "(exec 3<>/dev/tcp/127.0.0.1/"+strconv.Itoa(h.port)+"; echo held >&3; sleep 60 <&3) >/dev/null 2>&1 &")
	var held net.Conn
	select {
	case held = <-h.accepted:
	case <-time.After(5 * time.Second):
		t.Fatal("the background command's connection did not reach the host")
	}
	held.SetReadDeadline(time.Now().Add(5 * time.Second))
	line, err := bufio.NewReader(held).ReadString('\n')
	if line != "held\n" {
		t.Fatalf("host read %q, %v", line, err)
	}

	s.fwd.Stop()
	held.SetReadDeadline(time.Now().Add(3 * time.Second))
	if n, err := held.Read(make([]byte, 10)); err == nil || strings.Contains(err.Error(), "timeout") {
		t.Errorf("the relayed connection is still open after stop: %d, %v", n, err)
	}
	if got, _ := run(t, s, l.root, "exec 3<>/dev/tcp/127.0.0.1/"+strconv.Itoa(h.port)+" && echo connected"); got == "connected\n" {
		t.Error("the session's port still takes connections after stop")
	}
	must(t, s.Close())
}
