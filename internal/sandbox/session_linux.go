package sandbox

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/shellgate/shellgate/internal/cachestore"
	"github.com/shellgate/shellgate/internal/cgroup"
	"github.com/shellgate/shellgate/internal/relay"
	"github.com/shellgate/shellgate/internal/runner"
	"github.com/shellgate/shellgate/internal/sandbox/helper"
)

// containing are the layers that contain what the policy cannot check: writes
// only in the root and the session's own /tmp, the secrets hidden, a loopback
// and processes of the session's own, no vsock or io_uring. breaking are the
// other names in Report.Missing whose failure undoes that containment (the
// view's mounts, the protected paths, what the launcher thread gives up).
var (
	containing = []string{LayerFS, LayerNet, LayerPID, LayerTmp, LayerSecrets, LayerSeccomp}
	breaking   = []string{LayerUserNS, "mounts", "view", "protected", LayerFS, LayerNet, LayerPID, LayerSeccomp, "capabilities", "keyring", "no_new_privs"}
)

// A Session is one sandbox: its namespaces, its /tmp, its loopback and its
// processes, held by a helper process. Commands started with Launch share it.
// Where shellgate can make cgroups (Report: procs "cgroup"; on cgroup2 also
// without the pids controller, procs "rlimit"), each command runs in one of
// its own, a runner.TreeLauncher: its timeout or cancellation ends every
// process it started. Elsewhere a descendant that left its process group
// and cleared its environment lives until Close. It is safe for concurrent use.
type Session struct {
	serial uint64 // which session of this process (GitKnown's versions)
	ctl    *helper.Conn
	helper *exec.Cmd
	pidNS  string // the session's PID namespace, as /proc/PID/ns/pid reads
	// slack: the timer slack (ns) of the thread that started the helper,
	// for its commands; 0 where the helper kept it.
	slack  int
	report Report
	root   string        // the first writable path: the project root
	group  *cgroup.Group // nil: no cgroup, and none per command
	procs  int           // the process limit of the session's commands
	// overLimit: the cgroups of the commands stopped for reaching the
	// process limit (watchLimit); wakeLimit starts its watch, which
	// limitDue sends limitEvery after a command started, unless the
	// session has no command's cgroup left by then (limitArm, armed while
	// limitArmed, with mu held).
	overLimit map[string]bool
	// returned: the cgroups of the commands that have exited (their calls
	// returned) while processes they started run on; notes: what the next
	// call is told (TakeNotes).
	returned   map[string]bool
	notes      []string
	onStopped  func(paths []string) // see OnStopped
	wakeLimit  chan struct{}
	limitArm   *time.Timer
	limitArmed bool
	watched    chan struct{} // closed when watchLimit has returned; nil if it never ran
	limitLooks atomic.Int64  // how many looks watchLimit took (tests count them)
	limitWakes atomic.Int64  // how many times its watch started (tests count them)
	fwd        *relay.Server // relays the host ports and the egress proxy (forward_linux.go)
	// bare, where the kernel makes no user namespace, starts each command
	// through the confining wrapper instead of a helper (bare_linux.go).
	bare *runner.Wrapper

	// envMu orders spawns' sends with sentEnv, the env of the last one
	// sent (see message.SameEnv, message.EnvPatch); nil when the next must send its own.
	envMu   sync.Mutex
	sentEnv []string

	mu     sync.Mutex
	nextID uint64
	// cgroupNames numbers the commands' cgroups, some made ahead of their
	// request (makeSpare): nextID numbers requests alone, as isIdle reads it.
	cgroupNames uint64
	started     map[uint64]chan startReply
	exits       map[uint64]chan *message
	trees       map[int]string // a command's PID → its own cgroup
	dead        chan struct{}  // closed when the helper is gone
	gone        chan struct{}  // closed when no more replies will come
	errBuf      bytes.Buffer   // what the helper printed on stderr
	closed      bool
	keep        []string // for the next command's start (KeepReadOnly)
	pinned      []string // protected paths the helper made read-only where they are after the start (Guard)
	// gitKnown: what the helper's git tracker knows (GitKnown), once told,
	// and the how-manieth list it is.
	gitKnown  []string
	gitKnownN int
	// detached: a command of the session has outlived its call (a job, a
	// terminal): what it writes between calls is no user's (GitKnown).
	detached bool
	waitErr  error
	// closing is closed when the helper answers a close request; emptied:
	// the answer said no other process of the session was left.
	closing chan struct{}
	emptied bool
	// idle: the ID of the last request when the helper last said the
	// session's end had nothing left to do (message.Idle), or 0. While no
	// request followed, Close kills the helper without asking it to end
	// the session first: a round trip to a helper that sleeps.
	idle uint64
	// spare is a command's cgroup made ahead of the command that will use
	// it (makeSpare), nil if none; noSpare: the session is closing, and
	// makes none.
	spare   *spareCgroup
	noSpare bool
	// kept: a cgroup2 command cgroup's held directory and cgroup.events
	// (cgroup.Kept), by its path, while it is a command's (trees).
	kept map[string]*cgroup.Kept
	// markersGone is closed once the cache overlays' markers are removed
	// (removeMarkers); nil before the set-up is done.
	markersGone chan struct{}
	// layers: the set of the project's cache layers the session's overlays
	// mount, held until the helper is gone (cachestore.ClaimLayers); nil if
	// none.
	layers *cachestore.Layers
}

// dispatch routes the helper's replies to the waiting Launch and Wait calls.
// When the helper is gone, every command it ran is gone too.
func (s *Session) dispatch() {
	oob := make([]byte, syscall.CmsgSpace(syscall.SizeofUcred)+64)
	for {
		m, got, err := s.ctl.Recv(oob)
		if err != nil {
			break
		}
		s.mu.Lock()
		switch m.Op {
		case "started":
			s.pinned = append(s.pinned, m.Chosen...)
			s.noteGitKnown(m.GitKnown)
			if ch, ok := s.started[m.ID]; ok {
				delete(s.started, m.ID)
				ch <- parseStarted(m, got)
			}
		case "pty":
			if ch, ok := s.started[m.ID]; ok {
				delete(s.started, m.ID)
				r := startReply{fds: helper.FDs(got)}
				if m.Error != "" || len(r.fds) != 2 {
					helper.CloseAll(r.fds)
					r = startReply{err: fmt.Errorf("sandbox: no terminal: %s", m.Error)}
				}
				ch <- r
			}
		case "stopped":
			if !m.Told { // else the commands it ended tell it
				s.notes = append(s.notes, StoppedNote(s.root, m.Quarantined))
			}
			if f := s.onStopped; f != nil {
				go f(m.Quarantined) // not under s.mu
			}
		case "closed":
			s.emptied = m.Empty
			if s.closing != nil {
				close(s.closing)
				s.closing = nil
			}
		case "exit":
			s.idle = m.Idle
			s.pinned = append(s.pinned, m.Chosen...)
			s.noteGitKnown(m.GitKnown)
			if ch, ok := s.exits[m.ID]; ok {
				delete(s.exits, m.ID)
				ch <- m
			}
		}
		s.mu.Unlock()
	}
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	close(s.gone)
}

// Alive reports whether the session still runs: a fork bomb that exhausts the
// process limit can take its helper down, and every process with it.
func (s *Session) Alive() bool {
	select {
	case <-s.gone:
		return false
	case <-s.dead: // before the reply reader has seen the socket close
		return false
	default:
		return true
	}
}

// NetPID is a process in the session's network namespace (its helper), whose
// /proc/PID/net shows the session's sockets.
func (s *Session) NetPID() int {
	if s.bare != nil {
		return os.Getpid() // no network namespace: the host's
	}
	return s.helper.Process.Pid
}

// Report says which layers the session applied.
func (s *Session) Report() Report { return s.report }

var (
	_ runner.TerminalLauncher = (*Session)(nil)
	_ runner.TreeLauncher     = (*Session)(nil)
)

// Guard reports whether the session guards the protected paths of the
// root (Spec.Protected, Spec.Patterns): those there when it started are
// made read-only, and those that appear later are moved to the quarantine
// unless they are the user's own or an approval kept them, in which case
// they are made read-only where they are and listed in pinned (absolute
// paths). A bare session (no user namespace) guards nothing.
func (s *Session) Guard() (pinned []string, guarded bool) {
	if s.bare != nil {
		return nil, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.pinned), true
}

// noteGitKnown keeps what the helper's git tracker knows, with s.mu held.
func (s *Session) noteGitKnown(known []string) {
	if len(known) > 0 {
		s.gitKnown = known[:len(known)-1] // without the "" that marks it sent
		s.gitKnownN++
	}
}

// gitKnownSerial numbers the sessions, for GitKnown's versions.
var gitKnownSerial atomic.Uint64

// GitKnown reports what the session's guard of the root's git state knows:
// the index entries and flags it leaves in place (the user's, or an approved
// command's) as gitstate.Tracker.Known lists them; ok is false until the
// helper has said, for a session that guards nothing, and while no command
// of the session runs or has outlived its call: between calls then only the
// user writes the root, and what they did since the last command is not
// known yet (the guard learns it as the next starts). A checkpoint of the
// root's index kept through gitstate.Without holds no more than the guard
// would leave there. version names the list among all sessions' lists: the
// same version, the same list.
func (s *Session) GitKnown() (known []string, version string, ok bool) {
	if s.bare != nil {
		return nil, "", false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gitKnown == nil || !s.detached && len(s.exits) == 0 {
		return nil, "", false
	}
	return s.gitKnown, fmt.Sprintf("%d.%d", s.serial, s.gitKnownN), true
}

// KeepReadOnly makes paths in the writable root read-only where they are,
// before the next command starts: what runs code later below the root's top
// (a nested repository's git config and hooks, a subproject's .claude), found
// when the session started. Unlike Spec.Protected, a path missing then is not
// waited for, nor moved when it appears.
func (s *Session) KeepReadOnly(paths []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keep = append(s.keep, paths...)
}

// Detach tells the session that the command pid (as shellgate sees it) runs
// on after its call returned, as a job: what appears from now while only
// jobs run is dealt with at once, not at the end of a call that will not
// come.
func (s *Session) Detach(pid int) {
	if s.bare != nil {
		return
	}
	s.mu.Lock()
	s.detached = true
	s.mu.Unlock()
	if inner := s.InnerPIDs([]int{pid}); len(inner) == 1 {
		s.ctl.Send(&message{Op: "detach", Job: inner[0]}, nil)
	}
}

// Idle tells the session's helper that shellgate is idle (its server has
// heard nothing from its client for a while): once no command of the
// session runs, the helper gives up its mappings of the executable's pages,
// as the server does its own, rather than after idleDrop (see
// helper.guard). It does not wait for the helper.
func (s *Session) Idle() {
	if s.bare != nil {
		return
	}
	s.ctl.Send(&message{Op: "idle"}, nil)
}

// Contains reports whether pid is a process of this session.
func (s *Session) Contains(pid int) bool {
	if s.bare != nil {
		return true // commands are shellgate's children, as without a sandbox
	}
	link, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", pid))
	return err == nil && s.pidNS != "" && link == s.pidNS
}

// Processes lists the session's processes, PIDs as shellgate sees them: the
// helper's descendants (as the session's PID 1 the helper inherits every
// orphan). It makes the search for escaped descendants (runner.Lister) read
// a handful of processes instead of every process of the host. ok is false
// where the kernel has no lists of children, or the helper is gone: then the
// caller looks everywhere.
func (s *Session) Processes() (pids []int, ok bool) {
	if s.helper == nil || s.helper.Process == nil {
		return nil, false
	}
	if s.isIdle() { // none, but maybe the helper, which may be gone (Spec.OneShot)
		return nil, true
	}
	return runner.Descendants(s.helper.Process.Pid)
}

// InnerPIDs translates PIDs as shellgate sees them into the session's own
// numbering, which its commands see; a PID outside the session is dropped.
func (s *Session) InnerPIDs(pids []int) []int {
	if s.bare != nil {
		return pids // no PID namespace
	}
	out := make([]int, 0, len(pids))
	for _, pid := range pids {
		if inner := runner.InnerPID(pid); inner > 0 {
			out = append(out, inner)
		}
	}
	return out
}

// Close ends the session: the helper exits, and the kernel kills every process
// left in it. Close returns when they are gone.
func (s *Session) Close() error { return s.CloseBeside(nil) }

// CloseBeside is Close, calling beside (unless nil) once every process of
// the session but its helper is gone, and before it returns: while the
// helper's exit, the kernel's end of the session's namespaces (its mount
// namespace's ~50 mounts), runs. Whatever the session's commands could
// touch (the spill directory, a host temp dir) can be removed there, beside
// that end instead of after it. Where the helper does not answer, beside
// follows its death.
func (s *Session) CloseBeside(beside func()) error {
	if beside == nil {
		beside = func() {}
	}
	if s.bare != nil {
		s.mu.Lock()
		if !s.closed {
			s.closed = true
			close(s.gone) // the runner's Supervisor ends the commands
		}
		s.mu.Unlock()
		beside()
		return nil
	}
	s.fwd.Stop()
	// The helper ends what runs and moves aside what a job left, then
	// answers; it is killed after a moment whatever it does.
	// idle: the helper said there was nothing left for its end to do, and
	// no request followed (message.Idle): the helper and the kernel's end of
	// its namespaces are all that is left to end (a one-shot session's
	// helper may be ending already: Spec.OneShot).
	idle := s.isIdle()
	s.mu.Lock()
	closed, done := s.closed, make(chan struct{})
	if !closed && !idle {
		s.closing = done
	}
	spare, kept := s.spare, s.kept
	s.spare, s.noSpare, s.kept = nil, true, nil
	s.mu.Unlock()
	if spare != nil {
		spare.close() // its directory goes with the rest
	}
	for _, k := range kept {
		k.Close()
	}
	// answered: the helper ended every other process of the session (end)
	// and said none was left, or had nothing to end; only its own exit is
	// left.
	answered := idle
	if !closed && !idle && s.ctl.Send(&message{Op: "close"}, nil) == nil {
		select {
		case <-done:
			s.mu.Lock()
			answered = s.emptied
			s.mu.Unlock()
		case <-s.gone:
		case <-time.After(2 * time.Second):
		}
	}
	s.ctl.Close()
	if s.helper != nil && s.helper.Process != nil {
		s.helper.Process.Signal(syscall.SIGKILL)
		if answered {
			beside()
			beside = func() {}
		}
		<-s.dead
	}
	if s.watched != nil {
		s.limitArm.Stop()
		<-s.watched // it reads the group, which goes now
	}
	beside()
	if s.markersGone != nil {
		<-s.markersGone
	}
	s.layers.Release() // the helper, and its mounts of them, gone
	if s.group != nil {
		return s.group.Remove()
	}
	return nil
}

// isIdle reports whether the helper said, at the end of the last request's
// command, that the session had nothing left for its end to do
// (message.Idle): no process of the session is left but, maybe, the helper.
func (s *Session) isIdle() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.idle != 0 && s.idle == s.nextID
}
