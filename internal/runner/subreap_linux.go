package runner

import (
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/shellgate/shellgate/internal/procfs"
)

// Subreap makes this process a child subreaper (PR_SET_CHILD_SUBREAPER): what
// a command leaves running when its shell exits (setsid …&, nohup …&, a
// daemon) is reparented to this process instead of to init, so every process
// a Supervisor without a Launcher starts stays a descendant of this one until
// it is gone. The searches for what a command left (its process group, the
// processes carrying its marker) then read this process's tree
// (/proc/self/task/*/children and below), not every process of the machine.
//
// It is process-wide, so it is the program's choice, not a library's: call it
// at start, before any command runs (a process already orphaned went to init;
// Subreap after a command started makes the process a subreaper but the
// searches keep reading every process). The shellgate command calls it.
//
// Orphans that end are reaped here, on SIGCHLD: a zombie child of this process
// that no Supervisor started itself and that is not in this process's own
// session. A child the program starts itself (os/exec) in a session of its own
// (Setsid) may be reaped before its Wait, which then fails: the program must
// not need the exit status of such a child.
//
// Only Linux has subreapers; elsewhere Subreap returns errors.ErrUnsupported.
func Subreap() error {
	reap.once.Do(func() {
		if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
			reap.err = err
			return
		}
		reap.sid, _ = unix.Getsid(0)
		reap.self = os.Getpid()
		reap.tree.Store(!reap.started.Load())
		go reaper()
	})
	return reap.err
}

// reap is this process's state as a subreaper.
var reap struct {
	once sync.Once
	err  error
	sid  int // this process's session: its own os/exec children's, never reaped
	self int
	// tree: everything the Supervisors start stays below this process, so
	// the searches read only its tree (Subreap came before any command).
	tree    atomic.Bool
	started atomic.Bool // a command was started
	// mu is held for reading while a command is started and registered, and
	// for writing while the reaper looks: a child it finds not registered
	// was not started by a Supervisor.
	mu       sync.RWMutex
	mapMu    sync.Mutex
	children map[int]bool // commands started as children, not yet waited for
	nudge    chan struct{}
}

func init() { reap.nudge = make(chan struct{}, 1) }

// forking is called before a command is started as our child; the returned
// function registers it (pid 0: it did not start).
func forking() func(pid int) {
	reap.started.Store(true)
	reap.mu.RLock()
	return func(pid int) {
		if pid > 0 && reap.tree.Load() {
			reap.mapMu.Lock()
			if reap.children == nil {
				reap.children = make(map[int]bool)
			}
			reap.children[pid] = true
			reap.mapMu.Unlock()
		}
		reap.mu.RUnlock()
	}
}

// waited is called once a command started as our child has been waited for.
func waited(pid int) {
	if !reap.tree.Load() {
		return
	}
	reap.mapMu.Lock()
	delete(reap.children, pid)
	reap.mapMu.Unlock()
	select { // a zombie skipped while it was registered
	case reap.nudge <- struct{}{}:
	default:
	}
}

// reaper reaps the orphans that ended, at each SIGCHLD.
func reaper() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, unix.SIGCHLD)
	for {
		select {
		case <-c:
		case <-reap.nudge:
		}
		reapOrphans()
	}
}

// reapOrphans reaps the zombie children that are orphans: not registered, and
// not in our own session (see Subreap). Orphans are reparented to the first
// live thread of the subreaper, its main thread, whose list of children is
// the one read; os/exec's children forked on other threads are never seen.
func reapOrphans() {
	buf := procBufs.Get().(*[]byte)
	defer procBufs.Put(buf)
	b, err := procfs.Read("/proc/self/task/"+strconv.Itoa(reap.self)+"/children", buf, true)
	if err != nil || len(b) == 0 {
		return
	}
	reap.mu.Lock()
	defer reap.mu.Unlock()
	for f := range strings.FieldsSeq(string(b)) {
		pid, err := strconv.Atoi(f)
		reap.mapMu.Lock()
		ours := reap.children[pid]
		reap.mapMu.Unlock()
		if err != nil || ours {
			continue
		}
		if st, ok := readStat(pid); ok && st.state == 'Z' && st.session != reap.sid {
			var info unix.Siginfo
			unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOHANG, nil)
		}
	}
}

// ownTree lists the processes below this one, when every process the
// Supervisors started is among them (Subreap).
func ownTree() ([]int, bool) {
	if !reap.tree.Load() {
		return nil, false
	}
	all, ok := descendants(reap.self)
	if !ok || len(all) == 0 || len(all) >= maxDescendants {
		return nil, false
	}
	pids := make([]int, 0, len(all)-1)
	for _, m := range all[1:] {
		pids = append(pids, m.pid)
	}
	return pids, true
}
