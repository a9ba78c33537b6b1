package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Host ports. A session with a network namespace of its own reaches nothing of
// the host, not even its loopback, where the user's dev server or database
// listens. For each of Spec.HostPorts the helper listens on the session's
// 127.0.0.1:PORT (and [::1]:PORT) before any command runs and hands the
// listening sockets to shellgate with its ready message. A socket stays in the
// namespace it was made in, whoever holds it, so shellgate accepts there and
// relays each connection to the host's 127.0.0.1:PORT (or [::1]:PORT).
//
// shellgate does not join the session's namespace to make the sockets itself
// (setns from a locked thread): the kernel lets a process join a network
// namespace only with CAP_SYS_ADMIN in its own user namespace too, which a user
// who is not root lacks — EPERM, whoever owns the session's namespaces. The
// helper is inside already, and a socket needs no capability (ports below 1024
// excepted, which a user who is not root cannot forward).

// The egress proxy (Spec.EgressPort) comes in the same way: the helper makes
// its listening sockets after those of the host ports, and shellgate hands
// each connection to them to Spec.EgressHandler instead of the host's port.

// listenHostPorts runs in the helper: it makes the listening sockets of
// spec.HostPorts, then of spec.EgressPort, in the session's network
// namespace, notes their ports in ready.Ports (and how many are the
// proxy's in ready.Egress) and the ports it could not listen on in
// ready.Missing, and returns the sockets. With the host's network there is
// nothing to forward.
func listenHostPorts(spec *Spec, ready *message) []int {
	if spec.Network || len(spec.HostPorts) == 0 && spec.EgressPort == 0 {
		return nil
	}
	if ready.Layers[LayerNet] != "netns" {
		if len(spec.HostPorts) > 0 {
			ready.Missing = append(ready.Missing, LayerHostPorts+": the session has no loopback of its own to forward them into")
		}
		if spec.EgressPort != 0 {
			ready.Missing = append(ready.Missing, LayerEgress+": the session has no network of its own, so the allow-list is not enforced")
		}
		return nil
	}
	fds := listenPorts(spec, ready)
	if spec.EgressPort != 0 {
		fd, err := listenLoopback(unix.AF_INET, spec.EgressPort)
		if err != nil {
			ready.Missing = append(ready.Missing, fmt.Sprintf("%s: port %d: %v (commands have no way out)", LayerEgress, spec.EgressPort, err))
			return fds
		}
		fds = append(fds, fd)
		ready.Ports = append(ready.Ports, spec.EgressPort)
		ready.Egress++
		if fd6, err := listenLoopback(unix.AF_INET6, spec.EgressPort); err == nil {
			fds = append(fds, fd6)
			ready.Ports = append(ready.Ports, spec.EgressPort)
			ready.Egress++
		}
	}
	return fds
}

// listenPorts makes the listening sockets of spec.HostPorts.
func listenPorts(spec *Spec, ready *message) []int {
	var fds []int
	for i, port := range spec.HostPorts {
		if i >= MaxHostPorts {
			ready.Missing = append(ready.Missing, fmt.Sprintf("%s: more than %d ports; %d and later are not forwarded", LayerHostPorts, MaxHostPorts, port))
			break
		}
		fd, err := listenLoopback(unix.AF_INET, port)
		if err != nil {
			why := err.Error()
			if errors.Is(err, unix.EACCES) {
				why += " (ports below 1024 need privileges the session does not have)"
			}
			ready.Missing = append(ready.Missing, fmt.Sprintf("%s: port %d: %s", LayerHostPorts, port, why))
			continue
		}
		fds = append(fds, fd)
		ready.Ports = append(ready.Ports, port)
		// IPv6 where the session's loopback has it: clients that resolve
		// localhost to ::1 first (Node, Python's asyncio) connect there.
		if fd6, err := listenLoopback(unix.AF_INET6, port); err == nil {
			fds = append(fds, fd6)
			ready.Ports = append(ready.Ports, port)
		}
	}
	return fds
}

// listenLoopback makes a socket listening on the loopback address of family.
func listenLoopback(family, port int) (int, error) {
	if port < 1 || port > 65535 {
		return -1, fmt.Errorf("not a port number")
	}
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("socket: %w", err)
	}
	var sa unix.Sockaddr = &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}
	if family == unix.AF_INET6 {
		unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_V6ONLY, 1)
		sa = &unix.SockaddrInet6{Port: port, Addr: [16]byte{15: 1}}
	}
	if err := unix.Bind(fd, sa); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("bind: %w", err)
	}
	if err := unix.Listen(fd, unix.SOMAXCONN); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("listen: %w", err)
	}
	return fd, nil
}

func unixRights(fds []int) []byte {
	if len(fds) == 0 {
		return nil
	}
	return syscall.UnixRights(fds...)
}

func closeAll(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}

// forwarder relays the connections made to the session's listening sockets to
// the host's loopback. stop ends it: the listeners and every connection close.
type forwarder struct {
	ctx    context.Context // cancelled by stop: ends dials in progress
	cancel context.CancelFunc
	lns    []net.Listener
	wg     sync.WaitGroup // the accept loops and relays

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
}

// hostDialTimeout bounds the dial of the host's port for one connection.
const hostDialTimeout = 5 * time.Second

// forwardHostPorts starts relaying from the sockets the helper sent, fds[i]
// listening for ports[i]; the last egress of them are the proxy's, whose
// connections go to serve. It adds the forwarded ports to the report as
// host_ports ("3000,5432"), the proxy's address as egress, and what went
// wrong to its missing layers. The forwarder owns the fds from here: they
// are closed when it stops, or now.
func forwardHostPorts(ports, fds []int, egress int, serve func(context.Context, net.Conn), r *Report) *forwarder {
	if len(fds) == 0 {
		return nil
	}
	if len(fds) != len(ports) {
		closeAll(fds)
		r.Missing = append(r.Missing, fmt.Sprintf("%s: the session sent %d sockets for %d ports", LayerHostPorts, len(fds), len(ports)))
		return nil
	}
	f := &forwarder{conns: map[net.Conn]struct{}{}}
	f.ctx, f.cancel = context.WithCancel(context.Background())
	var forwarded []string
	for i, fd := range fds {
		if proxy := i >= len(fds)-egress; proxy {
			if serve == nil { // a spec that came without its handler
				unix.Close(fd)
				continue
			}
			file := os.NewFile(uintptr(fd), "egress-"+strconv.Itoa(ports[i]))
			ln, err := net.FileListener(file)
			file.Close()
			if err != nil {
				r.Missing = append(r.Missing, fmt.Sprintf("%s: %v (commands have no way out)", LayerEgress, err))
				continue
			}
			f.lns = append(f.lns, ln)
			r.Layers[LayerEgress] = "127.0.0.1:" + strconv.Itoa(ports[i])
			f.wg.Add(1)
			go f.accept(ln, func(c *net.TCPConn) { serve(f.ctx, c) })
			continue
		}
		file := os.NewFile(uintptr(fd), "host-port-"+strconv.Itoa(ports[i]))
		ln, err := net.FileListener(file) // a duplicate of fd
		file.Close()
		if err != nil {
			r.Missing = append(r.Missing, fmt.Sprintf("%s: port %d: %v", LayerHostPorts, ports[i], err))
			continue
		}
		f.lns = append(f.lns, ln)
		if p := strconv.Itoa(ports[i]); len(forwarded) == 0 || forwarded[len(forwarded)-1] != p {
			forwarded = append(forwarded, p)
		}
		f.wg.Add(1)
		port := ports[i]
		go f.accept(ln, func(c *net.TCPConn) { f.relay(c, port) })
	}
	if len(forwarded) > 0 {
		r.Layers[LayerHostPorts] = strings.Join(forwarded, ",")
	}
	return f
}

// accept hands each connection a command makes to the listener to serve:
// a relay to the host's port, or the egress proxy.
func (f *forwarder) accept(ln net.Listener, serve func(*net.TCPConn)) {
	defer f.wg.Done()
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) || f.ctx.Err() != nil {
				return
			}
			// Out of descriptors, or the like: wait instead of spinning.
			select {
			case <-f.ctx.Done():
				return
			case <-time.After(50 * time.Millisecond):
			}
			continue
		}
		if !f.track(c) {
			c.Close()
			return
		}
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			defer f.untrack(c)
			serve(c.(*net.TCPConn))
		}()
	}
}

// relay connects a command's connection to the host's port and copies both
// ways until both sides are done, or either fails.
func (f *forwarder) relay(inner *net.TCPConn, port int) {
	host, err := dialHost(f.ctx, port)
	if err != nil {
		// Nothing listens on the host: reset the command's connection, so it
		// fails at once ("Connection reset by peer") instead of reading an
		// empty reply.
		inner.SetLinger(0)
		inner.Close()
		return
	}
	if !f.track(host) {
		host.Close()
		inner.Close()
		return
	}
	defer f.untrack(host)
	splice(inner, host)
}

// dialHost connects to the host's loopback on port: 127.0.0.1, else ::1.
func dialHost(ctx context.Context, port int) (*net.TCPConn, error) {
	d := net.Dialer{Timeout: hostDialTimeout}
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

// splice copies a to b and b to a. The end of one direction (EOF) is passed on
// as a half-close, so a request-then-shutdown client still gets its answer;
// an error in either direction closes both. Both are closed when it returns.
func splice(a, b *net.TCPConn) {
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

// track records an open connection, so stop can close it; false once stopped.
func (f *forwarder) track(c net.Conn) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return false
	}
	f.conns[c] = struct{}{}
	return true
}

func (f *forwarder) untrack(c net.Conn) {
	c.Close()
	f.mu.Lock()
	delete(f.conns, c)
	f.mu.Unlock()
}

// stop closes the listeners and every connection, and returns when every
// goroutine of the forwarder has ended. A nil forwarder does nothing.
func (f *forwarder) stop() {
	if f == nil {
		return
	}
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return
	}
	f.closed = true
	f.cancel()
	for _, ln := range f.lns {
		ln.Close()
	}
	for c := range f.conns {
		c.Close()
	}
	f.mu.Unlock()
	f.wg.Wait()
}
