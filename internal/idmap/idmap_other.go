//go:build !linux

package idmap

import (
	"errors"
	"os"
)

// Others needs Linux's idmapped mounts.
func Others(string) (*os.File, error) { return nil, errors.ErrUnsupported }

// Trees needs Linux's idmapped mounts.
func Trees([]string) ([]*os.File, error) { return nil, errors.ErrUnsupported }

// Works is false: Others needs Linux.
func Works(string) bool { return false }
