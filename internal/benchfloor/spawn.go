package benchfloor

import "time"

// Spawn times starting `true` and waiting for it, the least a sandboxed
// command costs the kernel beside a plain one: with InCgroup it is born in a
// cgroup of its own made for it and removed after it, as the sandbox gives
// each command (cgroup2: clone3 into it; cgroup v1, which cannot: the
// forking thread moves into the cgroup's tasks and back, the migration
// that waits on the kernel after a pause). An error says this machine
// cannot make such a cgroup here.
type Spawn struct{ InCgroup bool }

// Time starts one `true` as s says and returns how long it took.
func (s Spawn) Time() (time.Duration, error) { return s.time() }
