//go:build !linux

package analysis

import "time"

// startClock measures the analysis by the time that passes: elsewhere there is
// no per-thread CPU clock to ask.
func startClock() (elapsed func() time.Duration, stop func()) {
	return wallClock()
}
