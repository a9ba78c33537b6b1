package runner

import "time"

// quietLimit bounds reading after the shell exited when no process is left in its
// group. Then all the writers are normally gone and EOF is immediate; only a
// process that escaped the group without our marker can hold a pipe open, and if
// it keeps writing, reading stops after this long.
const quietLimit = 2 * time.Second

// collect waits for the pumps to reach EOF after the shell exited. While the
// process group still has members (busy) it waits at most d; otherwise it waits
// until the pipes have been quiet for d, or quietLimit. Quiet is counted from
// each pump's last output, not from the exit: a background job that printed
// nothing while the shell ran (a server, a sleep) ends the wait at once, with
// no timer, which the runtime could not set shorter than a millisecond.
// Whether the group is busy is sent on found, by a look that runs meanwhile,
// and is peeked at, not taken. Pumps still open then are detached and kept by
// the supervisor, reading and discarding, so that a background process writing
// to them neither blocks nor gets SIGPIPE. held reports whether any was.
//
// What is in the pipes when the shell exited is read whatever the drain; a
// pump is asked where its pipe stands (pump.mark, a wake of its goroutine)
// only while the group has members (grouped): with none, every writer the
// group had is gone, and one that escaped it leaves the quietLimit window,
// which ends only once the pipes are quiet.
func (s *Supervisor) collect(pumps []*pump, found chan leftBehind, d time.Duration, grouped bool) (held bool) {
	if len(pumps) == 0 {
		return false
	}
	start := time.Now()
	end := start.Add(max(d, quietLimit))
	hardEnd := start.Add(quietLimit)
	// What is in the pipes now, the shell's last output among it, is read
	// whatever the drain: d bounds only what comes later.
	owed := make([]int64, len(pumps))
	for i, p := range pumps {
		if grouped && !p.finished() {
			owed[i] = p.mark(time.Until(hardEnd))
		}
	}
	var tick *time.Timer
	defer func() {
		if tick != nil {
			tick.Stop()
		}
	}()
	for {
		var c [2]<-chan struct{}
		pending := 0
		for i, p := range pumps {
			if !p.finished() {
				c[i] = p.done
				pending++
			}
		}
		if pending == 0 {
			return false
		}
		now := time.Now()
		next, quiet := quietSince(pumps, d, now)
		if quiet && (!readOwed(pumps, owed) || !settled(pumps, end.Sub(now))) {
			quiet, next = false, now.Add(d) // it had output in hand: there may be more
		}
		if quiet {
			break
		}
		wait := min(next.Sub(now), end.Sub(now))
		if !now.Before(end) {
			if !now.Before(hardEnd) || readOwed(pumps, owed) {
				settled(pumps, hardEnd.Sub(now)) // what a pump has in hand is delivered
				break
			}
			wait = time.Millisecond // a starved pump: what it owes first
		}
		if tick == nil {
			tick = time.NewTimer(wait)
		} else {
			tick.Reset(wait)
		}
		select {
		case <-c[0]:
		case <-c[1]:
		case l := <-found:
			found <- l // for the caller
			found = nil
			if len(l.members) > 0 {
				end = start.Add(d)
			}
		case <-tick.C:
		}
	}
	for _, p := range pumps {
		if !p.finished() {
			p.detach()
			s.adopt(p)
			held = true
		}
	}
	return held
}

// readOwed reports whether each pump has read, or reached EOF after, what owed
// says was in its pipe.
func readOwed(pumps []*pump, owed []int64) bool {
	for i, p := range pumps {
		if !p.finished() && p.total.Load() < owed[i] {
			return false
		}
	}
	return true
}

// settled settles the pumps that look idle (see pump.settle), within wait,
// and reports whether they were: none had output in hand.
func settled(pumps []*pump, wait time.Duration) bool {
	quiet := true
	for _, p := range pumps {
		if p.finished() {
			continue
		}
		before := p.total.Load()
		p.settle(max(wait, 0))
		if p.total.Load() != before {
			quiet = false
		}
	}
	return quiet
}

// quietSince reports whether every open pump has waited in one and the same
// Read, its pipe empty, for d by now; if not, next is when the last of them
// would have (now+d for one busy with data).
func quietSince(pumps []*pump, d time.Duration, now time.Time) (next time.Time, quiet bool) {
	next, quiet = now, true
	for _, p := range pumps {
		if p.finished() {
			continue
		}
		at := now.Add(d)
		if since, waiting := p.waitingSince(); waiting && unread(p.r) == 0 {
			at = since.Add(d)
		}
		if at.After(now) {
			quiet = false
			next = later(next, at)
		}
	}
	return next, quiet
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func (s *Supervisor) adopt(p *pump) {
	s.mu.Lock()
	defer s.mu.Unlock()
	kept := s.orphans[:0]
	for _, o := range s.orphans {
		if !o.finished() {
			kept = append(kept, o)
		}
	}
	s.orphans = append(kept, p)
}

// stopPumps gives the pumps up to wait to reach EOF, then stops them.
func stopPumps(pumps []*pump, wait time.Duration) {
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	for _, p := range pumps {
		select {
		case <-p.done:
			continue
		case <-deadline.C:
		}
		break
	}
	for _, p := range pumps {
		if p.finished() {
			continue
		}
		p.stopping.Store(true)
		if p.r.SetReadDeadline(time.Now()) == nil {
			<-p.done
		} else {
			p.r.Close() // no deadlines (Windows): closing is all we can do
		}
	}
}
