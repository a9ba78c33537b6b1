package relay_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/shellgate/shellgate/internal/relay"
	"go.uber.org/goleak"
)

func listen(t *testing.T) *net.TCPListener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln.(*net.TCPListener)
}

func port(ln net.Listener) int { return ln.Addr().(*net.TCPAddr).Port }

// A client's request and its half-close reach the host's service, whose
// answer comes back; Stop then ends a held connection and every goroutine.
func TestToLoopback(t *testing.T) {
	defer goleak.VerifyNone(t)
	host := listen(t)
	defer host.Close()
	accepted := make(chan struct{}, 2)
	go func() {
		for {
			c, err := host.Accept()
			if err != nil {
				return
			}
			accepted <- struct{}{}
			go func() {
				defer c.Close()
				req, _ := io.ReadAll(c) // until the client's half-close
				c.Write([]byte("got " + string(req)))
			}()
		}
	}()
	s := relay.New()
	front := listen(t)
	s.Serve(front, s.ToLoopback(port(host)))

	c, err := net.Dial("tcp", front.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c.Write([]byte("ping"))
	c.(*net.TCPConn).CloseWrite()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	got, err := io.ReadAll(c)
	c.Close()
	if string(got) != "got ping" || err != nil {
		t.Fatalf("relayed answer %q, %v", got, err)
	}

	held, err := net.Dial("tcp", front.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	<-accepted // the first connection's
	held.Write([]byte("x"))
	<-accepted // the relay has dialled the host for the held one
	s.Stop()
	held.SetReadDeadline(time.Now().Add(3 * time.Second))
	if _, err := bufio.NewReader(held).ReadByte(); err == nil || strings.Contains(err.Error(), "timeout") {
		t.Errorf("a held connection is still open after Stop: %v", err)
	}
	if _, err := net.DialTimeout("tcp", front.Addr().String(), time.Second); err == nil {
		t.Error("the listener still accepts after Stop")
	}
}

// With nothing listening on the host's port, the client is reset at once
// rather than left reading an empty reply.
func TestToLoopbackNothingListens(t *testing.T) {
	defer goleak.VerifyNone(t)
	front := listen(t) // first, so it cannot take the closed port
	closed := listen(t)
	p := port(closed)
	closed.Close()
	s := relay.New()
	defer s.Stop()
	s.Serve(front, s.ToLoopback(p))
	// The reset may come before the dial has returned, or at the first read.
	c, err := net.Dial("tcp", front.Addr().String())
	if err == nil {
		defer c.Close()
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, err = c.Read(make([]byte, 1))
	}
	if err == nil || !strings.Contains(err.Error(), "reset") {
		t.Errorf("read = %v, want a connection reset", err)
	}
}

// Serve after Stop closes the listener it is given.
func TestServeAfterStop(t *testing.T) {
	defer goleak.VerifyNone(t)
	s := relay.New()
	s.Stop()
	ln := listen(t)
	s.Serve(ln, func(context.Context, *net.TCPConn) {})
	if _, err := ln.Accept(); err == nil {
		t.Error("a listener given after Stop is still open")
	}
}
