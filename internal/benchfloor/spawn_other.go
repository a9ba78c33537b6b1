//go:build !linux

package benchfloor

import (
	"errors"
	"time"
)

func (s Spawn) time() (time.Duration, error) { return 0, errors.New("cgroups are Linux's") }
