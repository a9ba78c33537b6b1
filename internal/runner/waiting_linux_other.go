//go:build linux && !amd64

package runner

// waitCallsArch is empty: arm64 and the other newer architectures have only
// ppoll, pselect6 and epoll_pwait, and the older calls of 32-bit ones are not
// looked at.
var waitCallsArch = map[int]int{}
