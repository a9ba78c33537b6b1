//go:build !linux

package textpages

// Drop does nothing here.
func Drop() error { return nil }
