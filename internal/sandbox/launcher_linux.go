package sandbox

import (
	"errors"
	"fmt"
	"github.com/shellgate/shellgate/internal/fsrules"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"github.com/shellgate/shellgate/internal/copyup"
	"github.com/shellgate/shellgate/internal/seccomp"
	"github.com/shellgate/shellgate/internal/supervisor"
	"github.com/shellgate/shellgate/internal/unixgate"
	"golang.org/x/sys/unix"
)

// A launcher is the one thread of the helper that starts commands. Only that
// thread gives up its capabilities and is restricted by Landlock, and every
// command is forked from it and inherits both. The helper's other threads keep
// what they need to go on shaping the session while commands run: Landlock
// forbids mounts to a restricted thread, and a protected path that a command
// creates (`git init` makes .git/hooks) must still be bound read-only
// afterwards. Restricting one thread also spares the all-thread calls, which
// in a cgo build go through libpsx and spin.
//
// Commands cannot reach the other threads: the helper is not dumpable, a
// restricted domain cannot ptrace or signal out of itself, and capabilities
// the tracer lacks forbid ptrace too.
type launcher struct {
	ruleset      int // the Landlock ruleset, kept to restrict a replacement thread; -1 without
	abi          int
	seccomp      bool           // the thread's seccomp filter is in place
	unix, noGate string         // how host unix sockets are kept out (unixgate), or why no supervisor can
	opener       *copyup.Opener // writes through hard links (copyup); nil without
	copyup       bool           // the thread's write opens are handed to opener
	work         chan func() bool
}

// newLauncher builds the session's Landlock ruleset and starts the thread. The
// error says which layer is missing; the launcher works without it.
func newLauncher(spec *Spec, writable []string) (*launcher, error) {
	l := &launcher{ruleset: -1, work: make(chan func() bool)}
	if spec.Network {
		l.noGate = unixgate.HostNetwork
	}
	var errs []error
	if fd, abi, err := fsrules.Build(append(slices.Clone(spec.Writable), writable...), devices); err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", LayerFS, err))
	} else {
		l.ruleset, l.abi = fd, abi
	}
	var err error
	if l.opener, err = copyup.New(l.ruleset); err != nil {
		errs = append(errs, err)
	}
	if err := l.start(); err != nil {
		errs = append(errs, err)
	}
	return l, errors.Join(errs...)
}

// start locks a new thread, restricts it and serves the work sent to it until
// a piece of work says the thread is no longer fit (it was left in a command's
// cgroup): then the thread ends with its goroutine and a fresh one takes over.
func (l *launcher) start() error {
	ready := make(chan error)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with this goroutine
		err := l.restrictThread()
		ready <- err
		for fn := range l.work {
			if !fn() {
				go func() {
					// A thread that could not be confined as the first one was
					// must start nothing: the session ends instead.
					if err := l.start(); err != nil {
						fmt.Fprintln(os.Stderr, "sandbox helper: a new launcher thread:", err)
						os.Exit(3)
					}
				}()
				return
			}
		}
	}()
	return <-ready
}

// do runs fn on the launcher's thread and waits for it. fn returns false when
// the thread must not serve again.
func (l *launcher) do(fn func() (fit bool)) {
	done := make(chan struct{})
	l.work <- func() bool {
		defer close(done)
		return fn()
	}
	<-done
}

// restrictThread confines the calling thread, and so every command it forks:
// no capabilities ever, no privilege gained at exec, a keyring of its own,
// no vsock or io_uring (seccomp), writes only where the ruleset allows,
// signals and abstract sockets only within the session, and no host
// pathname unix socket (unixgate).
func (l *launcher) restrictThread() error {
	var errs []error
	if err := dropCapabilities(); err != nil {
		errs = append(errs, fmt.Errorf("capabilities: %w", err))
	}
	// A session keyring of its own: what the user's other programs keep in
	// theirs (credential caches, Kerberos tickets) is not the commands' to read.
	if _, _, errno := unix.Syscall(unix.SYS_KEYCTL, unix.KEYCTL_JOIN_SESSION_KEYRING, 0, 0); errno != 0 {
		errs = append(errs, fmt.Errorf("keyring: %w", errno))
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		errs = append(errs, fmt.Errorf("no_new_privs: %w", err))
	} else if err := seccomp.Install(); err != nil {
		errs = append(errs, fmt.Errorf("%s: the kernel takes no seccomp filter (%s), so vsock sockets and io_uring stay open to commands", LayerSeccomp, fsrules.ErrnoName(err)))
	} else {
		l.seccomp = true
	}
	if l.ruleset >= 0 {
		if err := llsys.LandlockRestrictSelf(l.ruleset, 0); err != nil {
			l.ruleset, l.abi = -1, 0
			errs = append(errs, fmt.Errorf("%s: landlock_restrict_self: %w", LayerFS, err))
		}
	}
	g, err := supervisor.Supervise(l.abi, l.noGate, l.opener)
	l.unix, l.copyup = g.Unix, g.CopyUp
	return errors.Join(append(errs, err)...)
}

// dropCapabilities empties the calling thread's bounding and ambient sets, so a
// command — even one running as root in the session's user namespace — starts
// with no capabilities: it cannot undo a mount or leave the namespaces.
func dropCapabilities() error {
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("ambient: %w", err)
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
