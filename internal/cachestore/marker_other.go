//go:build !linux

package cachestore

import "os"

// readSmall reads the small file at path.
func readSmall(path string) ([]byte, error) { return os.ReadFile(path) }

// removeMarker removes layer's VolatileMarker, if it is there.
func removeMarker(layer string) error { return os.RemoveAll(layer + VolatileMarker) }
