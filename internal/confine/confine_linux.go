// Package confine restricts the calling thread, and every program it
// executes, with what needs no namespace: no capabilities, a keyring of its
// own, no privilege gained at exec, the seccomp filter, Landlock and the
// supervisor (host unix sockets, writes through hard links). A sandbox
// session's launcher thread applies it before it forks commands; where the
// kernel makes no user namespace, this executable started as the wrapper
// (Argv) applies it to itself, then executes the command.
package confine

import (
	"errors"
	"fmt"
	"time"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"github.com/shellgate/shellgate/internal/caps"
	"github.com/shellgate/shellgate/internal/copyup"
	"github.com/shellgate/shellgate/internal/fsrules"
	"github.com/shellgate/shellgate/internal/seccomp"
	"github.com/shellgate/shellgate/internal/supervisor"
	"golang.org/x/sys/unix"
)

// Layer names, as a sandbox's report gives them.
const (
	LayerFS      = "fs"      // writes confined: "landlock-vN"
	LayerSeccomp = "seccomp" // "filter"
)

// Thread is what Self restricts the calling thread with.
type Thread struct {
	Ruleset int // the Landlock ruleset (fsrules.Build); -1: none
	ABI     int // its Landlock ABI
	// NoSupervisor says why no supervisor can keep host unix sockets out
	// (unixgate), if so.
	NoSupervisor string
	Opener       *copyup.Opener // performs write opens through hard links; nil: none
}

// Applied says what Self put in place.
type Applied struct {
	Landlock int  // the ABI of the domain the thread is in; 0: none
	Seccomp  bool // the seccomp filter: no vsock sockets, no io_uring
	supervisor.Guard
}

// Self confines the calling thread, which must stay locked to its goroutine,
// and so every program it starts. The error says, per layer, what is
// missing and why; the rest applies without it.
func Self(t Thread) (Applied, error) {
	var a Applied
	var errs []error
	// Without capabilities (a user other than root, outside a namespace)
	// there are none to give up, and no right to change the bounding set.
	if err := caps.Drop(); err != nil && holdsCaps() {
		errs = append(errs, fmt.Errorf("capabilities: %w", err))
	}
	// A session keyring of its own: what the user's other programs keep in
	// theirs (credential caches, Kerberos tickets) is not the commands' to read.
	if _, _, errno := unix.Syscall(unix.SYS_KEYCTL, unix.KEYCTL_JOIN_SESSION_KEYRING, 0, 0); errno != 0 {
		errs = append(errs, fmt.Errorf("keyring: the user's keyring stays readable (%s)", unix.ErrnoName(errno)))
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		// Neither seccomp nor Landlock nor the supervisor without it.
		return a, errors.Join(append(errs, fmt.Errorf("no_new_privs: %w", err))...)
	}
	if err := seccomp.Install(); err != nil {
		errs = append(errs, fmt.Errorf("%s: the kernel takes no seccomp filter (%s), so vsock sockets and io_uring stay open to commands", LayerSeccomp, fsrules.ErrnoName(err)))
	} else {
		a.Seccomp = true
	}
	if t.Ruleset >= 0 {
		if err := llsys.LandlockRestrictSelf(t.Ruleset, 0); err != nil {
			errs = append(errs, fmt.Errorf("%s: landlock_restrict_self: %s", LayerFS, fsrules.ErrnoName(err)))
		} else {
			a.Landlock = t.ABI
		}
	}
	g, err := supervisor.Supervise(a.Landlock, t.NoSupervisor, t.Opener)
	a.Guard = g
	return a, errors.Join(append(errs, err)...)
}

// holdsCaps reports whether the calling thread has any capability it could
// use or pass on.
func holdsCaps() bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if unix.Capget(&hdr, &data[0]) != nil {
		return true
	}
	return data[0].Permitted|data[1].Permitted|data[0].Effective|data[1].Effective != 0
}

// Rlimits are the per-process limits every command inherits; zero fields
// leave the limit as it is.
type Rlimits struct {
	// Procs counts the processes of the user, within its user namespace: a
	// process outside one would count every process of the user on the host.
	Procs    int
	FileSize int64         // bytes one file may grow to
	CPUTime  time.Duration // CPU time of one process
}

// Set sets the limits on the calling process.
func (l Rlimits) Set() error {
	set := func(res int, v uint64) error {
		return unix.Setrlimit(res, &unix.Rlimit{Cur: v, Max: v})
	}
	if l.Procs > 0 {
		if err := set(unix.RLIMIT_NPROC, uint64(l.Procs)); err != nil {
			return fmt.Errorf("processes: %w", err)
		}
	}
	if l.FileSize > 0 {
		if err := set(unix.RLIMIT_FSIZE, uint64(l.FileSize)); err != nil {
			return fmt.Errorf("file size: %w", err)
		}
	}
	if l.CPUTime > 0 {
		if err := set(unix.RLIMIT_CPU, uint64(max(1, l.CPUTime.Seconds()))); err != nil {
			return fmt.Errorf("CPU time: %w", err)
		}
	}
	return nil
}
