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
type Session struct{ helperless }

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

// Close does nothing.
func (*Session) Close() error { return nil }
