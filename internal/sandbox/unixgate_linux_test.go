package sandbox

import (
	"net"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/shellgate/shellgate/internal/unixgate"
)

// A pathname unix socket a host program binds after the session started —
// in the root, or in a directory the view shows read-only — is out of a
// command's reach, while a server the command starts itself in the root
// answers, by stream and by datagram. The report says what guards them.
func TestHostUnixSocketsBoundLater(t *testing.T) {
	l := newLab(t)
	s := start(t, l.spec())
	how := s.Report().Layers[unixgate.Layer]
	if how != "supervisor" && how != "landlock-v9" {
		t.Fatalf("unix sockets unguarded: %s", s.Report())
	}
	var hits atomic.Int32
	for _, path := range []string{filepath.Join(l.root, "late.sock"), filepath.Join(l.shared, "late.sock")} {
		ln, err := net.Listen("unix", path)
		must(t, err)
		defer ln.Close()
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				hits.Add(1)
				c.Close()
			}
		}()
	}
	script := `import socket, sys
for path in sys.argv[1:]:
    try:
        socket.socket(socket.AF_UNIX).connect(path)
        print("reached", path)
    except OSError as e:
        print("refused", e.errno)
for typ in (socket.SOCK_STREAM, socket.SOCK_DGRAM):
    srv = socket.socket(socket.AF_UNIX, typ)
    srv.bind("own.sock")
    c = socket.socket(socket.AF_UNIX, typ)
    if typ == socket.SOCK_STREAM:
        srv.listen(1)
        c.connect("own.sock")
        c.sendall(b"own")
        print(srv.accept()[0].recv(3).decode())
    else:
        c.sendto(b"own", "own.sock")
        print(srv.recv(3).decode())
    srv.close()
    __import__("os").unlink("own.sock")
`
	got, code := run(t, s, l.root, "python3 -c '"+script+"' late.sock "+filepath.Join(l.shared, "late.sock"))
	if want := "refused 13\nrefused 13\nown\nown\n"; code != 0 || got != want {
		t.Errorf("got %d %q, want %q", code, got, want)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the host's sockets were reached %d times", n)
	}
}

// With the host's network, the host's sockets are the session's, as the
// user asked: the report says so, as it does of the network, unless
// Landlock guards them.
func TestHostNetworkUnixSocketsReported(t *testing.T) {
	l := newLab(t)
	spec := l.spec()
	spec.Network = true
	r := start(t, spec).Report()
	if how := r.Layers[unixgate.Layer]; how != "landlock-v9" && how != "host" || strings.Contains(strings.Join(r.Missing, "\n"), unixgate.Layer) {
		t.Errorf("report: %s", r)
	}
}
