package hostscan

import (
	"net"
	"os"
	"testing"
)

// A port listens while a server holds it, in this process's namespace named
// as our own (0) or by PID, and not once it has closed.
func TestTCPListening(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	for _, pid := range []int{0, os.Getpid()} {
		if !TCPListening(pid, port) {
			t.Errorf("pid %d, port %d: a listening server not seen", pid, port)
		}
	}
	ln.Close()
	for _, pid := range []int{0, os.Getpid()} {
		if TCPListening(pid, port) {
			t.Errorf("pid %d, port %d: seen listening after the server closed", pid, port)
		}
	}
}
