package runner

import (
	"errors"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

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
	blocked  int // the zombie child, not an orphan, the last look stopped at
}

func init() { reap.nudge = make(chan struct{}, 1) }

var errNotLauncher = errors.New("runner: a scope of processes, not a launcher")

// forking is called before a command is started as our child; the returned
// function registers it (pid 0: it did not start).
func forking() func(pid int) {
	reap.started.Store(true)
	reap.mu.RLock()
	return func(pid int) {
		// Registered whether or not this process is a subreaper yet: one
		// that becomes one later must not take the commands already
		// running, nor those started after, for orphans.
		if pid > 0 {
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
// not in our own session (see Subreap). It asks the kernel for a zombie child
// without reaping it (WNOWAIT), one system call when there is none; a zombie
// that is not an orphan is left to its owner's Wait, unless it is still the
// first one found at the next SIGCHLD (an owner that does not wait), when
// the orphans are looked for past it.
func reapOrphans() {
	reap.mu.Lock()
	defer reap.mu.Unlock()
	for {
		var info unix.Siginfo
		if unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil) != nil {
			return
		}
		pid := siginfoPID(&info)
		if pid <= 0 {
			reap.blocked = 0
			return
		}
		if !orphan(pid) {
			if pid == reap.blocked {
				scanOrphans()
			}
			reap.blocked = pid
			return
		}
		unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOHANG, nil)
	}
}

// siginfoPID is a waitid's si_pid: the first field of the union that follows
// three ints, aligned as a pointer.
func siginfoPID(info *unix.Siginfo) int {
	const ptr = unsafe.Sizeof(uintptr(0))
	return int(*(*int32)(unsafe.Add(unsafe.Pointer(info), (12+ptr-1)&^(ptr-1))))
}

// orphan reports whether zombie child pid is to be reaped here. reap.mu is held.
func orphan(pid int) bool {
	reap.mapMu.Lock()
	ours := reap.children[pid]
	reap.mapMu.Unlock()
	if ours {
		return false
	}
	st, ok := readStat(pid)
	return ok && st.state == 'Z' && st.session != reap.sid
}

// scanOrphans reaps every orphan among the main thread's children, which is
// where orphans are reparented (to the subreaper's first live thread); os/exec's
// children forked on other threads are never seen. reap.mu is held.
func scanOrphans() {
	children, _ := mainChildren()
	for _, pid := range children {
		if orphan(pid) {
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

// orphans is where to look, as a subreaper, for what a command left once its
// shell has exited: the trees of this process's children (any thread's) that
// were not its children before the command started (before, sorted). What the
// command left is among them: reparented to the main thread (its first live
// thread, which in Go never exits), or still under the shell. The jobs earlier
// calls left, the sandbox helpers and the commands already running are not
// read: they were children before.
type orphans struct{ before []int }

// beforeLaunch is the scope of the looks once the shell of a command about to
// be started through launcher has exited.
func beforeLaunch(launcher Launcher) Launcher {
	if launcher != nil || !reap.tree.Load() {
		return launcher
	}
	before, ok := ownChildren(nil)
	if !ok {
		return launcher
	}
	slices.Sort(before)
	return orphans{before}
}

// mainChildren lists the children of this process's main thread.
func mainChildren() ([]int, bool) {
	buf := procBufs.Get().(*[]byte)
	defer procBufs.Put(buf)
	b, err := procfs.Read("/proc/self/task/"+strconv.Itoa(reap.self)+"/children", buf, true)
	if err != nil {
		return nil, false
	}
	return appendPIDs(nil, b, nil), true
}

// ownChildren lists the children of all this process's threads but those in
// old (sorted).
func ownChildren(old []int) ([]int, bool) {
	buf := procBufs.Get().(*[]byte)
	defer procBufs.Put(buf)
	dir := "/proc/" + strconv.Itoa(reap.self) + "/task"
	tids, err := threads(reap.self, dir, *buf)
	if err != nil {
		return nil, false
	}
	var pids []int
	for _, t := range tids {
		if b, err := procfs.Read(dir+"/"+t+"/children", buf, true); err == nil {
			pids = appendPIDs(pids, b, old)
		}
	}
	return pids, true
}

// appendPIDs appends the process IDs a children file lists but those in old
// (sorted).
func appendPIDs(pids []int, children []byte, old []int) []int {
	for f := range strings.FieldsSeq(string(children)) {
		if pid, err := strconv.Atoi(f); err == nil {
			if _, was := slices.BinarySearch(old, pid); !was {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

func (orphans) Launch([]string, []string, string, *os.File, *os.File, *os.File, ...*os.File) (Launched, error) {
	return nil, errNotLauncher
}

func (orphans) Contains(int) bool { return true }

// Processes lists the trees of this process's children that were not its
// children before the command started. What the command left may not be an
// orphan yet: under its shell, killed at a timeout but not yet gone, which
// another thread started; a look at the main thread's new children alone
// missed it, and the timeout left it running.
func (o orphans) Processes() ([]int, bool) {
	if !reap.tree.Load() {
		return nil, false
	}
	roots, ok := ownChildren(o.before)
	if !ok {
		return nil, false
	}
	var pids []int
	for _, root := range roots {
		tree, ok := descendants(root)
		if !ok || len(pids)+len(tree) >= maxDescendants {
			return ownTree()
		}
		for _, m := range tree {
			pids = append(pids, m.pid)
		}
	}
	return pids, true
}
