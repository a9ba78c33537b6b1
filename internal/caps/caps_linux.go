// Package caps takes capabilities away from the calling thread for good:
// a sandbox's commands start with none, whatever user they run as, and a
// thread that acts for them holds none either.
package caps

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Drop empties the calling thread's bounding, ambient and inheritable sets,
// so a command — even one running as root in the session's user namespace —
// starts with no capabilities and carries none it could be given back: it
// cannot undo a mount or leave the namespaces. The thread keeps its effective
// and permitted sets until exec (Clear takes them).
func Drop() error {
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("ambient: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var sets [2]unix.CapUserData
	if err := unix.Capget(&hdr, &sets[0]); err != nil {
		return fmt.Errorf("capget: %w", err)
	}
	if sets[0].Inheritable|sets[1].Inheritable != 0 {
		sets[0].Inheritable, sets[1].Inheritable = 0, 0
		if err := unix.Capset(&hdr, &sets[0]); err != nil {
			return fmt.Errorf("inheritable: %w", err)
		}
	}
	// Root in the session gains nothing at exec either, and no command can
	// change that.
	const secure = 1<<0 | 1<<1 | 1<<6 | 1<<7 // SECBIT_NOROOT, its lock, SECBIT_NO_CAP_AMBIENT_RAISE, its lock
	if err := unix.Prctl(unix.PR_SET_SECUREBITS, secure, 0, 0, 0); err != nil {
		return fmt.Errorf("securebits: %w", err)
	}
	last := lastCap()
	for c := 0; c <= last; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && err != unix.EINVAL {
			return fmt.Errorf("bounding set: %w", err)
		}
	}
	return nil
}

func lastCap() int {
	b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap")
	if n, nerr := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && nerr == nil {
		return n
	}
	return unix.CAP_LAST_CAP
}

// Clear empties the calling thread's effective, permitted and inheritable
// sets: it keeps no capability it held, as a command forked after Drop
// holds none after exec.
func Clear() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var none [2]unix.CapUserData
	return unix.Capset(&hdr, &none[0])
}
