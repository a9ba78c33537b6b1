//go:build !linux

package sandbox

// NetPID is 0: sessions have no network namespace of their own here; their
// commands share the host's.
func (*Session) NetPID() int { return 0 }
