package benchfloor

import "time"

// Spawn times starting `true` and waiting for it, the least a sandboxed
// command costs the kernel beside a plain one: with InCgroup it is born in a
// cgroup of its own, as the sandbox gives each command, made before the
// clock starts and removed after it stops (the sandbox makes a command's
// cgroup while the one before runs, or reuses that one's). Where cgroup2 is
// mounted, alone or beside v1 (a hybrid machine), it is born there by clone3,
// as the sandbox's commands are; on v1 alone, which cannot, the forking
// thread moves into the cgroup's tasks and back, the migration that waits on
// the kernel after a pause. An error says this machine cannot make such a
// cgroup here.
type Spawn struct{ InCgroup bool }

// Time starts one `true` as s says and returns how long it took.
func (s Spawn) Time() (time.Duration, error) { return s.time() }
