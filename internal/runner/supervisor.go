package runner

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"time"
)

// A Supervisor runs commands and owns every process they start until it is gone:
// Close ends whatever its runs left behind. It is safe for concurrent use.
type Supervisor struct {
	// KillGrace is the delay between SIGTERM and SIGKILL in Close; 0 means
	// DefaultKillGrace. Set it before the first Run.
	KillGrace time.Duration

	// id is random; every marker of this supervisor starts with it. It tells
	// apart the processes of supervisors running at once (no secret: a command
	// can read its own marker), so math/rand's generator, seeded from the
	// kernel at start, serves: crypto/rand's first use costs ~0.15 ms of every
	// one-shot run.
	id string

	mu           sync.Mutex
	launcher     Launcher // nil: commands are children of this process
	renew        func() (Launcher, string, error)
	closed       bool
	closing      chan struct{} // closed by Close: running commands are ended
	seq          uint64
	running      sync.WaitGroup
	background   map[int][]procID // process groups left running, with the members seen
	pruneAt      int              // how many background groups make keepBackground forget the ended ones
	trees        []tree           // commands whose trees were left running
	treesPruneAt int              // how many trees make keepTree forget the ended ones
	orphans      []*pump          // pipes still held by background processes, read and discarded
}

// NewSupervisor returns a Supervisor with nothing running.
func NewSupervisor() *Supervisor {
	return &Supervisor{
		id:         fmt.Sprintf("%016x", rand.Uint64()),
		closing:    make(chan struct{}),
		background: make(map[int][]procID),
	}
}

// Run starts spec.Argv and waits for it to exit, to time out or for ctx to be
// cancelled; in the last two cases it kills the process group and every escaped
// descendant it can find. Output is read until EOF, or, while background
// descendants still hold the pipes, for at most spec.Drain after the exit.
//
// The error is non-nil only if the command did not start: a *StartError, ErrClosed,
// or the context's error if ctx was done before the start.
func (s *Supervisor) Run(ctx context.Context, spec Spec) (Result, error) {
	if spec.Terminal != nil {
		// Closed however Run returns, not started included: the caller's
		// read of the master ends only once no one holds the terminal.
		defer spec.Terminal.Close()
	}
	if len(spec.Argv) == 0 || spec.Argv[0] == "" {
		return Result{}, &StartError{Program: `""`, Err: errors.New("empty argv")}
	}
	if err := ctx.Err(); err != nil {
		return Result{Cancelled: true}, fmt.Errorf("runner: %s not started: %w", spec.Argv[0], err)
	}
	marker, launcher, err := s.begin()
	if err != nil {
		return Result{}, err
	}
	defer s.running.Done()

	env := spec.Env
	if env == nil {
		env = os.Environ()
	}
	env = append(env[:len(env):len(env)], marker)

	if spec.Terminal != nil {
		if spec.Stdin != nil || spec.Stdout != nil || spec.Stderr != nil {
			return Result{}, &StartError{Program: spec.Argv[0], Err: errors.New("a terminal command takes no Stdin, Stdout or Stderr: its input and output go through the terminal")}
		}
	}
	var pipes pipeSet
	if err := pipes.open(spec); err != nil {
		return Result{}, &StartError{Program: spec.Argv[0], Err: err}
	}
	stdin, copied, err := openStdin(spec.Stdin)
	if err != nil {
		pipes.closeChildEnds()
		pipes.closeOurEnds()
		return Result{}, &StartError{Program: spec.Argv[0], Err: err}
	}
	// As a subreaper without a Launcher, what the command leaves is looked
	// for only among what is reparented to this process after its start.
	scope := beforeLaunch(launcher)
	started := time.Now()
	proc, err := launch(launcher, spec, env, stdin, &pipes)
	renewed := spec.TerminalNote
	if errors.Is(err, ErrLauncherGone) {
		switch l, note, ok := s.renewLauncher(launcher); {
		case ok && spec.Terminal == nil:
			launcher, renewed = l, note
			proc, err = launch(launcher, spec, env, stdin, &pipes)
		case ok:
			// The terminal is the old launcher's: the next call opens one in
			// the new launcher.
			err = fmt.Errorf("%w; the command was not started, as its terminal was in the old one: run it again (%s)", err, note)
		}
	}
	pipes.closeChildEnds()
	if spec.Terminal != nil {
		spec.Terminal.Close() // the command has its own; ours would keep the master from seeing the end
	}
	if stdin != nil && stdin != spec.Stdin {
		stdin.Close() // our copy of the pipe's read end
	}
	if err != nil {
		pipes.closeOurEnds()
		return Result{}, startError(spec, err)
	}
	pumps := pipes.start(spec)
	pgid := proc.PID()
	res := Result{PID: pgid}
	if spec.Started != nil {
		spec.Started(pgid)
	}

	exited := make(chan struct{})
	go func() {
		res.ExitCode, res.Signal = proc.Wait()
		if n, ok := proc.(Noter); ok {
			res.Notes = n.Notes()
		}
		close(exited)
	}()
	res.TimedOut, res.Cancelled = s.stopped(ctx, spec.Timeout, exited)
	if res.TimedOut || res.Cancelled {
		terminate(targets{groups: []int{pgid}, trees: treeOf(launcher, pgid), marker: runPattern(marker), scope: launcher}, spec.killGrace())
		<-exited
	}
	<-copied

	// Who is left behind is looked up while the output drains: a pass over
	// /proc costs as much as the drain itself on a busy machine.
	found := make(chan leftBehind, 1)
	go func() { found <- findLeft(scope, pgid) }()
	held := s.collect(pumps, found, spec.drain(), groupLeft(pgid))
	res.BackgroundPIDs = s.keepLeft(<-found, held, pgid, marker, scope)
	res.Duration = time.Since(started)
	if renewed != "" {
		res.Notes = append([]string{renewed}, res.Notes...)
	}
	return res, nil
}

// stopped waits for the command to exit, to time out or to be cancelled
// (ctx, or the supervisor closing), and says which of the last two ended the
// wait: neither when it exited just as the timer fired, which is no kill.
func (s *Supervisor) stopped(ctx context.Context, timeout time.Duration, exited <-chan struct{}) (timedOut, cancelled bool) {
	var timer <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		timer = t.C
	}
	select {
	case <-exited:
		return false, false
	case <-timer:
		timedOut = true
	case <-ctx.Done():
		cancelled = true
	case <-s.closing:
		cancelled = true
	}
	select {
	case <-exited:
		return false, false
	default:
		return timedOut, cancelled
	}
}

// launch starts spec's command: as a child of ours, or through launcher
// (on a terminal where spec has one).
func launch(launcher Launcher, spec Spec, env []string, stdin *os.File, pipes *pipeSet) (Launched, error) {
	switch {
	case launcher == nil:
		return startChild(spec.Argv, env, spec.Dir, stdin, pipes.child[0], pipes.child[1], spec.Terminal, spec.ExtraFiles...)
	case spec.Terminal != nil:
		if tl, ok := launcher.(TerminalLauncher); ok {
			return tl.LaunchTerminal(spec.Argv, env, spec.Dir, spec.Terminal)
		}
		return nil, errors.New("this launcher cannot start commands on a terminal")
	}
	return launcher.Launch(spec.Argv, env, spec.Dir, stdin, pipes.child[0], pipes.child[1], spec.ExtraFiles...)
}

// keepLeft keeps what the command left running (its group's members, its
// trees) for Close to end, and returns their PIDs. held: something still
// held the output pipes when the drain ended, though the group may be
// empty: a descendant that escaped the group, reported too.
func (s *Supervisor) keepLeft(left leftBehind, held bool, pgid int, marker string, launcher Launcher) []int {
	var pids []int
	busy := len(left.members) > 0
	if busy {
		pids = pidsOf(left.members)
		s.keepBackground(pgid, left.members)
	}
	for _, tr := range left.trees {
		s.keepTree(tr)
	}
	if held && !busy {
		pids = left.escaped
		if len(pids) == 0 {
			pids = pidsOf(markedProcs(runPattern(marker), launcher))
		}
	}
	return pids
}

// leftBehind is what a command that exited left running: the members of its
// process group, and the trees holding processes beyond it (escaped: those
// of the last such tree).
type leftBehind struct {
	members []procID
	trees   []tree
	escaped []int
}

// findLeft looks for what the command with process group pgid left running.
// What a tree holds beyond the group (setsid, env -i) lives on too, until
// Close; the tree is empty, at no cost, when the command left nothing.
//
// A TreeLauncher's tree holds all the command started, the members of its
// group among them: they are looked for there, not among every process of
// the launcher's (a sandbox session's, with every job earlier calls left).
func findLeft(launcher Launcher, pgid int) leftBehind {
	var l leftBehind
	for _, tr := range treeOf(launcher, pgid) {
		if pids := tr.l.Tree(pgid); len(pids) > 0 {
			l.trees, l.escaped = append(l.trees, tr), pids
		}
	}
	if len(l.escaped) > 0 {
		l.members = membersAmong(pgid, l.escaped)
	} else {
		// No tree, or an empty one (then no group either, which costs one
		// system call), or one the launcher does not hold (a command
		// without a cgroup of its own).
		l.members = groupMembers(pgid, launcher)
	}
	return l
}

// begin registers a run and returns the marker for its environment and the
// Launcher to start it with.
func (s *Supervisor) begin() (string, Launcher, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return "", nil, ErrClosed
	}
	s.seq++
	s.running.Add(1)
	return fmt.Sprintf("%s=%s.%d", MarkerVar, s.id, s.seq), s.launcher, nil
}

// OpenTerminal opens a pseudo-terminal for Spec.Terminal: the launcher's own
// where it has them (a TerminalOpener), else one of this process's. A
// launcher that is gone is replaced first, as Run replaces it for a command
// without a terminal; note then says so, for Spec.TerminalNote.
func (s *Supervisor) OpenTerminal(cols, rows int) (master, slave *os.File, note string, err error) {
	s.mu.Lock()
	l := s.launcher
	s.mu.Unlock()
	master, slave, err = openTerminal(l, cols, rows)
	if errors.Is(err, ErrLauncherGone) {
		if nl, n, ok := s.renewLauncher(l); ok {
			note = n
			master, slave, err = openTerminal(nl, cols, rows)
		}
	}
	return master, slave, note, err
}

func openTerminal(l Launcher, cols, rows int) (master, slave *os.File, err error) {
	if o, ok := l.(TerminalOpener); ok {
		return o.OpenTerminal(cols, rows)
	}
	return OpenTerminal(cols, rows)
}

// SetLauncher makes l start the commands of later runs; nil starts them as
// children of this process.
func (s *Supervisor) SetLauncher(l Launcher) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.launcher = l
}

// OnLauncherGone sets how Run replaces a launcher that is gone (its Launch
// failed with ErrLauncherGone) before the command started: renew returns the
// launcher to start it with (the one it sets with SetLauncher), and a note
// for the command's Result, which is told that what ran in the old one is
// gone.
func (s *Supervisor) OnLauncherGone(renew func() (Launcher, string, error)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.renew = renew
}

// renewLauncher asks for a launcher to replace old, which is gone; ok if there
// is a new one.
func (s *Supervisor) renewLauncher(old Launcher) (l Launcher, note string, ok bool) {
	s.mu.Lock()
	renew := s.renew
	s.mu.Unlock()
	if renew == nil {
		return nil, "", false
	}
	l, note, err := renew()
	return l, note, err == nil && l != nil && l != old
}

func (s *Supervisor) keepBackground(pgid int, members []procID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// Forget groups that ended on their own, so the map stays small (Close
	// signals only groups whose members it still finds). Only once it has
	// doubled: each look reads every member, and a call that leaves a job
	// should not pay for every job before it.
	if len(s.background) >= s.pruneAt {
		for g, ms := range s.background {
			if len(liveOf(g, ms)) == 0 {
				delete(s.background, g)
			}
		}
		s.pruneAt = max(8, 2*len(s.background))
	}
	s.background[pgid] = members
}

// keepTree remembers a command tree left running, for Close. The trees that
// ended are forgotten (and their launcher lets go of them) once they have
// doubled, as keepBackground's groups: each look reads a tree, and a call
// that leaves a job should not pay for every job before it.
func (s *Supervisor) keepTree(tr tree) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.trees) >= s.treesPruneAt {
		kept := s.trees[:0]
		for _, t := range s.trees {
			if len(t.l.Tree(t.pid)) > 0 {
				kept = append(kept, t)
			}
		}
		clear(s.trees[len(kept):])
		s.trees = kept
		s.treesPruneAt = max(8, 2*len(kept))
	}
	s.trees = append(s.trees, tr)
}

// runPattern is what a process's environment contains when it descends from the
// run with this marker ("NAME=value" + NUL terminator).
func runPattern(marker string) []byte { return []byte(marker + "\x00") }

// Close ends every process any run left behind or is still running: runs in
// flight are cancelled and end their process groups as on a timeout; then
// background process groups, and escaped descendants carrying this supervisor's
// marker, get SIGTERM, then SIGKILL after s.KillGrace. Close returns when they
// are gone and every Run has returned. Run fails with ErrClosed afterwards.
func (s *Supervisor) Close() error {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.closing)
	}
	s.mu.Unlock()
	s.running.Wait()

	s.mu.Lock()
	t := targets{scope: s.launcher}
	if s.seq > 0 {
		// Only a process this supervisor started carries its marker: with
		// none started there is nothing to look for, and no pass over /proc
		// (a Gate whose commands all ran in its sessions' supervisors).
		t.marker = []byte(MarkerVar + "=" + s.id + ".")
	}
	for g, ms := range s.background {
		if len(liveOf(g, ms)) > 0 {
			t.groups = append(t.groups, g)
		}
	}
	s.background = make(map[int][]procID)
	t.trees, s.trees = s.trees, nil
	orphans := s.orphans
	s.orphans = nil
	s.mu.Unlock()

	alive := terminate(t, Spec{KillGrace: s.KillGrace}.killGrace())
	stopPumps(orphans, time.Second)

	if len(alive) > 0 {
		return fmt.Errorf("runner: processes still alive after SIGKILL: %v", alive)
	}
	return nil
}

func pidsOf(ps []procID) []int {
	pids := make([]int, len(ps))
	for i, p := range ps {
		pids[i] = p.PID
	}
	return pids
}

func startError(spec Spec, err error) error {
	e := &StartError{Program: spec.Argv[0], Err: err}
	if spec.Dir != "" {
		// The exec error does not say whether the program or the directory is at
		// fault; look at the directory only now, so a good start costs nothing.
		if fi, serr := os.Stat(spec.Dir); serr != nil {
			e.Dir, e.Err = spec.Dir, serr
		} else if !fi.IsDir() {
			e.Dir, e.Err = spec.Dir, fmt.Errorf("not a directory: %w", err)
		}
	}
	return e
}
