//go:build unix

package shellgate

import "syscall"

// interruptGroup sends SIGINT to a process group, as Ctrl-C on a terminal would.
func interruptGroup(pgid int) error { return syscall.Kill(-pgid, syscall.SIGINT) }
