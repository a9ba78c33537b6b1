//go:build !linux

package hostscan

import (
	"net"
	"strconv"
	"time"
)

// TCPListening reports whether something accepts connections on localhost:port;
// commands share the host's network here.
func TCPListening(_, port int) bool {
	c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), 200*time.Millisecond)
	if err != nil {
		return false
	}
	c.Close()
	return true
}
