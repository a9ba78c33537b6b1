package analysis

import (
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// startClock measures the analysis by the CPU time its thread uses, not by the
// time that passes: on a loaded machine the same command must get the same
// verdict, and a busy neighbour must not make a short line "too costly". The
// goroutine stays on its thread until stop, so that thread's clock is the
// analysis's own.
func startClock() (elapsed func() time.Duration, stop func()) {
	runtime.LockOSThread()
	start, ok := threadCPU()
	if !ok {
		runtime.UnlockOSThread()
		return wallClock()
	}
	return func() time.Duration {
		now, _ := threadCPU()
		return now - start
	}, runtime.UnlockOSThread
}

func threadCPU() (time.Duration, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
