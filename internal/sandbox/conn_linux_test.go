package sandbox

import (
	"bufio"
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/shellgate/shellgate/internal/lane"
	"github.com/shellgate/shellgate/internal/runner"
)

// exited is closed once l has exited.
func exited(l runner.Launched) <-chan struct{} {
	ch := make(chan struct{})
	go func() { l.Wait(); close(ch) }()
	return ch
}

// sendSocket, run by python3 in the session, connects to the egress port,
// says "hold", and hands its socket over a unix socket to whoever connects
// there, keeping its own copy (argv: the unix socket's path).
const sendSocket = `
import socket, sys, time
c = socket.create_connection(("127.0.0.1", 3128)); c.sendall(b"hold\n")
u = socket.socket(socket.AF_UNIX); u.bind(sys.argv[1]); u.listen(1)
a, _ = u.accept(); socket.send_fds(a, [b"x"], [c.fileno()])
time.sleep(60)
`

// recvSocket receives it and keeps it, having said so in a file (argv: the
// unix socket's path, the file).
const recvSocket = `
import socket, sys, time
u = socket.socket(socket.AF_UNIX); u.connect(sys.argv[1])
_, fds, _, _ = socket.recv_fds(u, 1, 1); open(sys.argv[2], "w").write(str(len(fds)))
time.sleep(60)
`

// The proxy's connection is named after the command whose process holds
// its other end, and after none where processes of two commands hold it:
// one passed it to the other over a unix socket, and which of them speaks
// is not known. Before, the first command found in a map's order (either)
// was named.
func TestConnCommand(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	conns := make(chan net.Conn, 4)
	spec := l.spec()
	spec.EgressPort = 3128
	spec.EgressHandler = func(ctx context.Context, c net.Conn) {
		if line, err := bufio.NewReader(c).ReadString('\n'); err == nil && line == "hold\n" {
			conns <- c
		}
		<-ctx.Done()
		c.Close()
	}
	s := start(t, spec)
	if s.Report().Layers[LayerNet] != "netns" {
		t.Skipf("no network namespace here: %s", s.Report())
	}
	// One command's own connection, over each address of the loopback the
	// proxy listens on: a v6 socket's to 127.0.0.1 is in tcp6, v4-mapped.
	for _, c := range []struct{ name, cmd string }{
		{"127.0.0.1", "exec 3<>/dev/tcp/127.0.0.1/3128; echo hold >&3; sleep 60 <&3"},
		{"::1", "exec 3<>/dev/tcp/::1/3128; echo hold >&3; sleep 60 <&3"},
		{"::ffff:127.0.0.1", `exec python3 -c 'import socket, time; c = socket.socket(socket.AF_INET6); c.connect(("::ffff:127.0.0.1", 3128)); c.sendall(b"hold\n"); time.sleep(60)'`},
	} {
		own, out := launch(t, s, l.root, c.cmd)
		defer s.KillTree(own.PID(), syscall.SIGKILL)
		select {
		case conn := <-conns:
			if got := s.ConnCommand(conn); got != own.PID() {
				t.Errorf("a command's own connection over %s: named %d, want %d", c.name, got, own.PID())
			}
		case <-exited(own):
			t.Logf("no connection over %s here: %s", c.name, out())
		}
	}
	// One command's connection handed to another's process.
	sock, got := filepath.Join(l.root, "s"), filepath.Join(l.root, "got")
	sender, _ := launch(t, s, l.root, "exec python3 -c '"+sendSocket+"' "+sock)
	defer s.KillTree(sender.PID(), syscall.SIGKILL)
	c := <-conns
	receiver, _ := launch(t, s, l.root, "exec python3 -c '"+recvSocket+"' "+sock+" "+got)
	defer s.KillTree(receiver.PID(), syscall.SIGKILL)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if b, _ := os.ReadFile(got); string(b) == "1" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the socket was not handed over")
		}
	}
	if got := s.ConnCommand(c); got != 0 {
		t.Errorf("a connection two commands hold (sender %d, receiver %d): named %d, want none", sender.PID(), receiver.PID(), got)
	}
}

// ConnCommand's cost, paid once for each question the egress proxy asks: in
// a session where 10 other commands' processes hold 1000 descriptors each
// beside the one that holds the connection (at worst a read of each
// descriptor's link).
func BenchmarkConnCommand(b *testing.B) {
	root, err := os.MkdirTemp("/var/tmp", "shellgate-conn-bench-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(root) })
	conns := make(chan net.Conn, 1)
	s, err := Start(Spec{Writable: []string{root}, EgressPort: 3128, EgressHandler: func(ctx context.Context, c net.Conn) {
		if line, err := bufio.NewReader(c).ReadString('\n'); err == nil && line == "hold\n" {
			conns <- c
		}
		<-ctx.Done()
		c.Close()
	}})
	if err != nil {
		b.Skipf("no sandbox: %v", err)
	}
	b.Cleanup(func() { s.Close() })
	if s.Report().Layers[LayerNet] != "netns" {
		b.Skipf("no network namespace here: %s", s.Report())
	}
	sh := func(command string) runner.Launched {
		l, err := s.Launch([]string{"/bin/bash", "-c", command}, []string{"PATH=/usr/bin:/bin"}, root, nil, nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.KillTree(l.PID(), syscall.SIGKILL) })
		return l
	}
	for i := range 10 {
		ready := filepath.Join(root, "ready"+strconv.Itoa(i))
		sh(`exec python3 -c 'import os, sys, time; fds = [os.open("/dev/null", 0) for _ in range(1000)]; open(sys.argv[1], "w").close(); time.sleep(600)' ` + ready)
		for _, err := os.Stat(ready); err != nil; _, err = os.Stat(ready) {
			time.Sleep(10 * time.Millisecond)
		}
	}
	own := sh("exec 3<>/dev/tcp/127.0.0.1/3128; echo hold >&3; sleep 600 <&3")
	c := <-conns
	for b.Loop() {
		if got := s.ConnCommand(c); got != own.PID() {
			b.Fatalf("named %d, want %d", got, own.PID())
		}
	}
}
