package sandbox

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/shellgate/shellgate/internal/cgroup"
	"github.com/shellgate/shellgate/internal/hint"
	"github.com/shellgate/shellgate/internal/runner"
	"github.com/shellgate/shellgate/internal/sandbox/helper"
	"golang.org/x/sys/unix"
)

type startReply struct {
	fds         []int // pty: the master and the slave
	pid         int
	placed      bool     // born in its cgroup
	quarantined []string // protected paths moved aside since the last command
	unkept      []string // paths KeepReadOnly named that stay writable, with why
	err         error
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

// Launch starts argv in the session; see runner.Launcher.
func (s *Session) Launch(argv, env []string, dir string, stdin, stdout, stderr *os.File, extra ...*os.File) (runner.Launched, error) {
	if s.bare != nil {
		return s.bareLaunch(func() (runner.Launched, error) { return s.bare.Launch(argv, env, dir, stdin, stdout, stderr, extra...) })
	}
	return s.launch(&message{Argv: argv, Env: env, Dir: dir}, stdin, stdout, stderr, extra...)
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
	var tree string  // the command's own cgroup
	madeNow := false // no spare: made on this command's way to its start
	var kept *cgroup.Kept
	if s.group != nil {
		c := s.takeSpare()
		if madeNow = c == nil; madeNow {
			s.mu.Lock()
			s.cgroupNames++
			name := s.cgroupNames
			s.mu.Unlock()
			if dir, kind, files, err := s.group.Command(name); err == nil {
				c = &spareCgroup{dir, kind, files, nil}
			}
		}
		if c != nil {
			tree, m.Cgroup = c.dir, c.kind
			// A cgroup2 one's directory stays open for the look at its
			// emptiness after the command (release), the rest is closed
			// once sent.
			if kept = c.hold(); kept == nil {
				defer cgroup.CloseFiles(c.files)
			}
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
		kept.Close()
		return nil, s.sendFailed(err)
	}
	r := s.await(started, "start the command")
	if r.err != nil {
		s.forget(id)
		kept.Close()
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
		switch {
		case kept == nil:
		case s.noSpare: // closing: nothing is reused now
			kept.Close()
		default:
			if s.kept == nil {
				s.kept = map[string]*cgroup.Kept{}
			}
			s.kept[tree] = kept
		}
		others := false // another command in flight (not a job left by one)
		for _, t := range s.trees {
			others = others || t != tree && !s.returned[t]
		}
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
		// The next command's cgroup is this one's, once it has ended and
		// left nothing running (release). Where that may not be so, made
		// while this command runs, so that its mkdir is not on the next
		// command's way to its start: when the last command's was not there
		// for this one (it left a job, or this is the first), or another
		// command is in flight, which may start the next.
		if madeNow || others {
			s.makeSpare()
		}
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
