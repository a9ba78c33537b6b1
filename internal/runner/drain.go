package runner

import "time"

// quietLimit bounds reading after the shell exited when no process is left in its
// group. Then all the writers are normally gone and EOF is immediate; only a
// process that escaped the group without our marker can hold a pipe open, and if
// it keeps writing, reading stops after this long.
const quietLimit = 2 * time.Second

// collect waits for the pumps to reach EOF after the shell exited. While the
// process group still has members (busy) it waits at most d; otherwise it waits
// until no output has arrived for d, or quietLimit. Whether it is busy is sent
// on found, by a look that runs meanwhile, and is peeked at, not taken. Pumps
// still open then are detached and kept by the supervisor, reading and
// discarding, so that a background process writing to them neither blocks nor
// gets SIGPIPE. held reports whether any was.
//
// What is in the pipes when the shell exited is read whatever the drain; a
// pump is asked where its pipe stands (pump.mark, a wake of its goroutine)
// only while the group has members (grouped): with none, every writer the
// group had is gone, and one that escaped it leaves the quietLimit window,
// which ends only once the pipes are idle.
func (s *Supervisor) collect(pumps []*pump, found chan leftBehind, d time.Duration, grouped bool) (held bool) {
	if len(pumps) == 0 {
		return false
	}
	start := time.Now()
	end := start.Add(max(d, quietLimit))
	tick := time.NewTimer(d)
	defer tick.Stop()
	hardEnd := start.Add(quietLimit)
	// What is in the pipes now, the shell's last output among it, is read
	// whatever the drain: d bounds only what comes later.
	owed := make([]int64, len(pumps))
	for i, p := range pumps {
		if grouped && !p.finished() {
			owed[i] = p.mark(time.Until(hardEnd))
		}
	}
	idle := make([]idleWatch, len(pumps))
	for i, p := range pumps {
		idle[i].check(p) // a Read already waiting now and still at the tick has waited d
	}
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
		select {
		case <-c[0]:
			continue
		case <-c[1]:
			continue
		case l := <-found:
			found <- l // for the caller
			found = nil
			if len(l.members) > 0 {
				end = start.Add(d)
			}
			continue
		case <-tick.C:
		}
		now := time.Now()
		allIdle := true
		for i, p := range pumps {
			if !idle[i].check(p) {
				allIdle = false
			}
		}
		if allIdle && (!readOwed(pumps, owed) || !settled(pumps, end.Sub(now))) {
			allIdle = false // it had output in hand: there may be more
		}
		if !now.Before(end) && !allIdle && now.Before(hardEnd) && !readOwed(pumps, owed) {
			tick.Reset(time.Millisecond) // a starved pump: what it owes first
			continue
		}
		if allIdle {
			break
		}
		if !now.Before(end) {
			settled(pumps, hardEnd.Sub(now)) // what a pump has in hand is delivered
			break
		}
		tick.Reset(min(d, end.Sub(now)))
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

// idleWatch tells whether a pump has been waiting for data, in one and the same
// Read call with nothing in the pipe, since the previous check.
type idleWatch struct {
	reads   uint64
	waiting bool
}

func (w *idleWatch) check(p *pump) bool {
	if p.finished() {
		return true
	}
	reads, waiting := p.reads.Load(), p.reading.Load() && unread(p.r) == 0
	idle := w.waiting && waiting && reads == w.reads
	w.reads, w.waiting = reads, waiting
	return idle
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
