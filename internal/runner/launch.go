package runner

import (
	"io"
	"os"
	"os/exec"
	"syscall"

	"github.com/shellgate/shellgate/internal/inherit"
)

// A Launcher starts commands somewhere other than as direct children of this
// process: package sandbox starts them inside a session's namespaces. Whatever
// starts them, each command must lead a process group of its own, numbered by its
// PID as this process sees it, so that timeouts and Close can signal the group.
type Launcher interface {
	// Launch starts argv with the given standard files (nil: the null device)
	// and extra files as fds 3, 4, …. It must not keep them open once it has
	// returned: the caller reads the output to EOF.
	Launch(argv, env []string, dir string, stdin, stdout, stderr *os.File, extra ...*os.File) (Launched, error)
	// Contains reports whether a process belongs to what this Launcher started;
	// the search for descendants that left their process group looks only there.
	Contains(pid int) bool
}

// A Lister is a Launcher that can list every process it holds (package
// sandbox: a session's processes), PIDs as this process sees them. The
// searches for a command's process group and for descendants that left it
// then read only those, not every process on the machine.
type Lister interface {
	Launcher
	// Processes lists them; ok is false when it cannot, and every process
	// that Contains accepts is searched instead.
	Processes() (pids []int, ok bool)
}

// A TerminalOpener opens the pseudo-terminals for its own terminal commands: a
// sandbox whose terminals are its own (see Supervisor.OpenTerminal).
type TerminalOpener interface {
	OpenTerminal(cols, rows int) (master, slave *os.File, err error)
}

// A TerminalLauncher is a Launcher that can also start a command on a terminal
// (Spec.Terminal). A Launcher without it cannot run terminal commands.
type TerminalLauncher interface {
	Launcher
	// LaunchTerminal starts argv with tty, the slave side of a pseudo-terminal,
	// as its stdin, stdout and stderr and as its controlling terminal: the
	// command leads a new session whose terminal tty is. Like Launch, it must
	// not keep tty open once it has returned.
	LaunchTerminal(argv, env []string, dir string, tty *os.File) (Launched, error)
}

// A TreeLauncher is a Launcher that holds everything each command starts,
// wherever it goes — another process group or session, a cleared environment,
// where neither the group nor MarkerVar finds it (package sandbox: a cgroup
// per command). A timeout, a cancellation and Close end the command's whole
// tree with it; a command that exits normally leaves its tree running.
type TreeLauncher interface {
	Launcher
	// Tree returns the live processes (PIDs as this process sees them) that
	// command pid started, itself included, wherever they went; none once
	// they are all gone.
	Tree(pid int) []int
	// KillTree sends sig to every process of command pid's tree.
	KillTree(pid int, sig syscall.Signal)
}

// tree is a command whose processes a TreeLauncher holds.
type tree struct {
	l   TreeLauncher
	pid int
}

// treeOf is the tree of command pid, if l holds one.
func treeOf(l Launcher, pid int) []tree {
	if tl, ok := l.(TreeLauncher); ok {
		return []tree{{tl, pid}}
	}
	return nil
}

// Launched is a command a Launcher started.
type Launched interface {
	PID() int
	// Wait blocks until the command exits and returns its exit code, or the name
	// of the signal that ended it.
	Wait() (exitCode *int, signal string)
}

// A Noter is a Launched with something to say about its command once it has
// exited, for the text the model reads: a sandbox that made paths read-only
// which the command created.
type Noter interface {
	Notes() []string
}

// child is a command started as our own child with os/exec.
type child struct{ cmd *exec.Cmd }

func (c child) PID() int { return c.cmd.Process.Pid }

func (c child) Wait() (*int, string) {
	c.cmd.Wait() // the exit status is in cmd.ProcessState; Wait errors only repeat it
	waited(c.cmd.Process.Pid)
	return exitStatus(c.cmd.ProcessState)
}

// startChild starts argv as a child of this process, the leader of a new session.
// With tty set, the standard files are all tty, and tty becomes the session's
// controlling terminal.
func startChild(argv, env []string, dir string, stdin, stdout, stderr, tty *os.File, extra ...*os.File) (Launched, error) {
	return startIn(0, argv, env, dir, stdin, stdout, stderr, tty, extra...)
}

// startIn is startChild with, on Windows, job: the job object that the
// command's own is nested in (0: none; see adopt).
func startIn(job uintptr, argv, env []string, dir string, stdin, stdout, stderr, tty *os.File, extra ...*os.File) (Launched, error) {
	if tty != nil {
		stdin, stdout, stderr = tty, tty, tty
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.ExtraFiles = extra
	if stdin != nil {
		cmd.Stdin = stdin
	}
	if stdout != nil {
		cmd.Stdout = stdout
	}
	if stderr != nil {
		cmd.Stderr = stderr
	}
	prepare(cmd)
	if tty != nil {
		if err := prepareTerminal(cmd); err != nil {
			return nil, err
		}
	}
	registered := forking()
	if err := cmd.Start(); err != nil {
		registered(0)
		return nil, err
	}
	registered(cmd.Process.Pid)
	return adopt(cmd, job)
}

// openStdin returns the file to give the command as stdin: spec's own file, or
// the read end of a pipe that a reader is copied into. copied is closed when the
// copy has ended (at once without one); like os/exec, Run waits for it.
func openStdin(in io.Reader) (stdin *os.File, copied <-chan struct{}, err error) {
	done := make(chan struct{})
	switch f := in.(type) {
	case nil:
		close(done)
		return nil, done, nil
	case *os.File:
		close(done)
		return f, done, nil
	}
	w, r, err := inherit.Pipe(true)
	if err != nil {
		return nil, nil, err
	}
	go func() {
		defer close(done)
		io.Copy(w, in)
		w.Close()
	}()
	return r, done, nil
}

// procID names a process across time: a PID with its start time, so a reused PID
// is not mistaken for the process seen earlier.
type procID struct {
	PID   int
	Start uint64
}

// targets are the processes to end: whole process groups, the trees a
// TreeLauncher holds, and (Linux) processes whose environment contains marker.
// On Windows they are commands named by the PID they started with — their job
// objects (see adopt), or, without one, their process trees — and markers and
// trees are not used: a job holds a command's tree.
type targets struct {
	groups []int
	trees  []tree
	marker []byte
	scope  Launcher // the marker scan looks only at its processes; nil: all
}
