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
func StartPeer() (*Peer, error) { return startPeer() }

// Time asks the peer for one `true` and returns how long the round trip took.
func (p *Peer) Time() (time.Duration, error) { return p.time() }

// Close ends the peer and waits for it.
func (p *Peer) Close() error { return p.close() }
