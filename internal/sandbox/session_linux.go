package sandbox

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/shellgate/shellgate/internal/cgroup"
	"github.com/shellgate/shellgate/internal/hint"
	"github.com/shellgate/shellgate/internal/hostscan"
	"github.com/shellgate/shellgate/internal/idmap"
	"github.com/shellgate/shellgate/internal/pidfd"
	"github.com/shellgate/shellgate/internal/quarantinelog"
	"github.com/shellgate/shellgate/internal/relay"
	"github.com/shellgate/shellgate/internal/runner"
	"github.com/shellgate/shellgate/internal/sandbox/helper"
	"golang.org/x/sys/unix"
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
}

// A spareCgroup is what cgroup.Group.Command returned for a command to come.
type spareCgroup struct {
	dir, kind string
	files     []*os.File
}

type startReply struct {
	fds         []int // pty: the master and the slave
	pid         int
	placed      bool     // born in its cgroup
	quarantined []string // protected paths moved aside since the last command
	unkept      []string // paths KeepReadOnly named that stay writable, with why
	err         error
}

// setupTimeout bounds how long a session may take to start.
const setupTimeout = 10 * time.Second

// Start creates a session. The error says which step failed; a session that
// started may still lack layers, which Report lists.
func Start(spec Spec) (*Session, error) { return Prestart(spec.Network, spec.Limits).Start(spec) }

// An Early is a session's helper started before the session's spec is
// known (Prestart): its start, a second start of this executable in new
// namespaces, overlaps what its caller does until then (a one-shot run's
// policy check and spec) instead of following it. Start sends it its set-up;
// Discard ends it. Each Early is used once, by one of the two.
type Early struct {
	network bool   // whether it shares the host's network namespace
	limits  Limits // its cgroup's
	done    chan struct{}
	// warmed is closed when the namespace the host's facts need was made
	// (as root; see warm).
	warmed chan struct{}
	// Set before done is closed: the started helper, or why it could not
	// start.
	s   *Session
	cg  *sessionCgroup
	err error

	mu   sync.Mutex
	used bool
}

// Prestart starts a session's helper for a spec whose Network and Limits are
// these, in the background: Prestart returns at once. Its caller must Start
// or Discard it.
func Prestart(network bool, limits Limits) *Early {
	e := &Early{network: network, limits: limits, done: make(chan struct{}), warmed: make(chan struct{})}
	go func() {
		defer close(e.done)
		e.s, e.cg, e.err = fork(network, limits)
	}()
	go func() {
		defer close(e.warmed)
		warm()
	}()
	return e
}

// warm makes, as root, the user namespace the host's facts need to show /etc
// and /var as others see them (idmap.Works; once per process), beside the
// helper's start rather than after the spec: a child started and killed.
func warm() {
	if os.Geteuid() != 0 {
		return
	}
	for _, d := range rootDirs {
		idmap.Works(d)
	}
}

// use marks e used, and reports whether it was not yet.
func (e *Early) use() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	was := e.used
	e.used = true
	return !was
}

// Start sets up the helper e started for spec, and returns its session, as
// sandbox.Start(spec) would. A helper started for another network or other
// limits than spec's, or one already used, is ended, and a new one started.
// A nil e starts a new one.
func (e *Early) Start(spec Spec) (*Session, error) {
	switch {
	case e == nil:
		return Start(spec)
	case spec.Network != e.network || spec.Limits != e.limits:
		e.Discard()
		return Start(spec)
	case !e.use():
		return Start(spec)
	}
	if spec.Home == "" { // the helper starts with an environment of its own
		spec.Home, _ = os.UserHomeDir()
	}
	var log *os.File
	if spec.QuarantineLog != "" {
		if f, err := quarantinelog.Open(spec.QuarantineLog); err == nil {
			defer f.Close() // sent: the helper holds it
			log = f
		} else {
			spec.QuarantineLog = "" // the helper must not take a descriptor for it
		}
	}
	// What the plan needs of the host (as root, a walk of /etc and /var),
	// gathered while the helper starts, which takes as long.
	facts := make(chan Facts, 1)
	go func() { facts <- SessionFacts(spec) }()
	<-e.done
	if e.err != nil {
		var no *noUserNS
		if errors.As(e.err, &no) {
			// What needs no namespace still applies (bare_linux.go).
			if s, berr := startBare(spec, no.why); berr == nil {
				return s, nil
			}
		}
		return nil, e.err
	}
	s := e.s
	if len(spec.Writable) > 0 {
		s.root = spec.Writable[0]
	}
	if err := s.setUp(spec, facts, e.cg, log); err != nil {
		s.Close()
		return nil, err
	}
	go s.dispatch()
	if s.group != nil {
		s.limitArm = time.AfterFunc(time.Hour, s.limitDue)
		s.limitArm.Stop()
		s.watched = make(chan struct{})
		go func() {
			defer close(s.watched)
			s.watchLimit()
		}()
	}
	return s, nil
}

// Discard ends the helper e started, unless Start took it: when it returns,
// the helper is gone and its cgroup removed. A nil e is nothing to end.
func (e *Early) Discard() {
	if e == nil || !e.use() {
		return
	}
	<-e.done
	if e.s != nil {
		e.s.abandon()
	}
	<-e.warmed // its child gone too
}

// fork starts a session's helper, in a cgroup of its own where it can, and
// returns the session it will hold once set up.
func fork(network bool, limits Limits) (*Session, *sessionCgroup, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("sandbox: control socket: %w", err)
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "sandbox-control"), os.NewFile(uintptr(fds[1]), "sandbox-control")
	defer theirs.Close()
	if err := unix.SetsockoptInt(fds[0], unix.SOL_SOCKET, unix.SO_PASSCRED, 1); err != nil {
		ours.Close()
		return nil, nil, fmt.Errorf("sandbox: control socket: %w", err)
	}
	fc, err := net.FileConn(ours)
	ours.Close()
	if err != nil {
		return nil, nil, fmt.Errorf("sandbox: control socket: %w", err)
	}
	s := &Session{
		serial:  gitKnownSerial.Add(1),
		ctl:     helper.NewConn(unixTransport{fc.(*net.UnixConn)}),
		started: map[uint64]chan startReply{},
		exits:   map[uint64]chan *message{},
		trees:   map[int]string{},
		dead:    make(chan struct{}),

		overLimit: map[string]bool{},
		returned:  map[string]bool{},
		wakeLimit: make(chan struct{}, 1),
		gone:      make(chan struct{}),
	}
	// On cgroup2 the helper is born in its cgroup, made first. Elsewhere
	// (v1, hybrid) it joins its cgroups beside its set-up (setUp), and they
	// are made beside its start.
	var cg *sessionCgroup
	made := make(chan struct{})
	birth := -1
	if cgroup.IsV2(cgroup.Root) {
		cg = s.makeCgroup(limits)
		close(made)
		if s.group != nil {
			if fd, ok := s.group.BirthFD(); ok {
				defer unix.Close(fd)
				birth = fd
			}
		}
	} else {
		go func() {
			defer close(made)
			cg = s.makeCgroup(limits)
		}()
	}
	born, err := s.startHelper(network, theirs, birth)
	<-made
	if err != nil {
		fc.Close()
		if s.group != nil {
			s.group.Remove()
		}
		return nil, nil, err
	}
	cg.born = born
	return s, cg, nil
}

// abandon ends a helper that was never set up: it is killed, reaped, and its
// cgroup removed.
func (s *Session) abandon() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.ctl.Close()
	s.helper.Process.Signal(syscall.SIGKILL)
	<-s.dead
	if s.group != nil {
		s.group.Remove()
	}
}

// startHelper starts the helper in new namespaces. It has no parent-death
// signal: when shellgate dies, its end of the control socket closes, and the
// helper ends the session itself (kills everything, moves aside what a command
// in flight made at the root) before it exits.
// ctl is the helper's end of the control socket; network: it shares the
// host's network namespace; birth, unless -1, is the cgroup it is born in
// (Group.BirthFD), and born reports whether it was.
func (s *Session) startHelper(network bool, ctl *os.File, birth int) (born bool, err error) {
	uid, gid := os.Getuid(), os.Getgid()
	flags := uintptr(unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWPID | unix.CLONE_NEWIPC)
	if !network {
		flags |= unix.CLONE_NEWNET
	}
	pfd := -1
	command := func(birth int) *exec.Cmd {
		return &exec.Cmd{
			Path: "/proc/self/exe",
			Args: []string{helper.Arg0},
			// Nothing of shellgate's own environment reaches the session. One
			// processor keeps the helper's threads few, under the process limit.
			Env:        []string{"GOMAXPROCS=1"},
			Dir:        "/",
			ExtraFiles: []*os.File{ctl},
			Stderr:     &helperStderr{mu: &s.mu, b: &s.errBuf},
			SysProcAttr: &syscall.SysProcAttr{
				Cloneflags:  flags,
				UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
				GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
				// Caps survive the exec of a non-root user only as ambient ones.
				AmbientCaps: []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_NET_ADMIN, unix.CAP_SETPCAP, unix.CAP_SYS_RESOURCE, unix.CAP_DAC_OVERRIDE},
				Setpgid:     true,
				PidFD:       &pfd,
				UseCgroupFD: birth >= 0,
				CgroupFD:    birth,
			},
		}
	}
	var cmd *exec.Cmd
	startErr := make(chan error, 1)
	go func() {
		// The helper inherits the timer slack of the thread that starts
		// it, and its threads that of the helper (see helper.TimerSlack). The
		// commands get this thread's own back (message.Slack).
		runtime.LockOSThread()
		if old, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0); err == nil && old > 0 && old < helper.TimerSlack {
			if unix.Prctl(unix.PR_SET_TIMERSLACK, helper.TimerSlack, 0, 0, 0) == nil {
				s.slack = old
			}
		}
		cmd = command(birth)
		err := cmd.Start()
		if err != nil && birth >= 0 {
			// Born elsewhere, then moved in: the cgroup may refuse a birth
			// it would allow as a move, and the namespaces must not be
			// blamed for that.
			birth = -1
			cmd = command(birth)
			err = cmd.Start()
		}
		if s.slack > 0 {
			unix.Prctl(unix.PR_SET_TIMERSLACK, uintptr(s.slack), 0, 0, 0)
		}
		runtime.UnlockOSThread()
		if err != nil {
			startErr <- err
			return
		}
		born = birth >= 0
		startErr <- nil
		pidfd.AwaitExit(pfd)
		err = cmd.Wait()
		s.mu.Lock()
		s.waitErr = err
		s.mu.Unlock()
		close(s.dead)
	}()
	if err := <-startErr; err != nil {
		return false, noNamespaces(err)
	}
	s.helper = cmd
	return born, nil
}

// noUserNS is the error of a session whose user namespace the kernel
// refused: every other namespace of it is made in that one.
type noUserNS struct{ why string }

func (e *noUserNS) Error() string {
	return LayerUserNS + ": " + e.why + ", so there is no sandbox session: no fs, net, pid, tmp or secrets layer"
}

// noNamespaces says why the session's namespaces could not be made, as the
// kernel's refusal tells it, for the report: one line, the layer first.
func noNamespaces(err error) error {
	switch {
	case errors.Is(err, unix.EPERM), errors.Is(err, unix.EACCES):
		return &noUserNS{"the kernel refuses user namespaces here (EPERM: a container's seccomp profile, as Docker's default, or a kernel setting)"}
	case errors.Is(err, unix.ENOSPC), errors.Is(err, unix.EUSERS):
		return &noUserNS{"no user namespace may be made (ENOSPC: user.max_user_namespaces is 0 or reached)"}
	case errors.Is(err, unix.EINVAL), errors.Is(err, unix.ENOSYS):
		return &noUserNS{"this kernel has no user namespaces (EINVAL)"}
	}
	return fmt.Errorf("sandbox: cannot create the session's namespaces: %w", err)
}

// setUp moves the helper into its cgroup where it was not born in it, sends
// it the spec and the plan made with facts (and log, the quarantine log, with
// Spec.QuarantineLog), and waits for its report.
func (s *Session) setUp(spec Spec, facts <-chan Facts, cg *sessionCgroup, log *os.File) error {
	pid := s.helper.Process.Pid
	if link, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", pid)); err == nil {
		s.pidNS = link
	}
	// The helper moves into its cgroup while it sets up its view: a move
	// waits for an RCU grace period, ~10 ms after the machine was idle. It
	// forks nothing before its first command, which waits for both.
	grouped := make(chan struct{})
	go func() {
		defer close(grouped)
		if s.group != nil && !cg.born {
			if err := s.group.Join(pid); err != nil {
				s.group.Remove()
				s.group = nil
				cg.noCgroup(err)
			}
		}
	}()
	defer func() { <-grouped }()
	steps, trees := planWithTrees(spec, <-facts)
	fds := make([]int, len(trees))
	for i, t := range trees {
		fds[i] = int(t.Fd())
		defer t.Close() // sent: the helper holds them
	}
	if log != nil { // last, after the trees
		fds = append(fds, int(log.Fd()))
	}
	for i := range steps { // doctor --plan's; the helper has no use for it
		steps[i].Why = ""
	}
	if err := s.ctl.Send(&message{Op: "setup", Spec: spec.wire(), Steps: steps, UID: os.Getuid(), GID: os.Getgid(), Slack: s.slack, UserCounts: sessionUserCounts()}, helper.UnixRights(fds)); err != nil {
		return s.helperError("sending the setup", err)
	}
	type result struct {
		m   *message
		oob []byte // the host ports' listening sockets
		err error
	}
	got := make(chan result, 1)
	go func() {
		m, oob, err := s.ctl.Recv(make([]byte, syscall.CmsgSpace(4*2*(MaxHostPorts+1))))
		got <- result{m, oob, err}
	}()
	select {
	case r := <-got:
		if r.err != nil || r.m.Op != "ready" {
			return s.helperError("setting up", r.err)
		}
		<-grouped
		if s.group != nil {
			if err := s.homeLauncher(cg); err != nil {
				return err
			}
		}
		layers := cg.layers
		for k, v := range r.m.Layers {
			layers[k] = v
		}
		s.report = Report{Layers: layers, Missing: append(cg.missing, r.m.Missing...)}
		s.fwd = forwardHostPorts(r.m.Ports, helper.FDs(r.oob), r.m.Egress, spec.EgressHandler, &s.report)
		return nil
	case <-time.After(setupTimeout):
		return errors.New("sandbox: the session helper did not set up within 10s")
	}
}

// homeLauncher puts the helper's launcher thread, which forks every command,
// in the commands' cgroup on v1 (cgroup.Group.LauncherFile), now that the
// helper is in the session's: its commands are charged to the process limit,
// and its other threads are not. Where the thread cannot go, the limit is the
// whole session's instead, the helper's threads counted too; where that
// cannot be either, cg says the session has no process limit.
func (s *Session) homeLauncher(cg *sessionCgroup) error {
	f, err := s.group.LauncherFile()
	if f == nil && err == nil {
		return nil // cgroup2: the commands are born below the limit
	}
	if err == nil {
		err = s.ctl.Send(&message{Op: "launcher-cgroup"}, syscall.UnixRights(int(f.Fd())))
		f.Close()
		if err != nil {
			return s.helperError("sending the commands' cgroup", err)
		}
		m, _, rerr := s.ctl.Recv(nil)
		switch {
		case rerr != nil || m.Op != "launcher-cgroup":
			return s.helperError("placing the launcher", rerr)
		case m.Error != "":
			err = errors.New(m.Error)
		}
	}
	if err != nil {
		if uerr := s.group.Unlimit(s.procs); uerr != nil {
			cg.layers[LayerProcs] = "rlimit"
			cg.missing = append(cg.missing, fmt.Sprintf("%s: the session's commands have no process limit: %v; %v", LayerProcs, err, uerr))
		}
	}
	return nil
}

// limitEvery is how often the session looks whether its commands have
// reached the process limit, while a command runs; limitJobsEvery is how
// often at most while only jobs left by commands that have ended run (a dev
// server between calls), once looks find nothing new: what those start is
// held by the limit all the same, and a session kept for hours need not
// wake ten times a second.
const (
	limitEvery     = 100 * time.Millisecond
	limitJobsEvery = time.Second
)

// watchLimit stops a command that reaches the session's process limit: a
// fork bomb keeps the limit reached for as long as it runs, and meanwhile no
// other command or job of the session can start a process. When the limit
// has refused a fork since the last look (cgroup.Group.LimitHits) and the
// commands still hold it (cgroup.Group.AtLimit: not a bomb that has ended on
// its own meanwhile), the command whose cgroup holds the most processes and
// threads is killed with everything it started; its Notes say why. It looks
// first once a command has run limitEvery (limitDue), then every
// limitEvery while a command runs, less often (doubling up to
// limitJobsEvery) while only left jobs do, and not at all while the session
// has no commands' cgroups: an idle session costs no wake-ups, nor does a
// command that ends sooner leaving nothing behind (most of an agent's).
func (s *Session) watchLimit() {
	last, ok := s.group.LimitHits(nil)
	if !ok {
		return
	}
	t := time.NewTimer(limitEvery)
	t.Stop()
	defer t.Stop()
	for {
		select {
		case <-s.wakeLimit: // a command has run limitEvery: look now
		case <-s.dead:
			return
		}
		s.limitWakes.Add(1)
		every := limitEvery
		for first := true; ; first = false {
			if !first {
				select {
				case <-t.C:
				case <-s.wakeLimit: // another command has run limitEvery: at its pace
					every = limitEvery
				case <-s.dead:
					return
				}
			}
			trees, running := s.liveTrees()
			if len(trees) == 0 {
				break
			}
			s.limitLooks.Add(1)
			n, _ := s.group.LimitHits(trees)
			if current, at := s.group.AtLimit(); n > last && at {
				s.stopOverLimit(trees, current)
				trees, _ = s.liveTrees()
				last, _ = s.group.LimitHits(trees)
				every = limitEvery
			} else {
				if n == last && !running {
					every = min(2*every, limitJobsEvery)
				} else {
					every = limitEvery
				}
				last = n
			}
			t.Reset(every)
		}
	}
}

// liveTrees lists the commands' cgroups, and whether any command's call is
// still running (not only jobs left by commands that have ended).
func (s *Session) liveTrees() (trees []string, running bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	trees = make([]string, 0, len(s.trees))
	for _, t := range s.trees {
		trees = append(trees, t)
		running = running || !s.returned[t]
	}
	return trees, running
}

// stopOverLimit kills the command of trees whose cgroup holds the most
// tasks, the one that took the limit, and waits (up to a second) for them
// to be gone, so that what they meanwhile failed to fork is not blamed on
// another. Unless that command holds at least half of the current charge:
// a bomb that has just ended leaves its processes charged until the
// session's PID 1 reaps them, listed in no cgroup, and the largest cgroup
// then is an innocent job's (the next look decides again).
func (s *Session) stopOverLimit(trees []string, current int64) {
	var top string
	most := 0
	for _, t := range trees {
		if n := cgroup.Tasks(t); n > most {
			top, most = t, n
		}
	}
	if top == "" || int64(most)*2 < current {
		return
	}
	s.mu.Lock()
	s.overLimit[top] = true
	left := s.returned[top]
	s.mu.Unlock()
	deadline := time.Now().Add(time.Second)
	for ; time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		s.group.KillAll(top, s.helper.Process.Pid, syscall.SIGKILL)
		if len(cgroup.Tree(top, s.helper.Process.Pid)) == 0 {
			break
		}
	}
	// Told once the session can start processes again (its PID 1 has
	// reaped what was killed): a command run on reading the note starts.
	for ; time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, at := s.group.AtLimit(); !at {
			break
		}
	}
	if left {
		s.mu.Lock()
		s.notes = append(s.notes, LeftOverLimitNote(s.procs))
		s.mu.Unlock()
	}
}

// TakeNotes returns, once, what the session did since the last call that
// no call's envelope told: processes a command left running, stopped for
// reaching the process limit after its call had returned.
func (s *Session) TakeNotes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	notes := s.notes
	s.notes = nil
	return notes
}

// OnStopped has f called with the protected paths (absolute) a process of
// the session made again after the sandbox had moved them aside, each time
// the helper ended every process of the session for it (its stopIfAgain),
// as it happens: the Gate writes it to the audit log.
func (s *Session) OnStopped(f func(paths []string)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onStopped = f
}

// StoppedNote tells that the session's processes were ended because one of
// them made the protected paths again (absolute, under root) after the
// sandbox had moved them aside.
func StoppedNote(root string, paths []string) string {
	names := make([]string, len(paths))
	for i, p := range paths {
		names[i] = p
		if r, err := filepath.Rel(root, p); err == nil && root != "" && filepath.IsLocal(r) {
			names[i] = r
		}
	}
	return fmt.Sprintf("Stopped: a process of this session made %s again after the sandbox had moved it aside, where git or tools outside the sandbox would obey it, so shellgate ended every process of the session (its background jobs, and any command running then) and moved it aside again. The session and its /tmp go on. The user can review what was moved into the quarantine.", strings.Join(names, ", "))
}

// sessionCgroup is what the session's cgroup gives: the layers it makes,
// what is missing, and whether the helper was born in it.
type sessionCgroup struct {
	layers  map[string]string
	missing []string
	memory  int64
	born    bool
}

// makeCgroup makes the session's cgroup where it can (s.group), before the
// helper starts, so that on cgroup2 the helper is born in it: limited to
// limits.Procs processes and limits.Memory bytes (0: the default, best
// effort: without the memory controller the session keeps its per-command
// cgroups, and the report says so).
func (s *Session) makeCgroup(limits Limits) *sessionCgroup {
	procs := cmp.Or(max(limits.Procs, 0), DefaultProcs)
	s.procs = procs
	memory := limits.Memory
	byDefault := memory == 0
	if byDefault {
		memory = DefaultMemory()
	}
	cg := &sessionCgroup{layers: map[string]string{}, memory: memory}
	g, err := cgroup.Make(procs, memory)
	if err != nil && byDefault && memory > 0 {
		if g, err = cgroup.Make(procs, 0); err == nil {
			g.Lack("memory", "no memory cgroup controller: the default limit does not apply")
		}
	}
	if err != nil {
		cg.noCgroup(err)
		return cg
	}
	s.group = g
	cg.layers[LayerProcs] = "cgroup"
	if why, ok := g.Missing["pids"]; ok {
		cg.layers[LayerProcs] = "rlimit"
		if os.Getuid() == 0 {
			cg.missing = append(cg.missing, fmt.Sprintf("%s: %s (the process limit does not bind root)", LayerProcs, why))
		}
	}
	if why, ok := g.Missing["memory"]; ok {
		cg.missing = append(cg.missing, "memory: "+why)
	} else if memory > 0 {
		cg.layers[LayerMemory] = strconv.FormatInt(memory>>20, 10) + "MiB"
	}
	return cg
}

// noCgroup records that the session has no cgroup, for err.
func (cg *sessionCgroup) noCgroup(err error) {
	cg.layers = map[string]string{LayerProcs: "rlimit"}
	cg.missing = nil
	if os.Getuid() == 0 {
		cg.missing = append(cg.missing, fmt.Sprintf("%s: shellgate cannot make a cgroup (%v), and RLIMIT_NPROC does not bind root", LayerProcs, err))
	}
	if cg.memory > 0 {
		cg.missing = append(cg.missing, fmt.Sprintf("%s: shellgate cannot make a cgroup (%v), so the session has no memory limit", LayerMemory, err))
	}
}

func (s *Session) helperError(step string, err error) error {
	select {
	case <-s.dead:
	case <-time.After(time.Second):
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if msg := bytes.TrimSpace(s.errBuf.Bytes()); len(msg) > 0 {
		return fmt.Errorf("sandbox: %s failed: %s", step, msg)
	}
	if err == nil {
		err = s.waitErr
	}
	return fmt.Errorf("sandbox: %s failed: %v", step, err)
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

func parseStarted(m *message, oob []byte) startReply {
	if m.Error != "" {
		if m.Errno != 0 {
			return startReply{err: &os.PathError{Op: "exec", Path: "", Err: syscall.Errno(m.Errno)}}
		}
		return startReply{err: errors.New(m.Error)}
	}
	pid, err := helper.Creds(oob)
	if err == nil && pid <= 0 {
		err = errors.New("sandbox: the command's PID is not visible from here")
	}
	return startReply{pid: pid, placed: m.Placed, quarantined: m.Quarantined, unkept: m.Unkept, err: err}
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

// Launch starts argv in the session; see runner.Launcher.
func (s *Session) Launch(argv, env []string, dir string, stdin, stdout, stderr *os.File, extra ...*os.File) (runner.Launched, error) {
	if s.bare != nil {
		return s.bareLaunch(func() (runner.Launched, error) { return s.bare.Launch(argv, env, dir, stdin, stdout, stderr, extra...) })
	}
	return s.launch(&message{Argv: argv, Env: env, Dir: dir}, stdin, stdout, stderr, extra...)
}

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

// OpenTerminal opens a pseudo-terminal of cols×rows cells in the session's own
// devpts (see runner.TerminalOpener): the command's tty is named there, and the
// host's terminals are not in the session at all.
func (s *Session) OpenTerminal(cols, rows int) (master, slave *os.File, err error) {
	if cols <= 0 || rows <= 0 || cols > 0xffff || rows > 0xffff {
		return nil, nil, fmt.Errorf("sandbox: terminal size %dx%d", cols, rows)
	}
	if s.bare != nil {
		return runner.OpenTerminal(cols, rows) // no devpts of the session's own
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, nil, errors.New("sandbox: the session has ended")
	}
	s.detached = true // a terminal's command is a job
	s.nextID++
	id := s.nextID
	got := make(chan startReply, 1)
	s.started[id] = got
	s.mu.Unlock()
	if err := s.ctl.Send(&message{Op: "pty", ID: id, Cols: cols, Rows: rows}, nil); err != nil {
		s.forget(id)
		return nil, nil, fmt.Errorf("sandbox: the session is gone: %w", err)
	}
	r := s.await(got, "open a terminal")
	if r.err != nil {
		s.forget(id)
		return nil, nil, r.err
	}
	return os.NewFile(uintptr(r.fds[0]), "/dev/ptmx"), os.NewFile(uintptr(r.fds[1]), "pty"), nil
}

// LaunchTerminal starts argv in the session on a terminal; see
// runner.TerminalLauncher. The terminal is the one given: one OpenTerminal
// opened has a name in the session; another works, nameless there.
func (s *Session) LaunchTerminal(argv, env []string, dir string, tty *os.File) (runner.Launched, error) {
	if tty == nil {
		return nil, errors.New("sandbox: LaunchTerminal needs a terminal")
	}
	if s.bare != nil {
		return s.bareLaunch(func() (runner.Launched, error) { return s.bare.LaunchTerminal(argv, env, dir, tty) })
	}
	return s.launch(&message{Argv: argv, Env: env, Dir: dir, Terminal: true}, tty, nil, nil)
}

// launch sends a spawn request with the files that are set, and waits for the
// command to start.
func (s *Session) launch(m *message, stdin, stdout, stderr *os.File, extra ...*os.File) (runner.Launched, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, goneError("sandbox: the session has ended")
	}
	s.nextID++
	id := s.nextID
	started, exit := make(chan startReply, 1), make(chan *message, 1)
	s.started[id], s.exits[id] = started, exit
	m.Keep, s.keep = s.keep, nil
	s.mu.Unlock()

	m.Op, m.ID = "spawn", id
	var fds []int
	for _, f := range []*os.File{stdin, stdout, stderr} {
		if f != nil {
			fds = append(fds, int(f.Fd()))
		}
	}
	m.Stdin, m.Stdout, m.Stderr = stdin != nil && !m.Terminal, stdout != nil, stderr != nil
	for _, f := range extra {
		fds = append(fds, int(f.Fd()))
	}
	m.Extra = len(extra)
	var tree string // the command's own cgroup
	if s.group != nil {
		c := s.takeSpare()
		if c == nil {
			s.mu.Lock()
			s.cgroupNames++
			name := s.cgroupNames
			s.mu.Unlock()
			if dir, kind, files, err := s.group.Command(name); err == nil {
				c = &spareCgroup{dir, kind, files}
			}
		}
		if c != nil {
			tree, m.Cgroup = c.dir, c.kind
			defer cgroup.CloseFiles(c.files)
			for _, f := range c.files {
				fds = append(fds, int(f.Fd()))
			}
		}
	}
	var oob []byte
	if len(fds) > 0 {
		oob = syscall.UnixRights(fds...)
	}
	// The helper takes spawns in the order they are sent: compared and sent
	// under one lock, the last env sent is the one it keeps.
	s.envMu.Lock()
	env := m.Env
	if patch, ok := envPatch(s.sentEnv, env); ok {
		m.Env, m.SameEnv, m.EnvPatch = nil, true, patch
	}
	err := s.ctl.Send(m, oob)
	if s.sentEnv = slices.Clone(env); err != nil {
		s.sentEnv = nil // sent or not: the next one says it all
	}
	s.envMu.Unlock()
	runtime.KeepAlive(stdin)
	runtime.KeepAlive(stdout)
	runtime.KeepAlive(stderr)
	runtime.KeepAlive(extra)
	if err != nil {
		s.forget(id)
		return nil, s.sendFailed(err)
	}
	r := s.await(started, "start the command")
	if r.err != nil {
		s.forget(id)
		if tree != "" {
			os.Remove(tree)
		}
		return nil, r.err
	}
	l := &launched{pid: r.pid, placed: r.placed, exit: exit, gone: s.gone, root: s.root, before: r.quarantined, unkept: r.unkept}
	if tree != "" {
		if !r.placed && s.Contains(r.pid) {
			os.WriteFile(tree+"/cgroup.procs", []byte(strconv.Itoa(r.pid)), 0)
		}
		s.mu.Lock()
		s.trees[r.pid] = tree
		// The watch starts once a command has run limitEvery, as it
		// looked first then: a command that ends sooner, as most do,
		// costs it no wake-up (see release).
		if !s.limitArmed && s.limitArm != nil {
			s.limitArmed = true
			s.limitArm.Reset(limitEvery)
		}
		s.mu.Unlock()
		l.exited = func() {
			s.mu.Lock()
			if s.overLimit[tree] {
				l.limit = s.procs
			}
			s.returned[tree] = true
			s.mu.Unlock()
			s.release(r.pid, tree)
		}
		// While the command runs, the next one's cgroup: its mkdir is no
		// longer on that command's way to its start.
		s.makeSpare()
	}
	return l, nil
}

// maxEnvPatch is how many entries of a spawn's env may differ from the last
// one's for it to be sent as a patch (message.EnvPatch) rather than whole.
const maxEnvPatch = 8

// envPatch is env as a patch of last, the env the helper kept from the last
// spawn: the entries that differ, by index, when env is as long and few
// differ; ok false when env is to be sent whole. Each call of a Supervisor
// marks its command's env with a run marker of its own (runner.MarkerVar),
// so that a session's commands' envs differ in that entry alone, and a
// comparison of the whole env never found one the same.
func envPatch(last, env []string) (patch []helper.EnvEntry, ok bool) {
	if last == nil || len(env) != len(last) {
		return nil, false
	}
	for i, kv := range env {
		if kv == last[i] {
			continue
		}
		if len(patch) == maxEnvPatch {
			return nil, false
		}
		patch = append(patch, helper.EnvEntry{I: i, KV: kv})
	}
	return patch, true
}

// takeSpare returns the spare cgroup, if there is one, for a command to use.
func (s *Session) takeSpare() *spareCgroup {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.spare
	s.spare = nil
	return c
}

// makeSpare makes a command's cgroup ahead of the command, unless there is a
// spare already or the session is closing. A cgroup it makes as Close
// begins is removed again; one made before is Close's to remove with the
// rest (cgroup.Group.Remove).
func (s *Session) makeSpare() {
	s.mu.Lock()
	if s.spare != nil || s.noSpare {
		s.mu.Unlock()
		return
	}
	s.cgroupNames++
	id := s.cgroupNames // its name's
	s.mu.Unlock()
	dir, kind, files, err := s.group.Command(id)
	if err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.spare != nil || s.noSpare {
		cgroup.CloseFiles(files)
		syscall.Rmdir(dir)
		return
	}
	s.spare = &spareCgroup{dir, kind, files}
}

// goneError is a request's error once the session's helper is gone: the
// runner then starts the command in a new session (runner.ErrLauncherGone).
type goneError string

func (e goneError) Error() string { return string(e) }

func (goneError) Is(target error) bool { return target == runner.ErrLauncherGone }

// sendFailed is the error of a request the helper could not be sent: gone,
// if it is gone (the reply reader sees it at once).
func (s *Session) sendFailed(err error) error {
	select {
	case <-s.gone:
		return fmt.Errorf("%w: %v", goneError("sandbox: the session is gone"), err)
	case <-time.After(time.Second):
		return fmt.Errorf("sandbox: the session is gone: %w", err)
	}
}

// await waits for the helper's answer to a request, what says what it asked
// for in the error when none comes.
func (s *Session) await(got chan startReply, what string) startReply {
	select {
	case r := <-got:
		return r
	case <-s.gone:
		return startReply{err: goneError("sandbox: the session ended")}
	case <-time.After(setupTimeout):
		return startReply{err: errors.New("sandbox: the session did not " + what + " within 10s")}
	}
}

// Tree lists the live processes of command pid's cgroup — all it started,
// wherever they went — as runner.TreeLauncher asks. A cgroup found empty is
// removed.
func (s *Session) Tree(pid int) []int {
	tree := s.tree(pid)
	if tree == "" {
		return nil
	}
	pids := cgroup.Tree(tree, s.helper.Process.Pid)
	if len(pids) == 0 {
		s.release(pid, tree)
	}
	return pids
}

// KillTree signals every process of command pid's cgroup.
func (s *Session) KillTree(pid int, sig syscall.Signal) {
	if tree := s.tree(pid); tree != "" {
		s.group.KillAll(tree, s.helper.Process.Pid, sig)
	}
}

func (s *Session) tree(pid int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.trees[pid]
}

// release removes command pid's cgroup if nothing is left in it: a command
// that left background processes keeps it until they are gone, or until Close.
func (s *Session) release(pid int, tree string) {
	// A cgroup is a directory: rmdir alone (os.Remove tries unlink first).
	if err := syscall.Rmdir(tree); err != nil && err != syscall.ENOENT {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.trees[pid] == tree {
		delete(s.trees, pid)
		delete(s.overLimit, tree)
		delete(s.returned, tree)
	}
	if len(s.trees) == 0 && s.limitArmed {
		s.limitArm.Stop()
		s.limitArmed = false
	}
}

// limitDue starts the limit's watch (watchLimit), limitEvery after a
// command's start.
func (s *Session) limitDue() {
	s.mu.Lock()
	s.limitArmed = false
	s.mu.Unlock()
	select {
	case s.wakeLimit <- struct{}{}:
	default:
	}
}

func (s *Session) forget(id uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.started, id)
	delete(s.exits, id)
}

type launched struct {
	pid    int
	placed bool   // born in its own cgroup
	root   string // the project root, to name protected paths by
	exit   chan *message
	gone   chan struct{}
	exited func() // nil, or called once the command has exited
	once   sync.Once
	ws     syscall.WaitStatus
	// protected paths that appeared while the command ran: made read-only, or
	// moved to the quarantine ("path → where"); before it started, moved
	protected, quarantined, before []string
	removed                        []string // what was undone in .git
	unkept                         []string // see startReply
	// limit: the process limit the command reached, for which the session
	// stopped it (watchLimit); 0 if it did not.
	limit int
	// stopped: the protected paths made again for which the helper ended
	// every process of the session, this command among them.
	stopped []string
}

func (l *launched) PID() int { return l.pid }

// Placed reports whether the command was born in its own cgroup, rather than
// moved there once started.
func (l *launched) Placed() bool { return l.placed }

func (l *launched) Wait() (*int, string) {
	l.once.Do(func() {
		select {
		case m := <-l.exit:
			l.ws, l.protected, l.quarantined, l.removed, l.stopped = syscall.WaitStatus(m.Status), m.Protected, m.Quarantined, m.Removed, m.Stopped
		case <-l.gone: // the session ended, and the kernel killed everything in it
			select {
			case m := <-l.exit:
				l.ws, l.protected, l.quarantined, l.removed, l.stopped = syscall.WaitStatus(m.Status), m.Protected, m.Quarantined, m.Removed, m.Stopped
			default:
				l.ws = syscall.WaitStatus(syscall.SIGKILL)
			}
		}
		if l.exited != nil {
			l.exited()
		}
	})
	if l.ws.Signaled() {
		return nil, unix.SignalName(l.ws.Signal())
	}
	code := l.ws.ExitStatus()
	return &code, ""
}

// Notes tells what the sandbox did around the command (see hint.Did).
func (l *launched) Notes() []string {
	notes := hint.Did{Root: l.root, Before: l.before, Quarantined: l.quarantined, Removed: l.removed,
		Unkept: l.unkept, Protected: l.protected}.Notes()
	if l.limit > 0 {
		notes = append([]string{OverLimitNote(l.limit)}, notes...)
	}
	if len(l.stopped) > 0 {
		notes = append([]string{StoppedNote(l.root, l.stopped)}, notes...)
	}
	return notes
}

// LeftOverLimitNote tells that processes a command left running after its
// call returned were stopped for reaching the session's process limit.
func LeftOverLimitNote(procs int) string {
	return fmt.Sprintf("Stopped: processes an earlier command left running after its call returned reached the sandbox session's limit of %d processes and threads, so shellgate killed them and everything they started. The session, its background jobs and its /tmp go on.", procs)
}

// OverLimitNote tells that a command was stopped for reaching the session's
// process limit of procs.
func OverLimitNote(procs int) string {
	return fmt.Sprintf("Stopped: the command reached the sandbox session's limit of %d processes and threads (a fork bomb, or more processes at once than that), so shellgate killed it and everything it started. The session, its background jobs and its /tmp go on; start fewer processes at a time, or raise the limit in shellgate's configuration ([sandbox] procs).", procs)
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
	spare := s.spare
	s.spare, s.noSpare = nil, true
	s.mu.Unlock()
	if spare != nil {
		cgroup.CloseFiles(spare.files) // its directory goes with the rest
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

// helperStderr collects the helper's stderr, its first 4 KiB, under the
// session's lock.
type helperStderr struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w *helperStderr) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.b.Len() < 4096 {
		w.b.Write(p[:min(len(p), 4096-w.b.Len())])
	}
	return len(p), nil
}

// planWithTrees plans the view, with the trees of the steps that show a
// directory as others see it (package idmap), in the order of the steps. If
// they cannot be made now, the directories are walked for what only root
// may read instead, as where no tree can be made at all.
func planWithTrees(spec Spec, f Facts) ([]Step, []*os.File) {
	steps := Plan(spec, f)
	var dirs []string
	for _, st := range steps {
		if st.AsOthers {
			dirs = append(dirs, st.Src)
		}
	}
	trees, err := idmap.Trees(dirs)
	if err != nil {
		f.AsOthers, f.Private = nil, append(slices.Clip(f.Private), hostscan.RootPrivate(rootDirs, 4, 20000)...)
		return Plan(spec, f), nil
	}
	return steps, trees
}
