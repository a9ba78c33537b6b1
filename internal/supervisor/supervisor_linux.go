// Package supervisor hands the system calls a sandbox's kernel cannot judge
// alone to this process: those that reach a unix socket by its path
// (internal/unixgate), unless Landlock or the host's network settles them,
// and the opens that may write through a hard link (internal/copyup). One
// notifying seccomp filter on the calling thread, inherited by every
// command it forks, serves both.
package supervisor

import (
	"errors"
	"fmt"

	"github.com/shellgate/shellgate/internal/copyup"
	"github.com/shellgate/shellgate/internal/fsrules"
	"github.com/shellgate/shellgate/internal/notify"
	"github.com/shellgate/shellgate/internal/seccomp"
	"github.com/shellgate/shellgate/internal/unixgate"
)

// A Guard says how the calling thread's commands are supervised: Unix is the
// unix_sockets layer ("" when missing), CopyUp whether hard_links is applied.
type Guard struct {
	Unix   string
	CopyUp bool
}

// Supervise guards the calling thread, which must stay locked to its
// goroutine. landlockABI is the thread's Landlock ABI (0 without a domain),
// noSupervisor (unixgate.Plan) says why host sockets cannot be supervised,
// if so, and opener performs the write opens (nil: none are handed over).
// The error says, per layer, what is missing and why.
func Supervise(landlockABI int, noSupervisor string, opener *copyup.Opener) (Guard, error) {
	var g Guard
	var calls seccomp.Calls
	how, sockets, err := unixgate.Plan(landlockABI, noSupervisor)
	if g.Unix = how; sockets {
		calls |= seccomp.UnixSends
	}
	if opener != nil {
		calls |= seccomp.WriteOpens
		if opener.Creates() {
			calls |= seccomp.Creations
		}
	}
	if calls == 0 {
		return g, err
	}
	listener, ierr := seccomp.InstallNotify(calls)
	if ierr != nil {
		var errs []error
		if sockets {
			g.Unix = ""
			errs = append(errs, unixgate.Unsupervised(landlockABI, ierr))
		}
		if opener != nil {
			errs = append(errs, fmt.Errorf("%s: the kernel takes no notifying seccomp filter (%s), so a write through a hard link changes the file for its names outside the root too", copyup.Layer, fsrules.ErrnoName(ierr)))
		}
		return g, errors.Join(errs...)
	}
	g.CopyUp = opener != nil
	// A goroutine never runs on a locked thread, and Go makes new threads
	// from a clean one: the filter stays on the caller.
	go notify.Serve(listener, func(c *notify.Caller, n *notify.Notif) notify.Result {
		if unixgate.Handles(n.Nr) {
			return unixgate.Handle(c, n)
		}
		return opener.Handle(c, n)
	})
	return g, err
}
