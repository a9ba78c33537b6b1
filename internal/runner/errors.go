package runner

import (
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
)

// ErrClosed is returned by Run after the Supervisor was closed.
var ErrClosed = errors.New("runner: supervisor closed")

// ErrLauncherGone, matched (errors.Is) by a Launcher's error, says that it
// can start nothing more (a sandbox session whose helper died): Run asks the
// Supervisor's renew function (OnLauncherGone) for another, and starts the
// command there.
var ErrLauncherGone = errors.New("runner: launcher gone")

// ErrNoTerminal is why a terminal command cannot start on Windows.
var ErrNoTerminal = errors.New("runner: terminal jobs are not supported on Windows yet")

// StartError says why a command could not be started. errors.Is works on it with
// fs.ErrNotExist (missing program or directory) and fs.ErrPermission (not executable).
type StartError struct {
	Program string
	Dir     string // set when the working directory is the cause
	Err     error
}

func (e *StartError) Error() string {
	if e.Dir != "" {
		return fmt.Sprintf("runner: cannot start %s: working directory %s: %v", e.Program, e.Dir, e.Err)
	}
	return fmt.Sprintf("runner: cannot start %s: %v", e.Program, e.Err)
}

func (e *StartError) Unwrap() error { return e.Err }

// Is makes a program missing from PATH (exec.ErrNotFound) count as fs.ErrNotExist.
func (e *StartError) Is(target error) bool {
	return target == fs.ErrNotExist && errors.Is(e.Err, exec.ErrNotFound)
}
