package relay_test

import (
	"context"
	"io"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/shellgate/shellgate/internal/loopback"
	"github.com/shellgate/shellgate/internal/relay"
	"go.uber.org/goleak"
)

// loopback.Listen's sockets, served by ServeFD, answer on 127.0.0.1 (and ::1
// where the loopback has it) and on nothing else; a port in use or out of
// range is an error; Stop closes them.
func TestListenLoopbackServeFD(t *testing.T) {
	defer goleak.VerifyNone(t)
	probe := listen(t)
	p := port(probe)
	if _, err := loopback.Listen(p); err == nil {
		t.Errorf("port %d in use: no error", p)
	}
	probe.Close()
	for _, bad := range []int{0, -1, 65536} {
		if fds, err := loopback.Listen(bad); err == nil {
			t.Errorf("port %d: sockets %v, want an error", bad, fds)
		}
	}
	fds, err := loopback.Listen(p)
	if err != nil {
		t.Fatal(err)
	}
	s := relay.New()
	defer s.Stop()
	for _, fd := range fds {
		if err := s.ServeFD(fd, p, func(_ context.Context, c *net.TCPConn) { c.Write([]byte("hello")) }); err != nil {
			t.Fatal(err)
		}
	}
	addrs := []string{"127.0.0.1"}
	if len(fds) == 2 {
		addrs = append(addrs, "::1")
	}
	for _, a := range addrs {
		c, err := net.DialTimeout("tcp", net.JoinHostPort(a, strconv.Itoa(p)), 5*time.Second)
		if err != nil {
			t.Fatalf("%s: %v", a, err)
		}
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		got, _ := io.ReadAll(c)
		c.Close()
		if string(got) != "hello" {
			t.Errorf("%s answered %q", a, got)
		}
	}
	if ifs, _ := net.InterfaceAddrs(); len(ifs) > 0 {
		for _, a := range ifs {
			ip, _, _ := net.ParseCIDR(a.String())
			if ip == nil || ip.IsLoopback() || ip.IsLinkLocalUnicast() {
				continue
			}
			if c, err := net.DialTimeout("tcp", net.JoinHostPort(ip.String(), strconv.Itoa(p)), time.Second); err == nil {
				c.Close()
				t.Errorf("listening on %s too", ip)
			}
		}
	}
	s.Stop()
	if c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(p), time.Second); err == nil {
		c.Close()
		t.Error("still accepting after Stop")
	}
}
