package relay

import (
	"context"
	"net"
	"os"
	"strconv"
)

// ServeFD serves the listening socket fd of port, as Serve does; the server
// owns fd from here: closed when it stops, or now if it is no listener.
func (s *Server) ServeFD(fd, port int, handle func(context.Context, *net.TCPConn)) error {
	file := os.NewFile(uintptr(fd), "port-"+strconv.Itoa(port))
	ln, err := net.FileListener(file) // a duplicate of fd
	file.Close()
	if err != nil {
		return err
	}
	s.Serve(ln, handle)
	return nil
}
