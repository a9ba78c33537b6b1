package shellgate

import "github.com/shellgate/shellgate/internal/runner"

// Subreap makes this process a child subreaper (Linux): what a command leaves
// running when its shell exits (setsid …&, nohup …&, a daemon) is reparented
// to this process instead of init, so that, without the sandbox, the look
// after each call for what it left, and Close's for what to end, read this
// process's own tree of processes rather than every process of the machine.
// The orphans that end are reaped by this process.
//
// A subreaper is a property of the whole process, so a program embedding
// shellgate decides: call Subreap at start, before any command runs. It must
// then not need the exit status of a child it starts itself in a session of
// its own (os/exec with Setsid): such a child that ends may be reaped as an
// orphan before its Wait. The shellgate command calls it for mcp, run and
// exec. Elsewhere than on Linux it returns errors.ErrUnsupported and changes
// nothing.
func Subreap() error { return runner.Subreap() }
