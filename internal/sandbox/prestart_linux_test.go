package sandbox

import (
	"sync/atomic"
	"testing"

	"github.com/shellgate/shellgate/internal/lane"
)

// A prestarted helper's warm-up (as root, the host facts' user namespace: a
// child forked) waits for the helper's fork: two forks of the process at
// once each hold its memory map's lock, and the helper's start waited for
// the other's. One that Start or Discard took by then is not warmed at all:
// the session's facts make the namespace themselves, and a discarded helper
// (a refused command) needs none.
func TestPrestartWarmsAfterTheFork(t *testing.T) {
	lane.Live(t)
	var calls, beforeFork atomic.Int32
	var e *Early
	ready := make(chan struct{})
	old := warmHook
	warmHook = func() {
		<-ready
		calls.Add(1)
		select {
		case <-e.done:
		default:
			beforeFork.Add(1)
		}
	}
	t.Cleanup(func() { warmHook = old })

	e = Prestart(false, Limits{})
	close(ready)
	<-e.done
	<-e.warmed
	if calls.Load() != 1 || beforeFork.Load() != 0 {
		t.Errorf("warmed %d times, %d of them before the helper's fork was done; want once, after", calls.Load(), beforeFork.Load())
	}
	e.Discard()

	calls.Store(0)
	ready = make(chan struct{})
	e = Prestart(false, Limits{})
	close(ready)
	e.Discard()
	if calls.Load() != 0 {
		t.Errorf("a discarded helper was warmed for %d times", calls.Load())
	}
}
