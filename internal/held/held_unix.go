//go:build unix

package held

import (
	"os"
	"syscall"
)

// Supported: flock locks are released by the kernel when their owner exits.
const Supported = true

// lock takes a shared lock on f (an owner's), or tries for an exclusive one
// without waiting (a test for owners).
func lock(f *os.File, test bool) error {
	how := syscall.LOCK_SH
	if test {
		how = syscall.LOCK_EX | syscall.LOCK_NB
	}
	return syscall.Flock(int(f.Fd()), how)
}
