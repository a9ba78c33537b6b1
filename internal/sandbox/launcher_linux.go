package sandbox

import (
	"errors"
	"fmt"
	"github.com/shellgate/shellgate/internal/fsrules"
	"os"
	"runtime"
	"slices"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"github.com/shellgate/shellgate/internal/caps"
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
	if err := caps.Drop(); err != nil {
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
