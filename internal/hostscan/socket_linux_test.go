package hostscan

import (
	"net"
	"os"
	"testing"
)

// The client's end of a connection is found in its namespace by its port and
// the server's, and its holder by the socket's inode; the server's end is not
// the client's, nor does another process hold it.
func TestSocketOfConnection(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
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
	server, client := ln.Addr().(*net.TCPAddr).Port, c.LocalAddr().(*net.TCPAddr).Port
	inode, ok := SocketOf(os.Getpid(), client, server)
	if !ok {
		t.Fatalf("the client's socket %d → %d not found", client, server)
	}
	if !HoldsSocket(os.Getpid(), inode) {
		t.Errorf("this process does not hold socket %d, its own", inode)
	}
	if HoldsSocket(os.Getppid(), inode) {
		t.Errorf("the parent holds socket %d", inode)
	}
	if back, ok := SocketOf(0, server, client); !ok || back == inode {
		t.Errorf("the server's end: %d, %v; want another socket than the client's %d", back, ok, inode)
	}
	if _, ok := SocketOf(0, client, server+1); ok {
		t.Errorf("found a socket to a port nothing connected to")
	}
}
