package analysis

import (
	"testing"
	"time"
)

// TestClockCountsOnlyCPU: time the analysis spends off the CPU (here asleep;
// on a loaded machine, waiting for its turn) does not count against the
// budget, so a busy machine cannot make a line "too costly".
func TestClockCountsOnlyCPU(t *testing.T) {
	elapsed, stop := startClock()
	defer stop()
	const pause = 200 * time.Millisecond
	time.Sleep(pause)
	if e := elapsed(); e >= pause/2 {
		t.Errorf("the clock counted %v of a %v sleep", e, pause)
	}
	for start := time.Now(); time.Since(start) < 20*time.Millisecond; {
	}
	if e := elapsed(); e <= 0 {
		t.Errorf("the clock counted %v after 20 ms of work", e)
	}
}
