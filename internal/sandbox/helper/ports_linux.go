package helper

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/shellgate/shellgate/internal/loopback"
	"golang.org/x/sys/unix"
)

// Host ports and the egress proxy: the helper makes their listening sockets
// in the session's network namespace and hands them to shellgate, which
// serves them (see package sandbox's forward_linux.go).

// listenHostPorts runs in the helper: it makes the listening sockets of
// spec.HostPorts, then of spec.EgressPort, in the session's network
// namespace, notes their ports in ready.Ports (and how many are the
// proxy's in ready.Egress) and the ports it could not listen on in
// ready.Missing, and returns the sockets. With the host's network there is
// nothing to forward.
func listenHostPorts(spec *Spec, ready *Message) []int {
	if spec.Network || len(spec.HostPorts) == 0 && spec.EgressPort == 0 {
		return nil
	}
	if ready.Layers[LayerNet] != "netns" {
		if len(spec.HostPorts) > 0 {
			ready.Missing = append(ready.Missing, LayerHostPorts+": the session has no loopback of its own to forward them into")
		}
		if spec.EgressPort != 0 {
			ready.Missing = append(ready.Missing, LayerEgress+": the session has no network of its own, so the allow-list is not enforced")
		}
		return nil
	}
	var fds []int
	for i, port := range spec.HostPorts {
		if i >= MaxHostPorts {
			ready.Missing = append(ready.Missing, fmt.Sprintf("%s: more than %d ports; %d and later are not forwarded", LayerHostPorts, MaxHostPorts, port))
			break
		}
		got, err := loopback.Listen(port)
		if err != nil {
			why := err.Error()
			if errors.Is(err, unix.EACCES) {
				why += " (ports below 1024 need privileges the session does not have)"
			}
			ready.Missing = append(ready.Missing, fmt.Sprintf("%s: port %d: %s", LayerHostPorts, port, why))
			continue
		}
		fds = append(fds, got...)
		for range got {
			ready.Ports = append(ready.Ports, port)
		}
	}
	if spec.EgressPort == 0 {
		return fds
	}
	got, err := loopback.Listen(spec.EgressPort)
	if err != nil {
		ready.Missing = append(ready.Missing, fmt.Sprintf("%s: port %d: %v (commands have no way out)", LayerEgress, spec.EgressPort, err))
	}
	for _, fd := range got {
		fds = append(fds, fd)
		ready.Ports = append(ready.Ports, spec.EgressPort)
		ready.Egress++
	}
	return fds
}

// UnixRights is the ancillary data that sends fds; none for none.
func UnixRights(fds []int) []byte {
	if len(fds) == 0 {
		return nil
	}
	return syscall.UnixRights(fds...)
}

// CloseAll closes fds.
func CloseAll(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}
