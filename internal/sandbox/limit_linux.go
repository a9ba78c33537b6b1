package sandbox

import (
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/shellgate/shellgate/internal/cgroup"
)

// limitEvery is how often the session looks whether its commands have
// reached the process limit, while a command runs; limitJobsEvery is how
// often at most while only jobs left by commands that have ended run (a dev
// server between calls), once looks find nothing new: what those start is
// held by the limit all the same, and a session kept for hours need not
// wake ten times a second.
const (
	limitEvery     = 100 * time.Millisecond
	limitJobsEvery = time.Second
)

// watchLimit stops a command that reaches the session's process limit: a
// fork bomb keeps the limit reached for as long as it runs, and meanwhile no
// other command or job of the session can start a process. When the limit
// has refused a fork since the last look (cgroup.Group.LimitHits) and the
// commands still hold it (cgroup.Group.AtLimit: not a bomb that has ended on
// its own meanwhile), the command whose cgroup holds the most processes and
// threads is killed with everything it started; its Notes say why. It looks
// first once a command has run limitEvery (limitDue), then every
// limitEvery while a command runs, less often (doubling up to
// limitJobsEvery) while only left jobs do, and not at all while the session
// has no commands' cgroups: an idle session costs no wake-ups, nor does a
// command that ends sooner leaving nothing behind (most of an agent's).
func (s *Session) watchLimit() {
	last, ok := s.group.LimitHits(nil)
	if !ok {
		return
	}
	t := time.NewTimer(limitEvery)
	t.Stop()
	defer t.Stop()
	for {
		select {
		case <-s.wakeLimit: // a command has run limitEvery: look now
		case <-s.dead:
			return
		}
		s.limitWakes.Add(1)
		every := limitEvery
		for first := true; ; first = false {
			if !first {
				select {
				case <-t.C:
				case <-s.wakeLimit: // another command has run limitEvery: at its pace
					every = limitEvery
				case <-s.dead:
					return
				}
			}
			trees, running := s.liveTrees()
			if len(trees) == 0 {
				break
			}
			s.limitLooks.Add(1)
			n, _ := s.group.LimitHits(trees)
			if current, at := s.group.AtLimit(); n > last && at {
				s.stopOverLimit(trees, current)
				trees, _ = s.liveTrees()
				last, _ = s.group.LimitHits(trees)
				every = limitEvery
			} else {
				if n == last && !running {
					every = min(2*every, limitJobsEvery)
				} else {
					every = limitEvery
				}
				last = n
			}
			t.Reset(every)
		}
	}
}

// liveTrees lists the commands' cgroups, and whether any command's call is
// still running (not only jobs left by commands that have ended).
func (s *Session) liveTrees() (trees []string, running bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	trees = make([]string, 0, len(s.trees))
	for _, t := range s.trees {
		trees = append(trees, t)
		running = running || !s.returned[t]
	}
	return trees, running
}

// stopOverLimit kills the command of trees whose cgroup holds the most
// tasks, the one that took the limit, and waits (up to a second) for them
// to be gone, so that what they meanwhile failed to fork is not blamed on
// another. Unless that command holds at least half of the current charge:
// a bomb that has just ended leaves its processes charged until the
// session's PID 1 reaps them, listed in no cgroup, and the largest cgroup
// then is an innocent job's (the next look decides again).
func (s *Session) stopOverLimit(trees []string, current int64) {
	var top string
	most := 0
	for _, t := range trees {
		if n := cgroup.Tasks(t); n > most {
			top, most = t, n
		}
	}
	if top == "" || int64(most)*2 < current {
		return
	}
	s.mu.Lock()
	s.overLimit[top] = true
	left := s.returned[top]
	s.mu.Unlock()
	deadline := time.Now().Add(time.Second)
	for ; time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		s.group.KillAll(top, s.helper.Process.Pid, syscall.SIGKILL)
		if len(cgroup.Tree(top, s.helper.Process.Pid)) == 0 {
			break
		}
	}
	// Told once the session can start processes again (its PID 1 has
	// reaped what was killed): a command run on reading the note starts.
	for ; time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, at := s.group.AtLimit(); !at {
			break
		}
	}
	if left {
		s.mu.Lock()
		s.notes = append(s.notes, LeftOverLimitNote(s.procs))
		s.mu.Unlock()
	}
}

// TakeNotes returns, once, what the session did since the last call that
// no call's envelope told: processes a command left running, stopped for
// reaching the process limit after its call had returned.
func (s *Session) TakeNotes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	notes := s.notes
	s.notes = nil
	return notes
}

// OnStopped has f called with the protected paths (absolute) a process of
// the session made again after the sandbox had moved them aside, each time
// the helper ended every process of the session for it (its stopIfAgain),
// as it happens: the Gate writes it to the audit log.
func (s *Session) OnStopped(f func(paths []string)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onStopped = f
}

// StoppedNote tells that the session's processes were ended because one of
// them made the protected paths again (absolute, under root) after the
// sandbox had moved them aside.
func StoppedNote(root string, paths []string) string {
	names := make([]string, len(paths))
	for i, p := range paths {
		names[i] = p
		if r, err := filepath.Rel(root, p); err == nil && root != "" && filepath.IsLocal(r) {
			names[i] = r
		}
	}
	return fmt.Sprintf("Stopped: a process of this session made %s again after the sandbox had moved it aside, where git or tools outside the sandbox would obey it, so shellgate ended every process of the session (its background jobs, and any command running then) and moved it aside again. The session and its /tmp go on. The user can review what was moved into the quarantine.", strings.Join(names, ", "))
}

// limitDue starts the limit's watch (watchLimit), limitEvery after a
// command's start.
func (s *Session) limitDue() {
	s.mu.Lock()
	s.limitArmed = false
	s.mu.Unlock()
	select {
	case s.wakeLimit <- struct{}{}:
	default:
	}
}

// LeftOverLimitNote tells that processes a command left running after its
// call returned were stopped for reaching the session's process limit.
func LeftOverLimitNote(procs int) string {
	return fmt.Sprintf("Stopped: processes an earlier command left running after its call returned reached the sandbox session's limit of %d processes and threads, so shellgate killed them and everything they started. The session, its background jobs and its /tmp go on.", procs)
}

// OverLimitNote tells that a command was stopped for reaching the session's
// process limit of procs.
func OverLimitNote(procs int) string {
	return fmt.Sprintf("Stopped: the command reached the sandbox session's limit of %d processes and threads (a fork bomb, or more processes at once than that), so shellgate killed it and everything it started. The session, its background jobs and its /tmp go on; start fewer processes at a time, or raise the limit in shellgate's configuration ([sandbox] procs).", procs)
}
