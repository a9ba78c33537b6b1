//go:build !linux

package helperstart

// Prestart does nothing: only Linux sessions have a helper process.
func Prestart(network bool) {}

// Discard does nothing: see Prestart.
func Discard() {}
