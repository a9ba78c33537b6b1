//go:build !linux

package sandbox

import "net"

// NetPID is 0: sessions have no network namespace of their own here; their
// commands share the host's.
func (*Session) NetPID() int { return 0 }

// ConnCommand is 0: which command made a connection is not known here.
func (*Session) ConnCommand(net.Conn) int { return 0 }
