// Package loopback makes listening sockets on the loopback of the calling
// thread's network namespace as plain descriptors, without package net: the
// sandbox's helper makes them in the session's namespace (see package
// sandbox's host ports), and shellgate serves them (relay.Server.ServeFD).
package loopback

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// Listen makes sockets listening on port of the loopback of the
// calling thread's network namespace: 127.0.0.1, then ::1 where it has IPv6
// (clients that resolve localhost to ::1 first, as Node and Python's asyncio
// do, connect there). The caller owns them; a socket stays in the namespace
// it was made in, whoever holds it later.
func Listen(port int) ([]int, error) {
	fd, err := listen(unix.AF_INET, port)
	if err != nil {
		return nil, err
	}
	fds := []int{fd}
	if fd6, err := listen(unix.AF_INET6, port); err == nil {
		fds = append(fds, fd6)
	}
	return fds, nil
}

func listen(family, port int) (int, error) {
	if port < 1 || port > 65535 {
		return -1, fmt.Errorf("not a port number")
	}
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("socket: %w", err)
	}
	var sa unix.Sockaddr = &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}
	if family == unix.AF_INET6 {
		unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_V6ONLY, 1)
		sa = &unix.SockaddrInet6{Port: port, Addr: [16]byte{15: 1}}
	}
	if err := unix.Bind(fd, sa); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("bind: %w", err)
	}
	if err := unix.Listen(fd, unix.SOMAXCONN); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("listen: %w", err)
	}
	return fd, nil
}
