package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/shellgate/shellgate/internal/cachestore"
	"github.com/shellgate/shellgate/internal/cgroup"
	"github.com/shellgate/shellgate/internal/hostscan"
	"github.com/shellgate/shellgate/internal/idmap"
	"github.com/shellgate/shellgate/internal/pidfd"
	"github.com/shellgate/shellgate/internal/quarantinelog"
	"github.com/shellgate/shellgate/internal/sandbox/helper"
	"golang.org/x/sys/unix"
)

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
	go checkPidfd() // beside the helper's cgroup, not in its fork
	go func() {
		defer close(e.done)
		e.s, e.cg, e.err = fork(network, limits)
	}()
	go func() {
		defer close(e.warmed)
		// After the helper's fork, not beside it: a fork copies the
		// process's memory map holding its lock, which stalls the other
		// fork, and every page fault of the process meanwhile (the helper's
		// start 1–2 ms later, as root, with both at once). Where the
		// session's start came first, its facts make the namespace
		// themselves; a discarded helper needs none.
		<-e.done
		if !e.taken() {
			warmHook()
		}
	}()
	return e
}

// checkPidfd has Go check, once in a process, that pidfds work here, which
// it does at its first start of a process: a vfork of a child that exits,
// which a start waits for (0.1–1 ms, the child's wake-up on an idle core).
// Done beside the rest of a helper's start, it is not in its fork.
var checkPidfd = sync.OnceFunc(func() {
	if p, err := os.FindProcess(os.Getpid()); err == nil { // checks first
		p.Release()
	}
})

// warmHook is warm; tests watch it.
var warmHook = warm

// warm makes, as root, the user namespace the host's facts need to show /etc
// and /var as others see them (idmap.Works; once per process), while the
// helper starts rather than after the spec: a child started and killed.
func warm() {
	if os.Geteuid() != 0 {
		return
	}
	for _, d := range rootDirs {
		idmap.Works(d)
	}
}

// taken reports whether Start or Discard took e.
func (e *Early) taken() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.used
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
	var links *os.File
	if spec.StoreLinks != "" {
		if f, err := os.OpenFile(spec.StoreLinks, os.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0); err == nil {
			defer f.Close() // sent: the helper holds it
			links = f
		} else {
			spec.StoreLinks = "" // every such file is copied, as without
		}
	}
	// The set of the project's cache layers this session mounts, which no
	// other session mounts meanwhile (cachestore.ClaimLayers says why),
	// held until the helper, and with it the mounts, is gone (CloseBeside).
	// Where none can be held, the caches are the host's, read-only: a build
	// still runs.
	var layers *cachestore.Layers
	if spec.CacheStore != "" {
		if l, err := cachestore.ClaimLayers(spec.CacheStore); err == nil {
			layers, spec.CacheStore = l, l.Dir()
		} else {
			spec.Visible = append(slices.Clip(spec.Visible), spec.Caches...)
			spec.Caches, spec.CacheStore = nil, ""
		}
	}
	// What the plan needs of the host (as root, a walk of /etc and /var),
	// and the plan itself, made while the helper starts, which takes as
	// long: the set-up is sent as soon as the helper is there.
	plans := make(chan plan, 1)
	go func() {
		steps, trees := planWithTrees(spec, SessionFacts(spec))
		sessionUserCounts()
		plans <- plan{steps, trees}
	}()
	<-e.done
	if e.err != nil {
		for _, t := range (<-plans).trees {
			t.Close()
		}
		layers.Release() // a bare session mounts none
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
	s.layers = layers
	if len(spec.Writable) > 0 {
		s.root = spec.Writable[0]
	}
	if err := s.setUp(spec, plans, e.cg, log, links); err != nil {
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
	down, up, err := helper.Pair()
	if err != nil {
		return nil, nil, fmt.Errorf("sandbox: control socket: %w", err)
	}
	theirs := []*os.File{os.NewFile(uintptr(down[1]), "sandbox-control"), os.NewFile(uintptr(up[1]), "sandbox-control-out")}
	defer theirs[0].Close()
	defer theirs[1].Close()
	ours := os.NewFile(uintptr(up[0]), "sandbox-control")
	if err := unix.SetsockoptInt(up[0], unix.SOL_SOCKET, unix.SO_PASSCRED, 1); err != nil {
		ours.Close()
		unix.Close(down[0])
		return nil, nil, fmt.Errorf("sandbox: control socket: %w", err)
	}
	fc, err := net.FileConn(ours)
	ours.Close()
	if err != nil {
		unix.Close(down[0])
		return nil, nil, fmt.Errorf("sandbox: control socket: %w", err)
	}
	ctl, err := helper.Split(unixTransport{fc.(*net.UnixConn)}, down[0])
	if err != nil {
		fc.Close()
		unix.Close(down[0])
		return nil, nil, fmt.Errorf("sandbox: control socket: %w", err)
	}
	s := &Session{
		serial:  gitKnownSerial.Add(1),
		ctl:     helper.NewConn(ctl),
		started: map[uint64]chan startReply{},
		exits:   map[uint64]chan *message{},
		trees:   map[int]string{},
		dead:    make(chan struct{}),

		overLimit: map[string]bool{},
		returned:  map[string]bool{},
		wakeLimit: make(chan struct{}, 1),
		gone:      make(chan struct{}),
	}
	// The helper is born in its cgroup, made first: on cgroup2 by clone3,
	// elsewhere (v1, hybrid) by the forking thread's own moves
	// (cgroup.Group.ForkInto), made beside what startHelper does before its
	// fork. Where it could not be, it joins its cgroups beside its set-up
	// (setUp).
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
	born, err := s.startHelper(network, theirs, birth, made)
	<-made
	if err != nil {
		ctl.Close()
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
// ctl are the helper's ends of the control sockets (helper.Pair: the one
// it reads, the one it writes), its fds 3 and 4; network: it shares the
// host's network namespace; birth, unless -1, is the cgroup it is born in
// (Group.BirthFD); made is closed once the session's cgroup is made (or
// not: s.group nil), and on v1 the helper is born in it (Group.ForkInto).
// born reports whether it was born in its cgroup.
func (s *Session) startHelper(network bool, ctl []*os.File, birth int, made <-chan struct{}) (born bool, err error) {
	uid, gid := os.Getuid(), os.Getgid()
	flags := uintptr(unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWPID | unix.CLONE_NEWIPC)
	if !network {
		flags |= unix.CLONE_NEWNET
	}
	// Its stderr is a pipe read once it has started: exec.Cmd would start
	// a goroutine copying it, and open /dev/null twice, in its Start, on
	// the run's path.
	errR, errW, err := os.Pipe()
	if err != nil {
		return false, fmt.Errorf("sandbox: the helper's stderr: %w", err)
	}
	null := devNull()
	pfd := -1
	command := func(birth int) *exec.Cmd {
		cmd := &exec.Cmd{
			Path: "/proc/self/exe",
			Args: []string{helper.Arg0},
			// Nothing of shellgate's own environment reaches the session. One
			// processor keeps the helper's threads few, under the process limit.
			Env:        []string{"GOMAXPROCS=1"},
			Dir:        "/",
			ExtraFiles: ctl,
			Stderr:     errW,
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
		if null != nil {
			cmd.Stdin, cmd.Stdout = null, null
		}
		return cmd
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
		var err error
		fit := true
		if <-made; birth < 0 && s.group != nil {
			born, fit, err = s.group.ForkInto(cmd.Start)
		} else {
			err = cmd.Start()
			born = err == nil && birth >= 0
		}
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
		errW.Close()
		if err != nil {
			errR.Close()
			startErr <- err
			if fit {
				runtime.UnlockOSThread()
			}
			return
		}
		startErr <- nil
		wait := func() {
			copied := make(chan struct{})
			go func() {
				defer close(copied)
				io.Copy(&helperStderr{mu: &s.mu, b: &s.errBuf}, errR)
				errR.Close()
			}()
			pidfd.AwaitExit(pfd)
			err := cmd.Wait()
			<-copied // all it said, as exec.Cmd's Wait would have
			s.mu.Lock()
			s.waitErr = err
			s.mu.Unlock()
			close(s.dead)
		}
		if !fit {
			// A thread left in the session's cgroup ends with this
			// goroutine, still locked to it; the wait goes on elsewhere.
			go wait()
			return
		}
		runtime.UnlockOSThread()
		wait()
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

// plan is a session's view planned, with the trees it shows
// (planWithTrees).
type plan struct {
	steps []Step
	trees []*os.File
}

// setUp moves the helper into its cgroup where it was not born in it, sends
// it the spec and the plan (and log, the quarantine log, with
// Spec.QuarantineLog; links, the store's links, with Spec.StoreLinks), and
// waits for its report.
func (s *Session) setUp(spec Spec, plans <-chan plan, cg *sessionCgroup, log, links *os.File) error {
	pid := s.helper.Process.Pid
	if link, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", pid)); err == nil {
		s.pidNS = link
	}
	// A helper not born in its cgroup moves into it while it sets up its
	// view: a move waits for an RCU grace period, ~10 ms after the machine
	// was idle. It forks nothing before its first command, which waits for
	// both.
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
	p := <-plans
	steps, trees := p.steps, p.trees
	fds := make([]int, len(trees))
	for i, t := range trees {
		fds[i] = int(t.Fd())
		defer t.Close() // sent: the helper holds them
	}
	if log != nil { // after the trees
		fds = append(fds, int(log.Fd()))
	}
	if links != nil {
		fds = append(fds, int(links.Fd()))
	}
	// A helper born in the session's v1 cgroup has its launcher's thread
	// join the commands' as its set-up ends (helper.Message.LauncherTasks);
	// one moved there is sent it once moved (homeLauncher).
	var launcherTasks *os.File
	var launcherErr error
	if s.group != nil && cg.born {
		launcherTasks, launcherErr = s.group.LauncherFile()
		if launcherTasks != nil {
			defer launcherTasks.Close() // sent: the helper holds it
			fds = append(fds, int(launcherTasks.Fd()))
		}
	}
	// The cache layers' hold, which the helper shares until it exits
	// (helper.Message.LayersLock): its mounts go only with it.
	lock := s.layers.Fd()
	if lock >= 0 {
		fds = append(fds, lock)
	}
	for i := range steps { // doctor --plan's; the helper has no use for it
		steps[i].Why = ""
	}
	if err := s.ctl.Send(&message{Op: "setup", Spec: spec.wire(), Steps: steps, UID: os.Getuid(), GID: os.Getgid(), Slack: s.slack, UserCounts: sessionUserCounts(), LauncherTasks: launcherTasks != nil, LayersLock: lock >= 0}, helper.UnixRights(fds)); err != nil {
		return s.helperError("sending the setup", err)
	}
	// The first command's cgroup is made while the helper sets up, not on
	// that command's way to its start (makeSpare): where the helper was born
	// in its cgroup, nothing changes s.group meanwhile.
	spared := make(chan struct{})
	if s.group != nil && cg.born {
		go func() {
			defer close(spared)
			s.makeSpare()
		}()
	} else {
		close(spared)
	}
	defer func() { <-spared }()
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
		switch {
		case launcherErr != nil:
			s.unlimit(cg, launcherErr)
		case launcherTasks != nil:
			if r.m.LauncherError != "" {
				s.unlimit(cg, errors.New(r.m.LauncherError))
			}
		case s.group != nil:
			if err := s.homeLauncher(cg); err != nil {
				return err
			}
		}
		layers := cg.layers
		for k, v := range r.m.Layers {
			layers[k] = v
		}
		s.report = Report{Layers: layers, Missing: append(cg.missing, r.m.Missing...)}
		s.markersGone = make(chan struct{})
		go func() {
			defer close(s.markersGone)
			removeMarkers(steps)
		}()
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
		s.unlimit(cg, err)
	}
	return nil
}

// unlimit makes the process limit the whole session's, where the launcher's
// thread could not join the commands' cgroup (err), or says that there is
// none.
func (s *Session) unlimit(cg *sessionCgroup, err error) {
	if uerr := s.group.Unlimit(s.procs); uerr != nil {
		cg.layers[LayerProcs] = "rlimit"
		cg.missing = append(cg.missing, fmt.Sprintf("%s: the session's commands have no process limit: %v; %v", LayerProcs, err, uerr))
	}
}

// removeMarkers removes the markers the overlays of the cache layers among
// steps left in their work dirs (cachestore.ReadyLayer): the helper leaves
// them, and shellgate removes them while the session runs, off its set-up
// (each rmdir frees a block, which a filesystem mounted with discard
// discards at once: 0.5–4.5 ms for three overlays), before the session ends
// (CloseBeside). One a killed helper left goes at the layer's next mount.
// Then the work dirs the mounts set aside (cachestore.StaleWork), which
// the kernel's mount removed in the set-up before.
var removeMarkers = func(steps []Step) {
	for _, st := range steps {
		if st.Op == OpOverlay && st.Upper != "" {
			cachestore.RemoveMarker(st.Upper)
		}
	}
	for _, st := range steps {
		if st.Op == OpOverlay && st.Upper != "" {
			cachestore.RemoveStale(st.Upper)
		}
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

// devNull is /dev/null, open for the helpers' stdin and stdout.
var devNull = sync.OnceValue(func() *os.File {
	f, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return nil // exec.Cmd opens it itself
	}
	return f
})

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
