package copyup

import (
	"fmt"
	"runtime"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"github.com/shellgate/shellgate/internal/caps"
	"golang.org/x/sys/unix"
)

// An Opener opens files for the commands of a session, on threads confined
// as the commands are.
type Opener struct {
	ruleset int
	idle    chan *worker
	busy    chan struct{} // a token per worker at work
	stager  Stager        // judges the names commands make; nil: none handed over
	umasks  *umasks       // the callers', kept while umask calls are handed over (with stager)
	links   *storeLinks   // the checkpoint store's links (SetStoreLinks); nil: none
}

// A worker is one confined thread; it runs what is sent to it.
type worker struct{ jobs chan func() }

// maxWorkers bounds the opens performed at once: an open may block (a FIFO
// waiting for its reader), and each blocked one holds a thread. Past it,
// further calls wait: a session that blocks that many opens stalls itself
// rather than the helper's thread count.
const maxWorkers = 128

// maxIdle bounds the workers kept waiting for the next open: after a burst
// (a build's parallel writes, or FIFO opens a command abandoned) the rest
// end, and their threads with them, rather than the helper holding up to
// maxWorkers threads for the rest of the session.
const maxIdle = 8

// New returns an Opener whose threads are restricted by the Landlock ruleset
// (a descriptor; -1 for none). It starts one thread to see that the
// confinement holds.
func New(ruleset int) (*Opener, error) {
	o := &Opener{ruleset: ruleset, idle: make(chan *worker, maxIdle), busy: make(chan struct{}, maxWorkers)}
	w, err := o.start()
	if err != nil {
		return nil, fmt.Errorf("%s: a confined thread: %w", Layer, err)
	}
	o.idle <- w
	return o, nil
}

// dispatch runs fn on an idle worker, or a new one; false if no thread
// could be confined.
func (o *Opener) dispatch(fn func()) bool {
	o.busy <- struct{}{}
	var w *worker
	select {
	case w = <-o.idle:
	default:
		var err error
		if w, err = o.start(); err != nil {
			<-o.busy
			return false
		}
	}
	w.jobs <- func() {
		defer func() { <-o.busy }()
		fn()
	}
	return true
}

// start locks a new thread and confines it: a file system context of its
// own (so its umask is the caller's of the moment), no privilege gained, the
// commands' Landlock domain, and no capabilities, which the helper holds in
// the session's user namespace and the commands do not.
func (o *Opener) start() (*worker, error) {
	w := &worker{jobs: make(chan func())}
	ready := make(chan error)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with this goroutine
		err := o.confine()
		ready <- err
		if err != nil {
			return
		}
		for fn := range w.jobs {
			fn()
			select {
			case o.idle <- w:
			default:
				return // enough idle ones: the thread ends
			}
		}
	}()
	return w, <-ready
}

func (o *Opener) confine() error {
	if err := unix.Unshare(unix.CLONE_FS); err != nil {
		return fmt.Errorf("unshare: %w", err)
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if o.ruleset >= 0 {
		if err := llsys.LandlockRestrictSelf(o.ruleset, 0); err != nil {
			return fmt.Errorf("landlock_restrict_self: %w", err)
		}
	}
	if err := caps.Clear(); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	return nil
}
