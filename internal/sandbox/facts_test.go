package sandbox

import (
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Callers that ask together share gatherings, and nobody gets facts whose
// gathering began before it asked: a file made root-only just before a
// session starts is in that session's facts.
func TestSharedFactsAreNeverOlderThanTheCall(t *testing.T) {
	var s sharedFacts
	var gatherings atomic.Int64
	var clock atomic.Int64 // ticks at each call and each gathering's start
	gather := func() Facts {
		gatherings.Add(1)
		began := clock.Add(1)
		time.Sleep(20 * time.Millisecond) // a walk of /etc and /var
		return Facts{Private: []string{strconv.FormatInt(began, 10)}} // stands for what it found
	}
	const callers = 40
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			asked := clock.Add(1)
			f := s.get(gather)
			began, err := strconv.ParseInt(f.Private[0], 10, 64)
			if err != nil {
				t.Error(err)
				return
			}
			if began < asked {
				t.Errorf("asked at tick %d, got facts gathered from tick %d", asked, began)
			}
		})
	}
	wg.Wait()
	if n := gatherings.Load(); n >= callers || n < 1 {
		t.Errorf("%d gatherings for %d concurrent callers", n, callers)
	}
	// Alone, a caller gets a gathering of its own.
	before := gatherings.Load()
	s.get(gather)
	if gatherings.Load() != before+1 {
		t.Errorf("a lone call made %d gatherings", gatherings.Load()-before)
	}
}
