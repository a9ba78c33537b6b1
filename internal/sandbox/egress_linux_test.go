package sandbox

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/shellgate/shellgate/internal/lane"
	"go.uber.org/goleak"
)

// The egress port comes into the session as host ports do, beside them: each
// connection a command makes to it goes to Spec.EgressHandler, outside the
// session; Close ends the handlers that still run, and no goroutine is left.
func TestEgressPort(t *testing.T) {
	lane.Live(t)
	before := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, before) }) // the last cleanup
	l := newLab(t)
	h := newHostServer(t, true)
	ended := make(chan string, 16)
	spec := l.spec()
	spec.HostPorts = []int{h.port}
	spec.EgressPort = 3128
	spec.EgressHandler = func(ctx context.Context, c net.Conn) {
		defer c.Close()
		line, err := bufio.NewReader(c).ReadString('\n')
		if err == nil && strings.HasPrefix(line, "hold") {
			ended <- "holding"
			<-ctx.Done() // until the session closes
			ended <- "held"
			return
		}
		fmt.Fprintf(c, "proxy:%s", line)
		ended <- "answered"
	}
	s, err := Start(spec)
	if err != nil {
		t.Skipf("no sandbox on this machine: %v", err)
	}
	defer s.Close()
	if s.Report().Layers[LayerNet] != "netns" {
		t.Skipf("no network namespace here: %s", s.Report())
	}
	if got := s.Report().Layers[LayerEgress]; got != "127.0.0.1:3128" {
		t.Errorf("report: egress = %q (%s)", got, s.Report())
	}
	if got := s.Report().Layers[LayerHostPorts]; got != strconv.Itoa(h.port) {
		t.Errorf("report: host_ports = %q, want only the host port", got)
	}
	if got, code := run(t, s, l.root, talk("127.0.0.1", 3128)); code != 0 || got != "proxy:ping\n" {
		t.Errorf("the egress port over 127.0.0.1: exit %d, %q", code, got)
	}
	if got, code := run(t, s, l.root, talk("127.0.0.1", h.port)); code != 0 || got != "host:ping\n" {
		t.Errorf("the host port beside it: exit %d, %q", code, got)
	}
	if <-ended != "answered" {
		t.Error("the handler did not answer")
	}
	run(t, s, l.root, "(exec 3<>/dev/tcp/127.0.0.1/3128; echo hold >&3; sleep 60 <&3) >/dev/null 2>&1 &")
	if got := <-ended; got != "holding" {
		t.Fatalf("the background connection: %q", got)
	}
	if err := s.Close(); err != nil {
		t.Error(err)
	}
	if got := <-ended; got != "held" {
		t.Errorf("after Close: %q, want the held connection's handler ended", got)
	}

	spec.Network = true
	s2 := start(t, spec)
	if _, ok := s2.Report().Layers[LayerEgress]; ok {
		t.Errorf("an egress port with the network on: %s", s2.Report())
	}
}
