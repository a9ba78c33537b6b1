package helper

import (
	"errors"
	"fmt"
	"github.com/shellgate/shellgate/internal/fsrules"
	"os"
	"runtime"
	"slices"

	"github.com/shellgate/shellgate/internal/confine"
	"github.com/shellgate/shellgate/internal/copyup"
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
	// cmds: on v1, the tasks file of the commands' pids cgroup
	// (cgroup.Group.LauncherFile), which the thread joins, alone, so that the
	// commands it forks are charged to the process limit and the helper's
	// other threads are not; -1 until home, and where there is none.
	cmds int
}

// newLauncher builds the session's Landlock ruleset and starts the thread. The
// error says which layer is missing; the launcher works without it.
//
// Where the mount namespace is the session's own, the protected entries a
// command makes are staged by m (stage_linux.go).
func newLauncher(spec *Spec, writable []string, m *mounter) (*launcher, error) {
	l := &launcher{ruleset: -1, work: make(chan func() bool), cmds: -1}
	if spec.Network {
		l.noGate = unixgate.HostNetwork
	}
	var errs []error
	if fd, abi, err := fsrules.Build(append(slices.Clone(spec.Writable), writable...), Devices); err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", LayerFS, err))
	} else {
		l.ruleset, l.abi = fd, abi
	}
	var err error
	if l.opener, err = copyup.New(l.ruleset); err != nil {
		errs = append(errs, err)
	} else if m != nil && m.ready && len(spec.Writable) > 0 && spec.Quarantine != "" {
		l.opener.SetStager(m)
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
		if commandSlack > 0 {
			// Commands are forked here: they keep shellgate's timer slack,
			// not the helper's (TimerSlack).
			unix.Prctl(unix.PR_SET_TIMERSLACK, uintptr(commandSlack), 0, 0, 0)
		}
		var err error
		if l.cmds >= 0 { // a replacement: it joins the commands' cgroup as the first did
			err = l.join(l.cmds)
		}
		if err == nil {
			err = l.restrictThread()
		}
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

// home moves the launcher's thread into the cgroup whose tasks file is fd,
// for good, and keeps fd for the threads that may replace it.
func (l *launcher) home(fd int) (err error) {
	l.do(func() bool {
		if err = l.join(fd); err == nil {
			l.cmds = fd
		}
		return true
	})
	return err
}

// join moves the calling thread alone into the v1 cgroup whose tasks file is
// fd. "0" names the writer's own thread: the kernel then takes no lock of
// every thread group, whose taking waits for an RCU grace period.
func (l *launcher) join(fd int) error {
	if _, err := unix.Write(fd, []byte("0")); err != nil {
		return fmt.Errorf("sandbox: the launcher thread cannot join the commands' cgroup: %w", err)
	}
	return nil
}

// restrictThread confines the calling thread, and so every command it forks
// (see package confine): writes only where the ruleset allows, signals and
// abstract sockets only within the session, no host pathname unix socket.
func (l *launcher) restrictThread() error {
	a, err := confine.Self(confine.Thread{Ruleset: l.ruleset, ABI: l.abi, NoSupervisor: l.noGate, Opener: l.opener})
	if a.Landlock == 0 {
		l.ruleset, l.abi = -1, 0
	}
	l.seccomp, l.unix, l.copyup = a.Seccomp, a.Unix, a.CopyUp
	return err
}
