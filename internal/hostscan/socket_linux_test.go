package hostscan

import (
	"encoding/binary"
	"net"
	"net/netip"
	"os"
	"strconv"
	"syscall"
	"testing"
)

// addrs is the client's end of c: its own address, and its peer's.
func addrs(c net.Conn) (local, peer netip.AddrPort) {
	return c.LocalAddr().(*net.TCPAddr).AddrPort(), c.RemoteAddr().(*net.TCPAddr).AddrPort()
}

// inodeOf is the inode of c's socket, as its descriptor has it.
func inodeOf(t *testing.T, c net.Conn) uint64 {
	t.Helper()
	raw, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var st syscall.Stat_t
	raw.Control(func(fd uintptr) { err = syscall.Fstat(int(fd), &st) })
	if err != nil {
		t.Fatal(err)
	}
	return st.Ino
}

// The client's end of a connection is found in its namespace by its address
// and the server's, and its holder by the socket's inode; the server's end is
// not the client's, nor does another process hold it. Two connections with
// the same two ports from two loopback addresses are two sockets: found by
// the ports alone, a process that copied another's port (it reads
// /proc/net/tcp) was taken for that other's.
func TestSocketOfConnection(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	server := ln.Addr().(*net.TCPAddr).Port
	ln2, err := net.Listen("tcp", net.JoinHostPort("127.0.0.2", strconv.Itoa(server)))
	if err != nil {
		t.Skipf("a second loopback address on the same port: %v", err)
	}
	defer ln2.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	client := c.LocalAddr().(*net.TCPAddr).Port
	// The same two ports, from and to 127.0.0.2, listed first or not.
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2), Port: client}}
	c2, err := d.Dial("tcp", ln2.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	for _, conn := range []net.Conn{c, c2} {
		local, peer := addrs(conn)
		inode, ok := SocketOf(os.Getpid(), local, peer)
		if want := inodeOf(t, conn); !ok || inode != want {
			t.Errorf("the client's socket %v → %v: %d, %v; want its own, %d", local, peer, inode, ok, want)
		}
		if !HoldsSocket(os.Getpid(), inode) {
			t.Errorf("this process does not hold socket %d, its own", inode)
		}
		if HoldsSocket(os.Getppid(), inode) {
			t.Errorf("the parent holds socket %d", inode)
		}
		if back, ok := SocketOf(0, peer, local); conn == c && (!ok || back == inode) {
			t.Errorf("the server's end: %d, %v; want another socket than the client's %d", back, ok, inode)
		}
		if _, ok := SocketOf(0, local, netip.AddrPortFrom(peer.Addr(), peer.Port()+1)); ok {
			t.Errorf("found a socket to a port nothing connected to")
		}
	}
}

// /proc/net/tcp and tcp6 addresses, as a little-endian kernel prints them.
func TestParseAddr(t *testing.T) {
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		t.Skip("the rows are a little-endian machine's")
	}
	for _, c := range []struct{ in, want string }{
		{"0100007F:1F90", "127.0.0.1:8080"},
		{"0200007F:0050", "127.0.0.2:80"},
		{"00000000000000000000000001000000:0016", "[::1]:22"},
		{"0000000000000000FFFF00000100007F:0050", "127.0.0.1:80"}, // v4-mapped
	} {
		got, ok := parseAddr(c.in)
		if !ok || got.String() != c.want {
			t.Errorf("%s: %v %v; want %s", c.in, got, ok, c.want)
		}
	}
	for _, bad := range []string{"", "0100007F", "0100007:0050", "0100007F:XYZ"} {
		if got, ok := parseAddr(bad); ok {
			t.Errorf("%q: %v, want not an address", bad, got)
		}
	}
}
