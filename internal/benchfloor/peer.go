package benchfloor

import "time"

// Peer is a second process that does for each request what the sandbox's
// helper does for each command, and nothing else: asleep on a socket until
// asked, it starts `true` (in a cgroup made for it, as Spawn{InCgroup: true})
// and answers once it has exited. A round trip through it after an idle gap
// is the least a sandboxed call can cost beside a command started in-process:
// waking another process, twice, and what the kernel does for the cgroup.
type Peer struct{ peer }

// StartPeer starts a Peer: this executable again, which it must let run its
// package initialisation (a test binary or a program importing this package).
// With inNamespaces the peer lives in user, mount and PID namespaces of its
// own, as the sandbox's helper does, so that each `true` is born in them.
func StartPeer(inNamespaces bool) (*Peer, error) { return startPeer(inNamespaces) }

// Time asks the peer for one `true` and returns how long the round trip took.
func (p *Peer) Time() (time.Duration, error) { return p.time() }

// Close ends the peer and waits for it.
func (p *Peer) Close() error { return p.close() }
