package sandbox

import (
	"net"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"github.com/shellgate/shellgate/internal/unixgate"
)

// Each Landlock ABI's handled rights are the ones it added, by go-landlock's
// names; from ABI 9 RESOLVE_UNIX is handled and no rule of the ruleset
// grants it, so a command reaches only the unix sockets of its own domain.
func TestHandledFS(t *testing.T) {
	v1 := uint64(llsys.AccessFSExecute | llsys.AccessFSWriteFile | llsys.AccessFSReadFile | llsys.AccessFSReadDir |
		llsys.AccessFSRemoveDir | llsys.AccessFSRemoveFile | llsys.AccessFSMakeChar | llsys.AccessFSMakeDir |
		llsys.AccessFSMakeReg | llsys.AccessFSMakeSock | llsys.AccessFSMakeFifo | llsys.AccessFSMakeBlock | llsys.AccessFSMakeSym)
	v2 := v1 | llsys.AccessFSRefer
	v3 := v2 | llsys.AccessFSTruncate
	v5 := v3 | llsys.AccessFSIoctlDev
	v9 := v5 | llsys.AccessFSResolveUnix
	for abi, want := range map[int]uint64{0: v1, 1: v1, 2: v2, 3: v3, 4: v3, 5: v5, 6: v5, 7: v5, 8: v5, 9: v9, 12: v9} {
		if got := handledFS(abi); got != want {
			t.Errorf("handledFS(%d) = %#x, want %#x", abi, got, want)
		}
	}
	for name, granted := range map[string]uint64{"read": fsRead, "write": fsWrite, "file": fsFile, "dirs": fsRead | fsWrite | llsys.AccessFSRefer, "devices": fsRead | fsWrite | llsys.AccessFSIoctlDev} {
		if granted&llsys.AccessFSResolveUnix != 0 {
			t.Errorf("the %s rule grants RESOLVE_UNIX: host sockets would be reachable under it", name)
		}
	}
}

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
