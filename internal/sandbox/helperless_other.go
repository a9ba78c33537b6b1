//go:build !linux

package sandbox

// helperless gives a Session of a platform with no helper process its methods
// that act on what only Linux's helper keeps: the platform's profile decides
// what a command may touch, and nothing is moved, guarded or counted after.
type helperless struct{}

// InnerPIDs returns pids as they are: commands live in the host's PID space.
func (helperless) InnerPIDs(pids []int) []int { return pids }

// KeepReadOnly does nothing here: the profile protects what Spec names.
func (helperless) KeepReadOnly([]string) {}

// Detach does nothing here: no command boundary is acted on.
func (helperless) Detach(int) {}

// Idle does nothing here: no helper maps the executable.
func (helperless) Idle() {}

// Guard reports that the session moves no protected path aside: where a
// command may not write one at all, there is nothing to move.
func (helperless) Guard() (pinned []string, guarded bool) { return nil, false }

// TakeNotes says nothing here: no command is stopped for a process limit.
func (helperless) TakeNotes() []string { return nil }

// OnStopped never calls f here: no guard ends a session's processes.
func (helperless) OnStopped(f func(paths []string)) {}

// GitKnown: nothing guards the root's git state here.
func (helperless) GitKnown() (known []string, version string, ok bool) { return nil, "", false }
