package runner

import "os"

// A Wrapper is a Launcher that starts each command as Run does without one — a
// child of this process, leading a process group of its own — after rewriting
// its argv: a confining program such as macOS's sandbox-exec then executes the
// command.
type Wrapper struct {
	// Argv rewrites a command's argv, given how many descriptors it is
	// handed past its standard files (3 to 3+files-1); nil leaves it as it is.
	Argv func(argv []string, files int) []string
	// Job, on Windows, is a job object handle (windows.Handle) that every
	// command's own job is nested in, so that its limits bind them all and
	// closing it ends them all; 0 means none. Elsewhere it must be 0.
	Job uintptr
}

// Launch starts the rewritten argv.
func (w Wrapper) Launch(argv, env []string, dir string, stdin, stdout, stderr *os.File, extra ...*os.File) (Launched, error) {
	if w.Argv != nil {
		argv = w.Argv(argv, len(extra))
	}
	return startIn(w.Job, argv, env, dir, stdin, stdout, stderr, nil, extra...)
}

// Contains reports true: the commands are this process's own children, and
// their escaped descendants are looked for as without a Launcher.
func (Wrapper) Contains(int) bool { return true }

// LaunchTerminal starts the rewritten argv on tty, as Launch does, with tty as
// its standard files and controlling terminal (see TerminalLauncher).
func (w Wrapper) LaunchTerminal(argv, env []string, dir string, tty *os.File) (Launched, error) {
	if w.Argv != nil {
		argv = w.Argv(argv, 0)
	}
	return startIn(w.Job, argv, env, dir, nil, nil, nil, tty)
}
