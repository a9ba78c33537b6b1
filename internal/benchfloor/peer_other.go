//go:build !linux

package benchfloor

import (
	"errors"
	"time"
)

type peer struct{}

func startPeer(bool) (*Peer, error)        { return nil, errors.New("cgroups are Linux's") }
func (*peer) time() (time.Duration, error) { return 0, errors.New("cgroups are Linux's") }
func (*peer) close() error                 { return nil }
