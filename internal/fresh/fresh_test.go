package fresh

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Callers that ask together share gatherings, and nobody gets a value whose
// gathering began before it asked (a file made root-only just before a
// session starts is in that session's facts).
func TestNeverOlderThanTheCall(t *testing.T) {
	var s Shared[int64]
	var gatherings atomic.Int64
	var clock atomic.Int64 // ticks at each call and each gathering's start
	gather := func() int64 {
		gatherings.Add(1)
		began := clock.Add(1)
		time.Sleep(20 * time.Millisecond) // as a walk of /etc and /var takes
		return began
	}
	const callers = 40
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			asked := clock.Add(1)
			if began := s.Get(gather); began < asked {
				t.Errorf("asked at tick %d, got a value gathered from tick %d", asked, began)
			}
		})
	}
	wg.Wait()
	if n := gatherings.Load(); n >= callers || n < 1 {
		t.Errorf("%d gatherings for %d concurrent callers", n, callers)
	}
	// Alone, a caller gets a gathering of its own.
	before := gatherings.Load()
	s.Get(gather)
	if gatherings.Load() != before+1 {
		t.Errorf("a lone call made %d gatherings", gatherings.Load()-before)
	}
}
