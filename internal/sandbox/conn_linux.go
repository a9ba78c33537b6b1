package sandbox

import (
	"maps"
	"net"

	"github.com/shellgate/shellgate/internal/cgroup"
	"github.com/shellgate/shellgate/internal/hostscan"
)

// ConnCommand names the command whose process made c, a connection accepted
// on one of the session's sockets (the egress proxy's): the PID of the
// command, as its launch returned it, whose cgroup holds a process with the
// connection's other end open; 0 if none is found (that end is closed, or
// in flight over a unix socket, or the session keeps no cgroup for each
// command), or if processes of more than one command hold it: one sent it
// to another (SCM_RIGHTS), and which of them makes the connection is not
// known. Every process a command starts is born in its cgroup and none can
// leave it, so a process an earlier command left running is named as that
// command's, however it was started (setsid, nohup, a double fork).
func (s *Session) ConnCommand(c net.Conn) int {
	local, ok := c.LocalAddr().(*net.TCPAddr)
	peer, ok2 := c.RemoteAddr().(*net.TCPAddr)
	if !ok || !ok2 || s.helper == nil || s.helper.Process == nil {
		return 0
	}
	inode, ok := hostscan.SocketOf(s.NetPID(), peer.AddrPort(), local.AddrPort())
	if !ok {
		return 0
	}
	s.mu.Lock()
	trees := maps.Clone(s.trees)
	s.mu.Unlock()
	owner := 0
	for pid, tree := range trees {
		for _, p := range cgroup.Tree(tree, s.helper.Process.Pid) {
			if hostscan.HoldsSocket(p, inode) {
				if owner != 0 {
					return 0 // two commands' processes hold it (one sent it to the other)
				}
				owner = pid
				break
			}
		}
	}
	return owner
}
