//go:build !linux

package benchfloor

import (
	"errors"
	"time"
)

func (e Exit) time(string) (time.Duration, error) {
	return 0, errors.New("namespaces are Linux's")
}
