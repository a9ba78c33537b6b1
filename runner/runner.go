// Package runner starts a command in its own process group and sees it — and
// everything it started — end.
//
// A Supervisor runs commands with stdin closed, in a new session (so there is no
// controlling terminal), with output read from its own pipes so that Run returns as
// soon as the shell exits even when a background descendant still holds them. On
// timeout or cancellation the whole process group gets SIGTERM, then SIGKILL after a
// grace period; on Linux so do descendants that escaped the group (setsid), found by
// a marker in their environment. Background processes left by a command that
// exited normally keep running until Supervisor.Close.
package runner

import (
	"io"
	"time"
)

// Defaults for Spec fields left zero.
const (
	DefaultKillGrace = 2 * time.Second
	DefaultDrain     = 50 * time.Millisecond
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

	// Stdout and Stderr receive output as it arrives, each written from its own
	// goroutine (so one writer given for both must be safe for concurrent use). Nil
	// discards the stream. Nothing is written after Run returns.
	Stdout io.Writer
	Stderr io.Writer

	// Timeout ends the command after this long; 0 means no timeout.
	Timeout time.Duration
	// KillGrace is the delay between SIGTERM and SIGKILL; 0 means DefaultKillGrace.
	KillGrace time.Duration
	// Drain is how long to keep reading output after the shell exited while
	// background descendants still hold the pipes; 0 means DefaultDrain.
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
