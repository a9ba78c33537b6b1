package runner

import "golang.org/x/sys/unix"

// waitCallsArch are amd64's older calls that newer architectures lack.
var waitCallsArch = map[int]int{
	unix.SYS_POLL: callPoll, unix.SYS_SELECT: callSelect, unix.SYS_EPOLL_WAIT: callEpoll,
}
