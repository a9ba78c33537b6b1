//go:build !linux && !darwin && !windows

package sandbox

import (
	"os"

	"github.com/shellgate/shellgate/internal/runner"
)

// containing are the layers that contain what the policy cannot check (see
// Report.Uncontained): here, the write confinement.
var (
	containing = []string{LayerFS}
	breaking   []string
)

// Session is not available on this system; Start returns ErrUnsupported.
type Session struct{}

// Start reports ErrUnsupported.
func Start(Spec) (*Session, error) { return nil, ErrUnsupported }

// Alive reports false.
func (*Session) Alive() bool { return false }

// Report is empty.
func (*Session) Report() Report { return Report{} }

// Launch is never called: Start returns no Session.
func (*Session) Launch([]string, []string, string, *os.File, *os.File, *os.File, ...*os.File) (runner.Launched, error) {
	return nil, ErrUnsupported
}

// LaunchTerminal is never called: Start returns no Session.
func (*Session) LaunchTerminal([]string, []string, string, *os.File) (runner.Launched, error) {
	return nil, ErrUnsupported
}

// Contains reports false.
func (*Session) Contains(int) bool { return false }

// InnerPIDs returns pids as they are.
func (*Session) InnerPIDs(pids []int) []int { return pids }

// Close does nothing.
func (*Session) Close() error { return nil }

// KeepReadOnly does nothing here: the profile protects what Spec names.
func (*Session) KeepReadOnly([]string) {}

// Detach does nothing here: no command boundary is acted on.
func (*Session) Detach(int) {}

// Idle does nothing here: no helper maps the executable.
func (*Session) Idle() {}

// Guard reports that the session moves no protected path aside: where a
// command may not write one at all, there is nothing to move.
func (*Session) Guard() (pinned []string, guarded bool) { return nil, false }

// TakeNotes says nothing here: no command is stopped for a process limit.
func (*Session) TakeNotes() []string { return nil }

// OnStopped never calls f here: no guard ends a session's processes.
func (*Session) OnStopped(f func(paths []string)) {}

// GitKnown: nothing guards the root's git state here.
func (*Session) GitKnown() (known []string, version string, ok bool) { return nil, "", false }
