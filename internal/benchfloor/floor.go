// Package benchfloor is the kernel's share of shellgate's costs, for the
// speed benchmarks: the same work the sandbox makes the kernel do, done
// without any shellgate code, so that a benchmark can time it beside
// shellgate in the same run. What a floor takes, shellgate cannot save.
package benchfloor

import "time"

// Exit describes a shell that waits on its stdin and exits at EOF: in new
// user, mount and PID namespaces (NS), IPC and network ones too (NoNet), as
// the sandbox's helper without network access; with Binds bind mounts and
// Overlays volatile overlays, as the helper's view and its tool caches.
type Exit struct {
	NS, NoNet       bool
	Binds, Overlays int
}

// Kinds are the exits BenchmarkNamespaceExitFloor compares, from a plain shell
// to one torn down as the helper's namespaces are.
var Kinds = []struct {
	Name string
	Exit Exit
}{
	{"plain", Exit{}},
	{"ns", Exit{NS: true}},
	{"ns-50-mounts", Exit{NS: true, Binds: 50}},
	{"ns-ipc-net-50-mounts", Exit{NS: true, NoNet: true, Binds: 50}},
	{"helper-like", Helper},
}

// Helper is what the sandbox's helper holds when it exits: its namespaces,
// about 50 mounts and the two Go caches' overlays (a home with no other tool
// cache, as the benchmarks' homes).
var Helper = Exit{NS: true, NoNet: true, Binds: 50, Overlays: 2}

// Time starts the shell described by e, with its layers under dir, waits
// until it is ready, closes its stdin and returns how long it took from
// there to be reaped: its exit with the teardown of all it held. An error
// says this machine cannot make it (no user namespaces, say).
func (e Exit) Time(dir string) (time.Duration, error) {
	stop, err := e.Start(dir)
	if err != nil {
		return 0, err
	}
	start := time.Now()
	err = stop()
	return time.Since(start), err
}

// Start starts the shell described by e, with its layers under dir, and
// returns once it is ready; stop closes its stdin and waits until it is
// reaped.
func (e Exit) Start(dir string) (stop func() error, err error) { return e.start(dir) }
