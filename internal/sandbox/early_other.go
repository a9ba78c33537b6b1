//go:build !linux

package sandbox

// An Early is a session's helper started before the session's spec is known;
// only Linux sessions have one to start early (session_linux.go). Here
// Prestart returns nil, whose Start is Start.
type Early struct{}

// Prestart returns nil here: Start does all the work.
func Prestart(bool, Limits) *Early { return nil }

// Start is sandbox.Start(spec).
func (*Early) Start(spec Spec) (*Session, error) { return Start(spec) }

// Discard has nothing to end.
func (*Early) Discard() {}
