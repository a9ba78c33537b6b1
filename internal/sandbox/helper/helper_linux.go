package helper

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/shellgate/shellgate/internal/cgroup"
	"github.com/shellgate/shellgate/internal/inherit"
	"github.com/shellgate/shellgate/internal/quarantinelog"
	"github.com/shellgate/shellgate/internal/textpages"
	"golang.org/x/sys/unix"
)

// Arg0 is the argv[0] that makes this executable a session helper.
const Arg0 = "shellgate-sandbox-session"

// ctlFD is the helper's end of the control socket it reads (Pair's down),
// ctlOutFD that of the one it writes (up).
const ctlFD, ctlOutFD = 3, 4

// TimerSlack is the timer slack (ns) the helper's threads are started
// with, where shellgate's own is less: a thread's timed sleeps end up to this
// much later. Those of the helper's Go runtime monitor (sysmon) are what it is
// for: back from its deep sleep at each command, the monitor sleeps 20 µs at
// a time for as long as the helper's processor is busy, and with the kernel's
// default 50 µs of slack woke 20–30 times a command, each a switch of an idle
// core; with 1 ms, 5–10 (6.6 timer wakes of the helper's threads a call at
// 200 ms gaps, by perf), and each time it found the processor idle it went
// back to its deep sleep, from which the next phase's first system call
// (the exit's waitid, the /dev/tty answer) woke it again, that call's
// thread paying the wake (2.2 a call). With 5 ms, about one sleep spans a
// command: 0.95 timer wakes and 1.5 such wakes a call, the helper's context
// switches 18 → 11. What else sleeps on a timer here is the guard's 200 ms
// tick, the idle drops' timers and the session's end's 1 ms waits for killed
// processes; the monitor also takes the processor back from a thread
// blocked in a system call up to that much later (none is, on a command's
// way). Nothing of the helper sleeps on a timer for its commands' sake; the
// launcher's thread, which forks them, sets theirs back (commandSlack).
// Shellgate sets it on the thread that starts the helper.
const TimerSlack = 5_000_000

// endSlack is the timer slack (ns) of the session's end's waits for the
// processes it killed: the kernel's default.
const endSlack = 50_000

// commandSlack is the timer slack (ns) the launcher's thread sets for the
// commands it forks (message.Slack); 0 leaves them the helper's.
var commandSlack int

func init() {
	if len(os.Args) == 1 && os.Args[0] == Arg0 {
		os.Exit(helperMain())
	}
}

// helper is the session's PID 1: it sets the session up, starts commands on
// request, reaps every process of the session and reports its commands' exits.
// It exits when shellgate closes the control socket (or dies), and the kernel
// then kills whatever is left in the session.
type helper struct {
	ctl      *Conn
	mounts   *mounter
	launcher *launcher

	mu       sync.Mutex
	commands map[int]uint64   // PID in the session → request ID
	keep     map[int][]string // commands started with KeepCreated: the paths it names
	jobs     map[int]bool     // commands whose calls have returned (detach)
	// stopped: commands in flight that stopIfAgain ended, with the paths
	// made again, for their exits to tell.
	stopped map[int][]string
	// jobsRan: a process of the session that was not a command (a job its
	// command left behind) has ended since the last command started.
	jobsRan atomic.Bool
	// soleApproved: the PID of an approved command that started with no
	// other process in the session, while it runs and none other starts
	// (0 otherwise): what it writes in the index is its own (see
	// mounter.approved).
	soleApproved atomic.Int64
	// settled: the last command's end looked at the protected paths with
	// no other process of the session left, and nothing was reaped since:
	// nothing of the session can have written there after that look, so
	// the session's end need not look again (see end).
	settled bool
	reaps   uint64 // processes reaped so far
	spawns  uint64 // commands started so far
	// started: the ID of the last spawn request whose command started.
	started uint64
	// guarded: protected paths the guard moved aside since the last
	// command started, for its reply.
	guarded []string
	// guarding: the guard looks (see guard); wake starts its next spell.
	guarding bool
	wake     chan struct{}
	// quiet: a command's end found the session empty; the guard's spell
	// looks now, and ends, rather than at its next tick.
	quiet chan struct{}
	// serverIdle: shellgate's server is idle (Session.Idle): the guard gives up
	// the executable's pages now, if the session is empty, rather than
	// after idleDrop.
	serverIdle chan struct{}
	// log is the quarantine log (Spec.QuarantineLog), or nil.
	log *os.File
	// null: /dev/null, open once the first spawn needs it (-1 before), for
	// the streams a spawn sends none for: an open and a close fewer a
	// command.
	null int
	// lastEnv is the env of the last spawn that sent one (message.SameEnv);
	// spawns are served one at a time, in the order they came.
	lastEnv []string
	// sigchld starts the reaping on SIGCHLD, where it is needed (reapOnSignal).
	sigchld sync.Once
}

// anyKept reports whether an approved command (KeepCreated) runs, with h.mu
// held.
func (h *helper) anyKept() bool { return len(h.keep) > 0 }

// GuardEvery is how often the guard looks while the session has processes;
// setUpIdle how long a helper sits idle after its set-up, and idleDrop how
// long an empty session sits idle after its last spell, before it gives up
// the pages its start or its commands touched (guard), unless shellgate
// says sooner that its server is idle (Session.Idle).
const GuardEvery, setUpIdle, idleDrop = 200 * time.Millisecond, time.Second, 30 * time.Second

// guard acts while anything runs in the session, not only when a command
// ends: a background job writes after its call has returned, and shellgate
// may be killed (SIGKILL) while a command runs, when no end comes. Every
// GuardEvery it removes symlinks from .git (git never makes one, so a
// command in flight loses nothing) and, when no command is in flight (only
// jobs run, which no call's end covers: see Session.Detach), moves aside the protected paths
// that appeared, as the next command's start would.
//
// It looks only while the session has processes, so that an idle session
// costs no wake-ups: spawn wakes it (with h.mu held) and it stops looking,
// under the same lock, once the session is empty. Every process of the
// session descends from a command that spawn started, so none can appear
// while it is stopped.
//
// Once shellgate's server is idle (Session.Idle: `shellgate mcp` says so
// with its own give-back, after 5 s without a message on stdio or a
// request in flight over HTTP) and the
// session is empty, the helper gives up its mappings of the executable's
// pages (textpages.Drop: 13 of its 15 MB resident after a call were the
// binary's, mapped whole, most of them for its start); the next command maps
// back the few it touches. A server that never says so (a program using a
// Gate) has its helpers drop once their session has sat
// empty for idleDrop. Not at each spell's end, nor on the helper's own clock
// of a few seconds: an agent's next call comes within seconds to tens of
// seconds, and a command after a drop maps back the pages the last one had
// used (~12 faults of whole folios, ~0.1 ms of the helper's CPU on the
// call's path), besides the drop's own read of smaps (~0.8 ms of CPU);
// where the server keeps its own pages, so the helper keeps its. The guard
// is one goroutine for the helper's life, waiting between spells rather
// than ending: a goroutine's end looks its function up in the binary's
// function table, which would map those pages back at once.
//
// The set-up's pages go the same way, once the helper has sat idle for
// setUpIdle after it: a one-shot run's command follows the set-up at once
// and its close soon after, and a drop then made the command wait (~0.7 ms
// of reading smaps) for pages it mapped back.
func (h *helper) guard() {
	idle := time.NewTimer(setUpIdle)
	for {
		select {
		case <-h.wake:
			idle.Stop()
			h.guardSpell()
			select { // said while commands ran: the server has heard from its client since
			case <-h.serverIdle:
			default:
			}
			idle.Reset(idleDrop)
		case <-idle.C:
			textpages.Drop()
		case <-h.serverIdle:
			h.mu.Lock()
			busy := h.guarding // a spawn's wake is pending: said while it ran
			h.mu.Unlock()
			if !busy {
				idle.Stop()
				textpages.Drop()
			}
		}
	}
}

// guardSpell looks every GuardEvery until the session is empty, or at
// once when a command's end found it so (quiet): then the spell ends with
// that command, on the thread its end woke, and does not wake the helper
// GuardEvery later to find what its end found. At an agent's pace, a call
// every few seconds, that tick was a wake of the helper (and of its runtime's
// monitor, which its first syscall rouses) for every call.
func (h *helper) guardSpell() {
	select { // said before this spell's command started
	case <-h.quiet:
	default:
	}
	t := time.NewTicker(GuardEvery)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-h.quiet:
		}
		// The orphans that ended since (as PID 1 the helper inherits them):
		// no signal says when (quietChildren), and until reaped each is
		// listed in /proc, so the spells go on until it is.
		for h.reapOne() {
		}
		h.mu.Lock()
		if !othersAlive() {
			// A job made a repository and ended (git init in the
			// background): judged and put in place now, not at the next
			// call, so that the host sees it once nothing writes there.
			if len(h.commands) == len(h.jobs) && !h.anyKept() && h.mounts.stagedRepo() {
				_, moved, _ := h.mounts.protect(func() bool { return true }, nil)
				h.guarded = append(h.guarded, moved...)
			}
			h.guarding = false
			h.mu.Unlock()
			return
		}
		// No call in flight, nor an approved command (which keeps what it
		// makes) running on as a job.
		var moved []string
		if len(h.commands) == len(h.jobs) && !h.anyKept() {
			_, moved, _ = h.mounts.protect(func() bool { return true }, nil)
		} else {
			h.mounts.sweepGit()
			if !h.anyKept() {
				moved = h.mounts.moveGitNew()
			}
		}
		h.guarded = append(h.guarded, moved...)
		h.stopIfAgain(moved)
		h.mu.Unlock()
	}
}

// stopIfAgain ends every process of the session, with h.mu held, when the
// guard's look moved aside (moved) a protected path it had moved before: a
// process of the session makes again what the user's git or tools on the
// host would obey (a job re-making .git/commondir within a millisecond of
// each move keeps it there almost all the time, however often the guard
// looks). Moving after the fact cannot keep up with that; ending what makes
// it can. No ordinary work makes a protected entry at the root again after
// the sandbox moved it while only jobs ran, or one of .git's that a
// repository with its config never makes (moveGitNew). shellgate is told
// ("stopped"): the next call's envelope and the audit log say so.
func (h *helper) stopIfAgain(moved []string) {
	again := h.mounts.again(moved)
	if len(again) == 0 {
		return
	}
	syscall.Kill(-1, syscall.SIGKILL) // as PID 1: everything else in the namespace
	told := false
	for pid := range h.commands {
		if !h.jobs[pid] { // a call in flight: its envelope tells
			h.stopped[pid], told = again, true
		}
	}
	h.ctl.Send(&Message{Op: "stopped", Quarantined: again, Told: told}, nil)
}

func helperMain() int {
	// Before anything starts: no command may write the log, nor anything else
	// the process that started shellgate left open across exec (commands are
	// handed their descriptors one by one).
	if err := inherit.Stop(ctlFD); err != nil {
		fmt.Fprintln(os.Stderr, "sandbox helper:", err)
		return 2
	}
	t, err := newFileTransport(ctlFD)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sandbox helper: the control socket:", err)
		return 2
	}
	ctl, err := Split(t, ctlOutFD)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sandbox helper: the control socket:", err)
		return 2
	}
	h := &helper{ctl: NewConn(ctl), commands: map[int]uint64{}, keep: map[int][]string{}, jobs: map[int]bool{}, stopped: map[int][]string{}, wake: make(chan struct{}, 1), quiet: make(chan struct{}, 1), serverIdle: make(chan struct{}, 1), null: -1}
	if !t.pending() {
		warmJSON()
	}
	m, oob, err := h.ctl.Recv(make([]byte, syscall.CmsgSpace(4*(len(RootDirs)+4))))
	if err != nil || m.Op != "setup" || m.Spec == nil {
		fmt.Fprintln(os.Stderr, "sandbox helper: no setup message:", err)
		return 2
	}
	// One for each step that shows a tree as others see it, then the
	// quarantine log (Spec.QuarantineLog), when the spec names one, then
	// the checkpoint store's links (Spec.StoreLinks), then the commands'
	// cgroup's tasks file (LauncherTasks), then the cache layers' lock
	// (LayersLock), kept open, never closed, until the helper exits.
	trees := FDs(oob)
	tasks, links := -1, -1
	if m.LayersLock && len(trees) > 0 {
		trees = trees[:len(trees)-1]
	}
	if m.LauncherTasks && len(trees) > 0 {
		tasks, trees = trees[len(trees)-1], trees[:len(trees)-1]
	}
	if m.Spec.StoreLinks != "" && len(trees) > 0 {
		links, trees = trees[len(trees)-1], trees[:len(trees)-1]
	}
	if m.Spec.QuarantineLog != "" && len(trees) > 0 {
		h.log, trees = os.NewFile(uintptr(trees[len(trees)-1]), "quarantine-log"), trees[:len(trees)-1]
	}
	for i := range m.Steps {
		if m.Steps[i].AsOthers && len(trees) > 0 {
			m.Steps[i].tree, trees = os.NewFile(uintptr(trees[0]), m.Steps[i].Path), trees[1:]
		}
	}
	commandSlack = m.Slack
	layers, missing, mounts, launcher, err := apply(m.Spec, m.Steps, m.UserCounts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sandbox helper:", err)
		return 2
	}
	h.mounts, h.launcher = mounts, launcher
	if links >= 0 && launcher != nil && launcher.opener != nil {
		launcher.opener.SetStoreLinks(links, m.Spec.LinkCopyMax) // held for the session
	} else if links >= 0 {
		unix.Close(links)
	}
	if mounts != nil {
		mounts.approved = func() bool { return h.soleApproved.Load() != 0 }
	}
	ready := &Message{Op: "ready", Layers: layers, Missing: missing}
	if m.LauncherTasks {
		// Here, not in a round trip after ready: a command's start waited
		// for that.
		ready.LauncherError = "sandbox: no tasks file sent"
		if tasks >= 0 {
			ready.LauncherError = ""
			if err := h.launcher.home(tasks); err != nil {
				ready.LauncherError = err.Error()
				unix.Close(tasks)
			}
		}
	}
	lns := listenHostPorts(m.Spec, ready)
	err = h.ctl.Send(ready, UnixRights(lns))
	CloseAll(lns) // shellgate holds them now
	if err != nil {
		return 2
	}
	// Commands' exits are reaped through their pidfds (awaitExit), orphans'
	// by the guard and at each command's exit: SIGCHLD is not needed, and
	// with the kernel's default it is not even sent (see quietChildren).
	if err := quietChildren(); err != nil {
		h.reapOnSignal()
	}
	// Set up: what the start touched (every package's initialisation, the
	// mounts) is not needed again, once idle (guard).
	go h.guard()
	// Served by a goroutine of its own, not on the main thread: this runs
	// in the package's init, when the main goroutine is locked to the main
	// thread, and a goroutine locked to a thread runs only there. Each frame
	// would be a wake of the poller's thread, then of the main thread it
	// hands the goroutine to; and each command's start on the launcher's
	// thread (launcher.do) two such hand-offs each way, one for each locked
	// thread. Unlocked, the thread the poller wakes runs the frame itself,
	// and the launcher's thread is handed its work directly.
	served := make(chan struct{})
	go func() {
		defer close(served)
		h.serve(m.UID, m.GID)
	}()
	<-served
	return 0
}

// serve starts the commands shellgate asks for until the control socket closes.
func (h *helper) serve(uid, gid int) {
	oob := make([]byte, syscall.CmsgSpace(10*4)) // stdin, stdout, stderr, a few extra fds, a cgroup's two
	for {
		m, got, err := h.ctl.Recv(oob)
		if err != nil { // shellgate is gone, killed perhaps mid-command
			h.end()
			return
		}
		fds := FDs(got)
		switch m.Op {
		case "spawn":
			h.spawn(m, fds, uid, gid)
		case "pty":
			h.openPTY(m)
		case "idle":
			select {
			case h.serverIdle <- struct{}{}:
			default: // one is pending
			}
		case "detach":
			h.mu.Lock()
			if _, ok := h.commands[m.Job]; ok {
				h.jobs[m.Job] = true
			}
			h.mu.Unlock()
		case "launcher-cgroup":
			reply := &Message{Op: "launcher-cgroup", Error: "sandbox: no tasks file sent"}
			if len(fds) == 1 {
				reply.Error = ""
				if err := h.launcher.home(fds[0]); err != nil {
					reply.Error = err.Error()
				} else {
					fds = nil // the launcher keeps it, for a thread that replaces its own
				}
			}
			h.ctl.Send(reply, nil)
		case "close":
			h.close()
			return
		}
		for _, fd := range fds {
			unix.Close(fd)
		}
	}
}

// spawn starts one command in a session of its own (its own process group, no
// controlling terminal unless it runs on one) and answers with its PID as
// credentials.
func (h *helper) spawn(m *Message, fds []int, uid, gid int) {
	// First, before any answer: shellgate takes what it sent as this
	// helper's last env whatever becomes of the command.
	if m.SameEnv {
		env, ok := PatchEnv(h.lastEnv, m.EnvPatch)
		if !ok { // cannot be: shellgate patches the env it sent last
			h.lastEnv = nil
			h.ctl.Send(&Message{Op: "started", ID: m.ID, Error: "sandbox: a spawn's env patch does not fit the last env"}, nil)
			return
		}
		m.Env = env
	}
	h.lastEnv = m.Env
	var cgroupFDs []int
	if n := cgroup.FDs(m.Cgroup); n > 0 && len(fds) >= n {
		fds, cgroupFDs = fds[:len(fds)-n], fds[len(fds)-n:]
	}
	files := []uintptr{^uintptr(0), ^uintptr(0), ^uintptr(0)}
	if h.null < 0 {
		h.null, _ = unix.Open(os.DevNull, unix.O_RDWR|unix.O_CLOEXEC, 0)
	}
	if h.null >= 0 {
		for i := range files {
			files[i] = uintptr(h.null)
		}
	}
	next := 0
	for i, sent := range []bool{m.Stdin, m.Stdout, m.Stderr} {
		if sent && next < len(fds) {
			files[i] = uintptr(fds[next])
			next++
		}
	}
	for i := 0; i < m.Extra && next < len(fds); i++ {
		files = append(files, uintptr(fds[next]))
		next++
	}
	pidfd := -1
	sys := &syscall.SysProcAttr{Setsid: true, PidFD: &pidfd}
	if m.Terminal {
		if len(fds) != 1 {
			h.ctl.Send(&Message{Op: "started", ID: m.ID, Error: "sandbox: a terminal command needs exactly one fd"}, nil)
			return
		}
		files = []uintptr{uintptr(fds[0]), uintptr(fds[0]), uintptr(fds[0])}
		sys.Setctty, sys.Ctty = true, 0 // the child's fd 0
	}
	reply := &Message{Op: "started", ID: m.ID}
	env, keep, approved := takeKeepCreated(slices.Clone(m.Env)) // it deletes in place
	m.Env = env
	argv0, err := lookPath(m.Argv[0], m.Env)
	// The lock is held until the reply is sent: the reaper must not reap the
	// command before then, because the kernel checks that the PID sent as
	// credentials still exists (a command as quick as `true` would be gone).
	h.mu.Lock()
	defer h.mu.Unlock()
	var pid int
	others := true // another process of the session runs (for soleApproved)
	if err == nil {
		// What appeared since the last command: made by a job of the session if
		// one runs or has run since, else on the host (the user's own, kept in
		// place).
		ran := h.jobsRan.Swap(false)
		others = ran || len(h.commands) > 0 || approved && othersAlive()
		reply.Unkept = h.mounts.keep(m.Keep) // what is gone or moved: the watch reports what appears
		// Those kept in place (the user's own) are told too: checkpoints
		// keep them (Session.Guard).
		reply.Protected, reply.Quarantined, _ = h.mounts.protect(func() bool { return ran || othersAlive() }, nil)
		reply.Chosen = h.mounts.chosen(reply.Protected)
		reply.GitKnown = h.mounts.gitKnown()
		reply.Quarantined, h.guarded = append(h.guarded, reply.Quarantined...), nil
		h.launcher.do(func() (fit bool) {
			pid, reply.Placed, fit, err = cgroup.Fork(m.Cgroup, cgroupFDs, sys, func(sys *syscall.SysProcAttr) (int, error) {
				return syscall.ForkExec(argv0, m.Argv, &syscall.ProcAttr{
					Dir: m.Dir, Env: m.Env, Files: files,
					Sys: sys,
				})
			})
			return fit
		})
	}
	if err != nil {
		reply.Error = err.Error()
		if errno, ok := err.(syscall.Errno); ok {
			reply.Errno = int(errno)
		} else if os.IsNotExist(err) {
			reply.Errno = int(syscall.ENOENT)
		}
		h.send(reply, nil)
		return
	}
	h.commands[pid] = m.ID
	h.spawns++
	if pidfd >= 0 {
		go h.awaitExit(pidfd)
	} else { // no pidfd (Linux before 5.3): its exit is known by SIGCHLD
		h.reapOnSignal()
	}
	h.started = m.ID
	h.soleApproved.Store(0) // another process: what the index gets may be its
	if approved {
		h.keep[pid] = keep
		if !others {
			h.soleApproved.Store(int64(pid))
		}
	}
	if !h.guarding {
		h.guarding = true
		h.wake <- struct{}{} // never blocks: the guard takes each wake before it sets guarding false again
	}
	// The kernel translates the PID into the receiver's PID namespace.
	creds := syscall.UnixCredentials(&syscall.Ucred{Pid: int32(pid), Uid: uint32(uid), Gid: uint32(gid)})
	if err := h.send(reply, creds); err != nil {
		syscall.Kill(-pid, syscall.SIGKILL)
		reply.Error, reply.Errno = "sandbox: could not report the command: "+err.Error(), 0
		h.ctl.Send(reply, nil)
	}
}

// openPTY opens a pseudo-terminal in the session's own devpts, so that a
// terminal job's tty has a name in the session and no terminal of the host's
// is in reach, and sends both ends.
func (h *helper) openPTY(m *Message) {
	reply := &Message{Op: "pty", ID: m.ID}
	master, slave, err := sessionPTY(m.Cols, m.Rows)
	if err != nil {
		reply.Error = err.Error()
		h.ctl.Send(reply, nil)
		return
	}
	defer unix.Close(master)
	defer unix.Close(slave)
	h.ctl.Send(reply, syscall.UnixRights(master, slave))
}

func sessionPTY(cols, rows int) (master, slave int, err error) {
	master, err = unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, -1, err
	}
	if err = unix.IoctlSetPointerInt(master, unix.TIOCSPTLCK, 0); err == nil {
		err = unix.IoctlSetWinsize(master, unix.TIOCSWINSZ, &unix.Winsize{Col: uint16(cols), Row: uint16(rows)})
	}
	if err == nil {
		r, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(master), unix.TIOCGPTPEER, unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC)
		if slave = int(r); errno != 0 {
			err = errno
		}
	}
	if err != nil {
		unix.Close(master)
		return -1, -1, fmt.Errorf("sandbox: a terminal in the session: %w", err)
	}
	return master, slave, nil
}

// idle reports, with h.mu held, whether the session's end (end) has nothing
// left to do: the last command's end found no other process of the session
// and looked at the protected paths after the session's last write
// (settled), no command has started since, no process but the commands
// ended (jobsRan), and nothing the guard moved is untold. Until the next
// command starts nothing can change that: only a command's start makes a
// process in the session, and the guard acts only while one runs. Killing
// the helper then ends the session as a close would.
func (h *helper) idle() bool {
	return h.settled && len(h.commands) == 0 && !h.jobsRan.Load() && len(h.guarded) == 0
}

// close ends the session (see end) and says so, and whether no other
// process of it is left (one that outlived its SIGKILL by end's second is).
func (h *helper) close() {
	h.end()
	h.ctl.Send(&Message{Op: "closed", Empty: !othersAlive()}, nil)
}

// end ends every process of the session, then moves aside the protected
// paths that appeared since the last command, as the next command's start
// would: a job may have written one and ended, and no command comes after.
// It runs too when shellgate dies (SIGKILL) while a command runs, when no
// command's end will come: what the command made at the root never stays
// for the host's tools to read.
func (h *helper) end() {
	h.mu.Lock()
	settled := h.settled
	h.mu.Unlock()
	moveAside := h.jobsRan.Load() || othersAlive()
	settled = settled && !moveAside
	syscall.Kill(-1, syscall.SIGKILL) // as PID 1: everything else in the namespace
	if h.mounts != nil {
		h.mounts.endStaging()
	}
	if othersAlive() {
		// Waited for in 1 ms sleeps of this thread, with the kernel's
		// usual slack: the helper's (TimerSlack) would make each up to
		// 6 ms, on the way of a close that left a job running.
		runtime.LockOSThread()
		unix.Prctl(unix.PR_SET_TIMERSLACK, endSlack, 0, 0, 0)
		pause := unix.Timespec{Nsec: int64(time.Millisecond)}
		for deadline := time.Now().Add(time.Second); othersAlive() && time.Now().Before(deadline); {
			if !h.reapOne() {
				unix.Nanosleep(&pause, nil)
			}
		}
		unix.Prctl(unix.PR_SET_TIMERSLACK, TimerSlack, 0, 0, 0)
		runtime.UnlockOSThread()
	}
	var moved []string
	if !settled { // else the last command's end looked after the session's last write
		_, moved, _ = h.mounts.protect(func() bool { return moveAside }, nil)
	}
	// What no command's start will tell now: the guard's moves since the
	// last one, and these. The next session in the root reports them.
	h.mu.Lock()
	moved, h.guarded = append(h.guarded, moved...), nil
	h.mu.Unlock()
	h.logUntold(moved)
}

// send sends m to shellgate. When shellgate cannot hear it (killed), what m
// says was moved into the quarantine goes to the log instead.
func (h *helper) send(m *Message, oob []byte) error {
	err := h.ctl.Send(m, oob)
	if err != nil {
		h.logUntold(m.Quarantined)
	}
	return err
}

// logUntold writes moves no envelope will tell to the quarantine log, for
// the next session in the root to tell.
func (h *helper) logUntold(moved []string) {
	if h.log == nil || len(moved) == 0 || len(h.mounts.spec.Writable) == 0 {
		return
	}
	if err := quarantinelog.Write(h.log, h.mounts.spec.Writable[0], moved); err != nil {
		fmt.Fprintln(os.Stderr, "sandbox helper: the quarantine log:", err)
	}
}

// othersAlive reports whether any process of the session is there besides the
// helper, running or ended and not yet reaped: the session's /proc lists only
// the session's processes. Each command's end and each of the guard's looks
// asks: the helper keeps /proc open (once the view is built, its own) and
// reads it again from its start, by plain calls into a buffer of its own,
// where os.ReadDir opened it each time and allocated and sorted an entry
// for each of its ~60 names, in a helper that seldom collects its garbage.
func othersAlive() bool {
	procDents.mu.Lock()
	defer procDents.mu.Unlock()
	if procDents.fd < 0 {
		fd, err := unix.Open("/proc", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return true
		}
		procDents.fd = fd
	}
	// From where its processes begin, once a listing has shown where that
	// is: /proc lists its ~60 other entries first, each time.
	if _, err := unix.Seek(procDents.fd, procDents.pidsAt, io.SeekStart); err != nil {
		return true
	}
	return listsOtherPID(procDents.fd, procDents.buf[:], &procDents.pidsAt)
}

// listsOtherPID says whether directory fd (a /proc), read from where it
// stands through buf, lists a process other than PID 1, or could not be read.
// With pidsAt, a listing read from the start notes there the offset its
// processes begin at, after its last other entry, when every other entry
// came before every process (as /proc lists them), so that the next listing
// can begin there; else it leaves it 0, from the start.
func listsOtherPID(fd int, buf []byte, pidsAt *int64) bool {
	var at int64   // the offset after the last entry read that was no process
	pids := false  // a process was listed
	mixed := false // an entry that is no process came after one
	defer func() {
		if pidsAt != nil && *pidsAt == 0 && pids && !mixed {
			*pidsAt = at
		}
	}()
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return true
		}
		if n == 0 {
			return false
		}
		// linux_dirent64: inode (8 bytes), offset (8), record length (2),
		// type (1), then the name, NUL-terminated.
		for b := buf[:n]; len(b) >= 19; {
			reclen := int(binary.NativeEndian.Uint16(b[16:18]))
			if reclen < 19 || reclen > len(b) {
				return true
			}
			name := b[19:reclen]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			if otherPID(name) {
				return true
			}
			if isPID(name) {
				pids = true
			} else if pids {
				mixed = true
			} else {
				at = int64(binary.NativeEndian.Uint64(b[8:16])) // d_off: where the next entry is
			}
			b = b[reclen:]
		}
	}
}

// procDents is othersAlive's /proc, open once, and its buffer.
var procDents = struct {
	mu     sync.Mutex
	fd     int   // -1 until the first look
	pidsAt int64 // where its processes begin (listsOtherPID), 0 until known
	buf    [8192]byte
}{fd: -1}

// otherPID says whether a name in /proc is a process's other than PID 1's.
func otherPID(name []byte) bool {
	return isPID(name) && !(len(name) == 1 && name[0] == '1')
}

// isPID says whether a name in /proc is a process's.
func isPID(name []byte) bool {
	if len(name) == 0 {
		return false
	}
	for _, c := range name {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// lookPath finds a program name without a slash in the command's PATH.
func lookPath(name string, env []string) (string, error) {
	if filepath.IsAbs(name) || filepath.Base(name) != name {
		return name, nil
	}
	path := ""
	for _, kv := range env {
		if len(kv) > 5 && kv[:5] == "PATH=" {
			path = kv[5:]
		}
	}
	for _, dir := range filepath.SplitList(path) {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

// awaitExit reaps what has exited once the command of pidfd has, and then
// closes pidfd. The runtime's poller waits for it: the thread the kernel
// wakes at the command's exit runs the reaping itself, and reaps too the
// orphans that ended meanwhile (no SIGCHLD says when: quietChildren).
func (h *helper) awaitExit(pidfd int) {
	// Status flags set alone (a pidfd from clone3 has none), without
	// reading them first as unix.SetNonblock does: os.NewFile reads them.
	if _, err := unix.FcntlInt(uintptr(pidfd), unix.F_SETFL, unix.O_NONBLOCK); err != nil {
		unix.Close(pidfd)
		return
	}
	f := os.NewFile(uintptr(pidfd), "pidfd")
	defer f.Close()
	if rc, err := f.SyscallConn(); err == nil {
		rc.Read(func(fd uintptr) bool {
			var info unix.Siginfo
			err := unix.Waitid(unix.P_PIDFD, int(fd), &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
			// Reaped already, or exited (si_signo is SIGCHLD once a child
			// is found, 0 while it runs).
			return err != nil || info.Signo != 0
		})
	}
	for h.reapOne() {
	}
}

// quietChildren sets SIGCHLD's disposition back to the kernel's default
// (SIG_DFL), which the Go runtime had replaced by its own handler: a signal
// whose default is to be ignored is then dropped when it is sent, so a
// command's exit no longer wakes a helper thread (the launcher's, whose
// child it was) to run the runtime's handler, which, with os/signal's
// Notify, woke os/signal's goroutine, which woke reap's, each a thread of its
// own here: three hand-offs beside the exit's own report, on the call's
// path. SIG_DFL, unlike SIG_IGN, keeps the children's exits to be waited
// for. The runtime sets a signal's disposition only at its start and in
// Notify, Ignore and Reset, none of which the helper calls for SIGCHLD
// (reapOnSignal aside), so the default stays; the commands it forks keep
// the default too, as they did.
func quietChildren() error {
	// The kernel's struct sigaction, all zero: SIG_DFL, no flags, no mask;
	// 32 bytes cover every layout (handler, flags, restorer, mask).
	var act [4]uint64
	_, _, errno := unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(syscall.SIGCHLD), uintptr(unsafe.Pointer(&act)), 0, 8, 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// reapOnSignal starts, once, what reaped every process of the session as it
// exited before quietChildren: a goroutine woken by SIGCHLD. Only where a
// command could not be given a pidfd, whose exit nothing else would tell.
func (h *helper) reapOnSignal() {
	h.sigchld.Do(func() {
		sigs := make(chan os.Signal, 1)
		signal.Notify(sigs, syscall.SIGCHLD)
		go func() {
			for {
				for h.reapOne() {
				}
				<-sigs
			}
		}()
	})
}

// reapOne reaps one exited process, if there is one, and reports it if it was a
// command. It holds the lock that spawn holds while it reports a new command.
func (h *helper) reapOne() bool {
	h.mu.Lock()
	var ws syscall.WaitStatus
	pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
	if pid <= 0 || err != nil {
		h.mu.Unlock()
		return false
	}
	id, ok := h.commands[pid]
	if !ok {
		h.jobsRan.Store(true)
	}
	h.settled = false
	h.reaps++
	// Alone now: every process of the session descends from a command
	// spawn started, and is reaped here, so if none is left and none is
	// started or reaped while the look below runs, it saw the last of what
	// the session wrote.
	alone, reaps, spawns := ok && !othersAlive(), h.reaps, h.spawns
	// Approved, and nothing else of the session could have made it meanwhile.
	shown, approved := h.keep[pid]
	keep := approved && !h.jobsRan.Load() && !othersAlive()
	// A job's end also tells what the guard moved while it ran (no call was
	// in flight then), rather than leaving that to the next call's start.
	var guarded []string
	if h.jobs[pid] {
		guarded, h.guarded = h.guarded, nil
	}
	stopped := h.stopped[pid]
	delete(h.commands, pid)
	delete(h.keep, pid)
	h.soleApproved.CompareAndSwap(int64(pid), 0)
	delete(h.jobs, pid)
	delete(h.stopped, pid)
	h.mu.Unlock()
	if ok {
		// What appeared now appeared while the command ran, when the sandbox
		// could not protect it yet.
		// Of the protected paths, only those the approval named are kept.
		var kept func(string) bool
		if keep {
			kept = func(p string) bool { return named(shown, p) }
		}
		created, moved, _ := h.mounts.protect(func() bool { return !keep }, kept)
		var idle uint64
		if alone {
			h.mu.Lock()
			h.settled = h.reaps == reaps && h.spawns == spawns
			if h.idle() {
				idle = h.started
			}
			h.mu.Unlock()
		}
		moved = append(guarded, moved...)
		h.send(&Message{Op: "exit", ID: id, Status: uint32(ws), Protected: created, Chosen: h.mounts.chosen(created), Quarantined: moved, Removed: h.mounts.takeRemoved(), GitKnown: h.mounts.gitKnown(), Idle: idle, Stopped: stopped}, nil)
		if alone { // the guard's spell may end now (it looks again, under h.mu)
			select {
			case h.quiet <- struct{}{}:
			default: // one is pending
			}
		}
		if idle != 0 && h.mounts.spec.OneShot {
			// Nothing left for the session's end to do (idle), and no
			// command comes: the session ends now, its namespaces' end beside
			// what shellgate does after the command. Held, h.mu keeps any
			// command from starting meanwhile (spawn forks with it held).
			h.mu.Lock()
			if h.started == idle && h.idle() {
				os.Exit(0)
			}
			h.mu.Unlock()
		}
	}
	return true
}

// takeKeepCreated removes the sandbox.KeepCreated entry from env: approved, it was
// there, and the paths it names.
func takeKeepCreated(env []string) (rest, paths []string, approved bool) {
	rest = slices.DeleteFunc(env, func(kv string) bool {
		if !strings.HasPrefix(kv, KeepCreatedVar+"=") {
			return false
		}
		approved = json.Unmarshal([]byte(strings.TrimPrefix(kv, KeepCreatedVar+"=")), &paths) == nil
		return true
	})
	return rest, paths, approved
}

// named reports whether p is one of paths, or holds or is held by one: a
// protected entry (.vscode) the approved command made to write a path it
// was shown (.vscode/settings.json).
func named(paths []string, p string) bool {
	for _, n := range paths {
		if n == p || strings.HasPrefix(n, p+string(os.PathSeparator)) || strings.HasPrefix(p, n+string(os.PathSeparator)) {
			return true
		}
	}
	return false
}
