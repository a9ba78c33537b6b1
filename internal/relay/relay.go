// Package relay serves the connections that arrive on listeners, each with a
// handler, until it is stopped: then the listeners and every connection close
// and no goroutine of it is left. The sandbox uses it to bring the host's
// loopback ports and the egress proxy into a session's network namespace.
package relay

import (
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"sync"
	"time"
)

// DialTimeout bounds the dial of the host's port for one connection.
const DialTimeout = 5 * time.Second

// Server serves listeners. The zero value is not usable: use New.
type Server struct {
	ctx    context.Context // cancelled by Stop: ends dials in progress
	cancel context.CancelFunc
	wg     sync.WaitGroup // the accept loops and handlers

	mu     sync.Mutex
	lns    []net.Listener
	conns  map[net.Conn]struct{}
	closed bool
}

// New returns a server with nothing to serve yet.
func New() *Server {
	s := &Server{conns: map[net.Conn]struct{}{}}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s
}

// Serve hands each TCP connection ln accepts to handle, in a goroutine of
// its own, with a context that Stop cancels; the connection is closed when
// handle returns. The server owns ln from here.
func (s *Server) Serve(ln net.Listener, handle func(context.Context, *net.TCPConn)) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		ln.Close()
		return
	}
	s.lns = append(s.lns, ln)
	s.wg.Add(1)
	s.mu.Unlock()
	go s.accept(ln, handle)
}

// ToLoopback is a handler that relays each connection to the host's
// loopback port: 127.0.0.1, else ::1.
func (s *Server) ToLoopback(port int) func(context.Context, *net.TCPConn) {
	return func(ctx context.Context, inner *net.TCPConn) {
		host, err := dialLoopback(ctx, port)
		if err != nil {
			// Nothing listens on the host: reset the connection, so the
			// client fails at once ("Connection reset by peer") instead of
			// reading an empty reply.
			inner.SetLinger(0)
			inner.Close()
			return
		}
		if !s.track(host) {
			host.Close()
			return
		}
		defer s.untrack(host)
		Splice(inner, host)
	}
}

func (s *Server) accept(ln net.Listener, handle func(context.Context, *net.TCPConn)) {
	defer s.wg.Done()
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) || s.ctx.Err() != nil {
				return
			}
			// Out of descriptors, or the like: wait instead of spinning.
			select {
			case <-s.ctx.Done():
				return
			case <-time.After(50 * time.Millisecond):
			}
			continue
		}
		tc, ok := c.(*net.TCPConn)
		if !ok || !s.track(c) {
			c.Close()
			if ok {
				return // stopped
			}
			continue
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer s.untrack(c)
			handle(s.ctx, tc)
		}()
	}
}

func dialLoopback(ctx context.Context, port int) (*net.TCPConn, error) {
	d := net.Dialer{Timeout: DialTimeout}
	var first error
	for _, addr := range []string{"127.0.0.1", "::1"} {
		c, err := d.DialContext(ctx, "tcp", net.JoinHostPort(addr, strconv.Itoa(port)))
		if err == nil {
			return c.(*net.TCPConn), nil
		}
		if first == nil {
			first = err
		}
	}
	return nil, first
}

// Splice copies a to b and b to a. The end of one direction (EOF) is passed
// on as a half-close, so a request-then-shutdown client still gets its
// answer; an error in either direction closes both. Both are closed when it
// returns.
func Splice(a, b *net.TCPConn) {
	done := make(chan struct{})
	half := func(dst, src *net.TCPConn) {
		if _, err := io.Copy(dst, src); err == nil {
			dst.CloseWrite()
		} else {
			a.Close()
			b.Close()
		}
	}
	go func() {
		defer close(done)
		half(b, a)
	}()
	half(a, b)
	<-done
	a.Close()
	b.Close()
}

// track records an open connection, so Stop can close it; false once stopped.
func (s *Server) track(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.conns[c] = struct{}{}
	return true
}

func (s *Server) untrack(c net.Conn) {
	c.Close()
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}

// Stop closes the listeners and every connection, and returns when every
// goroutine of the server has ended. A nil server does nothing.
func (s *Server) Stop() {
	if s == nil {
		return
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.cancel()
	for _, ln := range s.lns {
		ln.Close()
	}
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}
