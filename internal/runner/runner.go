// Package runner starts a command in its own process group and sees it — and
// everything it started — end.
//
// A Supervisor runs each command with stdin on the null device (unless Spec.Stdin
// gives one), in a new session:
// the shell leads its own process group and has no controlling terminal, so
// `read` and input() see EOF at once and opening /dev/tty fails with ENXIO
// instead of waiting. Output is read from pipes of our own, so Run returns when
// the shell exits even if a background descendant still holds them: output is
// read to EOF when the group is empty, else for at most Spec.Drain. After that a
// still-held pipe is read and discarded until Close, so a background server that
// logs is neither blocked nor killed by SIGPIPE. A caller's own file passed to
// the command as is (Spec.PassStdout) is not read: Run returns at the exit.
//
// On timeout or cancellation the whole group gets SIGTERM, then SIGKILL after
// Spec.KillGrace. So do descendants that left the group (setsid, nohup setsid):
// every process a Supervisor starts carries MarkerVar in its environment, and on
// Linux (/proc/*/environ) and macOS (KERN_PROCARGS2) processes inheriting it are
// found. Background processes left by a command that exited normally keep
// running, are reported in Result.BackgroundPIDs, and are ended by Close.
//
// A Launcher that is a TreeLauncher (package sandbox on Linux, with a cgroup
// per command) holds each command's whole tree: on timeout, cancellation and
// Close the tree dies too, whatever its processes did to their group, session
// or environment.
//
// Without a Launcher the look for what a command left reads every process of
// the machine, unless the program made itself a child subreaper (Subreap, a
// process-wide choice the shellgate command makes): then whatever the
// commands leave stays below this process, and the looks read only its tree.
//
// Limits: otherwise a descendant that both leaves the group and drops its
// environment (env -i setsid …) cannot be found; as a subreaper it is a child
// of this process but is not told from the children other code started. On Windows each command runs in a
// job object of its own, which holds its descendants whatever their parent
// does: timeouts and Close terminate the job, background processes are its
// live members, and the kernel kills them all when shellgate exits.
package runner

import (
	"io"
	"os"
	"time"
)

// Defaults for Spec fields left zero.
const (
	DefaultKillGrace = 2 * time.Second
	// DefaultDrain is short: a call that leaves a background job holding the
	// pipes returns once they have been quiet this long, counted from their
	// last output (a job that printed nothing while the shell ran costs no
	// wait at all; a plain call takes ~2 ms on an idle machine, and a
	// background call should not take twice that), and what the job prints
	// later is not captured. What the shell wrote before it exited is in the
	// pipes already and read whole.
	DefaultDrain = time.Millisecond
)

// MarkerVar is the environment variable that marks every process a Supervisor
// starts, and by inheritance their descendants, so that descendants which left the
// process group can still be found (Linux). A process started with a scrubbed
// environment (env -i, or a program that clears its environment) loses the marker
// and cannot be found once it has left the group.
const MarkerVar = "SHELLGATE_RUN"

// Spec describes one command to run.
type Spec struct {
	Argv []string // program and arguments (from shell.Shell.Argv)
	Dir  string   // working directory; "" means the current one
	Env  []string // environment; nil means os.Environ()

	// Stdin is the command's standard input; nil means the null device, so that a
	// command waiting for input sees EOF instead of hanging. An *os.File is handed
	// to the command as is; any other reader is copied in until it ends, and Run
	// waits for that copy (os/exec's rule), so it must end.
	Stdin io.Reader

	// Stdout and Stderr receive output as it arrives, each written from its own
	// goroutine (so one writer given for both must be safe for concurrent use). Nil
	// discards the stream. Nothing is written after Run returns (unless passed:
	// PassStdout, PassStderr).
	Stdout io.Writer
	Stderr io.Writer

	// PassStdout and PassStderr give Stdout and Stderr, where they are
	// *os.File, to the command as they are, instead of pipes of ours copied
	// into them: the caller's own pipe or socket (shellgate exec). The command
	// then writes there itself, so a reader of both sees what it wrote to each
	// in the order it wrote it, and nothing is copied. Run does not read them:
	// it returns when the command exits, and what background descendants write
	// later goes there until they end; a reader waiting for EOF waits for
	// them (Close ends those it finds).
	PassStdout, PassStderr bool

	// ExtraFiles are given to the command as fds 3, 4, …; the caller closes them
	// after Run has started it (Started is called then). Not with Terminal.
	ExtraFiles []*os.File

	// Terminal, when set, is the slave side of a pseudo-terminal (see
	// OpenTerminal): the command gets it as stdin, stdout and stderr and as its
	// controlling terminal, so it sees an interactive terminal and its line
	// discipline (echo, Ctrl-C as SIGINT). Stdin, Stdout and Stderr must be nil
	// then: the caller reads the output from, and writes input to, the master.
	// Run closes Terminal once the command has started (or failed to), so that
	// reading the master fails (EIO on Linux) when the last process holding the
	// terminal is gone, and returns when the command exits without waiting for
	// any output. Not supported on Windows.
	Terminal *os.File
	// TerminalNote is the note of the Supervisor's OpenTerminal that opened
	// Terminal after replacing a launcher that was gone; Run puts it first in
	// Result.Notes, as it does when it replaces one itself.
	TerminalNote string

	// Started, if set, is called once the command has started, with its PID,
	// which is also the number of its process group and session (the pgid that
	// WaitingForInput takes), before Run waits for it to end.
	Started func(pid int)

	// Timeout ends the command after this long; 0 means no timeout.
	Timeout time.Duration
	// KillGrace is the delay between SIGTERM and SIGKILL; 0 means DefaultKillGrace.
	KillGrace time.Duration
	// Drain is how long the pipes must have been quiet (since their last
	// output) before reading stops after the shell exited while background
	// descendants still hold them; 0 means DefaultDrain.
	Drain time.Duration
}

// Result is how a command ended.
type Result struct {
	PID      int
	ExitCode *int   // nil when ended by a signal
	Signal   string // "SIGKILL", "SIGTERM"…; "" if exited normally
	// TimedOut: Spec.Timeout expired and the command was killed.
	TimedOut bool
	// Cancelled: the context was cancelled, or the Supervisor closed, and the
	// command was killed.
	Cancelled bool
	Duration  time.Duration
	// BackgroundPIDs are descendants still alive after the shell exited: members
	// of its process group and (Linux) escaped descendants that still hold its
	// output pipes. They are left running; Supervisor.Close ends them, and also
	// escaped descendants not listed here because they do not hold the pipes.
	BackgroundPIDs []int
	// Notes are what the Launcher had to say once the command exited (Noter).
	Notes []string
}

func (s Spec) killGrace() time.Duration {
	if s.KillGrace <= 0 {
		return DefaultKillGrace
	}
	return s.KillGrace
}

func (s Spec) drain() time.Duration {
	if s.Drain <= 0 {
		return DefaultDrain
	}
	return s.Drain
}
