package runner

import (
	"bytes"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/shellgate/shellgate/internal/procfs"
)

// enlargePipe raises the pipe's capacity (64 KiB by default) so that a fast writer
// fills it less often and each read takes more; failure only costs speed. Not more:
// pipe pages count against a per-user limit (fs.pipe-user-pages-soft, 64 MiB),
// past which every new pipe of the user shrinks to one page.
func enlargePipe(w *os.File) {
	if raw, err := w.SyscallConn(); err == nil {
		raw.Control(func(fd uintptr) { unix.FcntlInt(fd, unix.F_SETPIPE_SZ, pipeSize) })
	}
}

const pipeSize = 256 << 10

type procStat struct {
	state   byte
	pgrp    int
	session int
	flags   uint64
	start   uint64 // clock ticks since boot
	// Where the environment lies in the process's memory: both 0 in a kernel
	// thread and in a process halfway through execve; equal when it is empty.
	envStart, envEnd uint64
	// Where its code starts: 0 until execve has laid out the new image's
	// stack, environment pointers included (1 where we may not see it).
	startCode uint64
}

// Process flags from <linux/sched.h>.
const (
	pfExiting = 0x00000004
	pfKthread = 0x00200000
)

var statBufs = sync.Pool{New: func() any { b := make([]byte, 1024); return &b }}

// readStat reads /proc/pid/stat.
func readStat(pid int) (procStat, bool) {
	bp := statBufs.Get().(*[]byte)
	defer statBufs.Put(bp)
	fd, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/stat", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return procStat{}, false
	}
	n, err := unix.Read(fd, *bp)
	unix.Close(fd)
	if err != nil || n <= 0 {
		return procStat{}, false
	}
	return parseStat((*bp)[:n])
}

// parseStat parses "pid (comm) state ppid pgrp session … starttime …"; comm may
// contain spaces and parentheses, so fields are counted from the last ')'.
func parseStat(b []byte) (procStat, bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 20 {
		return procStat{}, false
	}
	pgrp, err1 := strconv.Atoi(string(f[2]))
	session, _ := strconv.Atoi(string(f[3]))
	flags, err2 := strconv.ParseUint(string(f[6]), 10, 64)
	start, err3 := strconv.ParseUint(string(f[19]), 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || len(f[0]) != 1 {
		return procStat{}, false
	}
	st := procStat{state: f[0][0], pgrp: pgrp, session: session, flags: flags, start: start}
	if len(f) > 23 {
		st.startCode, _ = strconv.ParseUint(string(f[23]), 10, 64)
	}
	if len(f) > 48 { // env_start, env_end: Linux 3.5+
		st.envStart, _ = strconv.ParseUint(string(f[47]), 10, 64)
		st.envEnd, _ = strconv.ParseUint(string(f[48]), 10, 64)
	}
	return st, true
}

// dead reports a zombie, or a process already exiting (it has let go of its
// memory, environment included, and will be a zombie in a moment).
func (st procStat) dead() bool {
	return st.state == 'Z' || st.state == 'X' || st.flags&pfExiting != 0
}

// onCandidates, for tests, is told the processes a Lister listed to search.
var onCandidates func(scope Launcher, pids []int)

// hostScans counts the listings of every process (pids), for tests.
var hostScans atomic.Int64

// pids lists the numeric entries of /proc.
func pids() []int {
	hostScans.Add(1)
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	out := make([]int, 0, len(names))
	for _, name := range names {
		if pid, err := strconv.Atoi(name); err == nil && pid > 0 {
			out = append(out, pid)
		}
	}
	return out
}

// groupMembers returns the live (non-zombie) processes in group pgid, among
// scope's processes where it lists them (a sandbox session's: a command's
// group is in its session), else among every process of the machine.
func groupMembers(pgid int, scope Launcher) []procID {
	if !groupExists(pgid) {
		return nil
	}
	var members []procID
	for _, pid := range candidates(scope) {
		if st, ok := readStat(pid); ok && st.pgrp == pgid && !st.dead() {
			members = append(members, procID{pid, st.start})
		}
	}
	return members
}

// membersAmong returns the live processes of pids in group pgid.
func membersAmong(pgid int, pids []int) []procID {
	var members []procID
	for _, pid := range pids {
		if st, ok := readStat(pid); ok && st.pgrp == pgid && !st.dead() {
			members = append(members, procID{pid, st.start})
		}
	}
	return members
}

// liveOf returns those of ms that are still alive and still in group pgid.
func liveOf(pgid int, ms []procID) []procID {
	var live []procID
	for _, p := range ms {
		if st, ok := readStat(p.PID); ok && st.start == p.Start && st.pgrp == pgid && !st.dead() {
			live = append(live, p)
		}
	}
	return live
}

// candidates lists the processes to search for scope's: those it lists if it
// is a Lister that can; with no scope, this process's tree where it holds
// every process the Supervisors started (Subreap); else every process.
func candidates(scope Launcher) []int {
	if l, ok := scope.(Lister); ok {
		if pids, ok := l.Processes(); ok {
			if onCandidates != nil {
				onCandidates(scope, pids)
			}
			return pids
		}
	}
	if scope == nil {
		if pids, ok := ownTree(); ok {
			return pids
		}
	}
	return pids()
}

// markedProcs returns the live processes whose initial environment has an entry
// starting with pattern, among those of scope (nil: all): the ones it lists if
// it is a Lister, else those its Contains accepts. Only processes of our own
// user are readable, which are the only ones we could have started. A process
// that replaced its environment (env -i, execve with a fresh one) is not found.
func markedProcs(pattern []byte, scope Launcher) []procID {
	if pattern == nil {
		return nil
	}
	self := os.Getpid()
	var found []procID
	bp := envBufs.Get().(*[]byte)
	defer envBufs.Put(bp)
	for _, pid := range candidates(scope) {
		if pid == self || pid <= 1 || scope != nil && !scope.Contains(pid) {
			continue
		}
		env, err := readEnviron(pid, bp)
		if err != nil || !envHas(env, pattern) {
			continue
		}
		if st, ok := readStat(pid); ok && !st.dead() {
			found = append(found, procID{pid, st.start})
		}
	}
	return found
}

var envBufs = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

// readEnviron reads a process's initial environment into *buf (grown as needed)
// and returns it. A process exec'ing just as we look reads empty: halfway
// through execve it has no environment yet, then one of no length while execve
// writes its pointers, and an open environ keeps the memory it was opened on,
// which reads empty once the execve lets it go. An empty read is therefore
// retried until stat says the image is in place with an empty environment
// (env -i), or the process has gone. execve sets the new image's code bounds
// only after it wrote the environment's pointers, so an empty environment
// with no code yet is one being written; the environment's own bounds cannot
// tell (they are equal while it is written), nor its address (without address
// randomization every image's environment is at the same place).
func readEnviron(pid int, buf *[]byte) ([]byte, error) {
	path := "/proc/" + strconv.Itoa(pid) + "/environ"
	wait, waited, placed := 20*time.Microsecond, time.Duration(0), 0
	for {
		env, err := procfs.Read(path, buf, false)
		if err != nil || len(env) > 0 {
			return env, err
		}
		st, ok := readStat(pid)
		switch {
		case !ok || st.dead() || st.flags&pfKthread != 0:
			return env, nil // a kernel thread, or gone
		case st.envEnd == st.envStart && st.startCode != 0:
			return env, nil // env -i
		case st.envEnd == 0 || st.startCode == 0:
			// execve is laying the image out: on a busy machine it may
			// wait for a core meanwhile, so a slower look each time.
			if waited > time.Second {
				return nil, nil
			}
			pause(wait)
			waited += wait
			wait = min(2*wait, 5*time.Millisecond)
		default:
			// An environment is in place: the read went through memory an
			// execve has let go since, or the process unmapped its own.
			if placed++; placed > 3 {
				return nil, nil
			}
		}
	}
}

// pause sleeps d on this thread. time.Sleep would do, but the runtime's timers
// wake no sooner than a millisecond when nothing else runs, so each emptied
// environment cost the marker scan ~2 ms (BenchmarkReadEnvironEmptied).
func pause(d time.Duration) {
	ts := unix.NsecToTimespec(d.Nanoseconds())
	for unix.Nanosleep(&ts, &ts) == unix.EINTR {
	}
}

// unread returns the number of bytes waiting in a pipe, or 0 if unknown.
func unread(f *os.File) int {
	n := 0
	if raw, err := f.SyscallConn(); err == nil {
		raw.Control(func(fd uintptr) { n, _ = unix.IoctlGetInt(int(fd), unix.TIOCINQ) })
	}
	return n
}
