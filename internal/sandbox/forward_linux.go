package sandbox

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/shellgate/shellgate/internal/relay"
	"github.com/shellgate/shellgate/internal/sandbox/helper"
	"golang.org/x/sys/unix"
)

// Host ports. A session with a network namespace of its own reaches nothing of
// the host, not even its loopback, where the user's dev server or database
// listens. For each of Spec.HostPorts the helper listens on the session's
// 127.0.0.1:PORT (and [::1]:PORT) before any command runs and hands the
// listening sockets to shellgate with its ready message. A socket stays in the
// namespace it was made in, whoever holds it, so shellgate accepts there and
// relays each connection to the host's 127.0.0.1:PORT (or [::1]:PORT).
//
// shellgate does not join the session's namespace to make the sockets itself
// (setns from a locked thread): the kernel lets a process join a network
// namespace only with CAP_SYS_ADMIN in its own user namespace too, which a user
// who is not root lacks — EPERM, whoever owns the session's namespaces. The
// helper is inside already, and a socket needs no capability (ports below 1024
// excepted, which a user who is not root cannot forward).

// The egress proxy (Spec.EgressPort) comes in the same way: the helper makes
// its listening sockets after those of the host ports, and shellgate hands
// each connection to them to Spec.EgressHandler instead of the host's port.
//
// The helper's side is package helper's listenHostPorts; this is shellgate's.

// forwardHostPorts starts relaying from the sockets the helper sent, fds[i]
// listening for ports[i]; the last egress of them are the proxy's, whose
// connections go to serve. It adds the forwarded ports to the report as
// host_ports ("3000,5432"), the proxy's address as egress, and what went
// wrong to its missing layers. The server owns the fds from here: they are
// closed when it stops, or now.
func forwardHostPorts(ports, fds []int, egress int, serve func(context.Context, net.Conn), r *Report) *relay.Server {
	if len(fds) == 0 {
		return nil
	}
	if len(fds) != len(ports) {
		helper.CloseAll(fds)
		r.Missing = append(r.Missing, fmt.Sprintf("%s: the session sent %d sockets for %d ports", LayerHostPorts, len(fds), len(ports)))
		return nil
	}
	srv := relay.New()
	var forwarded []string
	for i, fd := range fds {
		proxy := i >= len(fds)-egress
		if proxy && serve == nil { // a spec that came without its handler
			unix.Close(fd)
			continue
		}
		handle := srv.ToLoopback(ports[i])
		if proxy {
			handle = func(ctx context.Context, c *net.TCPConn) { serve(ctx, c) }
		}
		err := srv.ServeFD(fd, ports[i], handle)
		switch {
		case err != nil && proxy:
			r.Missing = append(r.Missing, fmt.Sprintf("%s: %v (commands have no way out)", LayerEgress, err))
		case err != nil:
			r.Missing = append(r.Missing, fmt.Sprintf("%s: port %d: %v", LayerHostPorts, ports[i], err))
		case proxy:
			r.Layers[LayerEgress] = "127.0.0.1:" + strconv.Itoa(ports[i])
		default:
			if p := strconv.Itoa(ports[i]); len(forwarded) == 0 || forwarded[len(forwarded)-1] != p {
				forwarded = append(forwarded, p)
			}
		}
	}
	if len(forwarded) > 0 {
		r.Layers[LayerHostPorts] = strings.Join(forwarded, ",")
	}
	return srv
}
