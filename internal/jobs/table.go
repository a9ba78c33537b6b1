package jobs

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Defaults for Limits left zero.
const (
	DefaultMaxRunning  = 16
	DefaultMaxFinished = 32
	DefaultKeep        = 30 * time.Minute
)

// Limits bound what a Table keeps.
type Limits struct {
	// MaxRunning is the most jobs running at once; one more is refused.
	MaxRunning int
	// MaxFinished is the most ended jobs remembered; the oldest are forgotten
	// first, with their output files.
	MaxFinished int
	// Keep is how long an ended job is remembered.
	Keep time.Duration
}

func (l Limits) orDefaults() Limits {
	if l.MaxRunning <= 0 {
		l.MaxRunning = DefaultMaxRunning
	}
	if l.MaxFinished <= 0 {
		l.MaxFinished = DefaultMaxFinished
	}
	if l.Keep <= 0 {
		l.Keep = DefaultKeep
	}
	return l
}

// Table is a session's jobs. It is safe for concurrent use.
type Table struct {
	limits Limits

	mu     sync.Mutex
	seq    int             // calls
	jobs2  int             // jobs
	jobs   map[string]*Job // by id; calls not (yet) jobs under a key of their own
	closed bool
}

// NewTable returns an empty Table.
func NewTable(l Limits) *Table {
	return &Table{limits: l.orDefaults(), jobs: map[string]*Job{}}
}

// ErrClosed is returned by New after Close.
var ErrClosed = fmt.Errorf("the session has ended")

// New registers a command about to start. A call that is a job from the start
// (asJob: in the background, on a terminal) is refused when the session
// already runs its most jobs; a foreground call is bounded by its caller and
// may become a job later (Keep). Call Finish on it when it ends; Keep to make
// it a job the job calls can see, or Discard to forget it.
func (t *Table) New(spec Spec, asJob bool) (*Job, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, ErrClosed
	}
	t.pruneLocked(time.Now())
	if err := t.roomLocked(); asJob && err != nil {
		return nil, err
	}
	t.seq++
	// Its files are named for what it is when it starts: a foreground call's
	// N.stdout.log, as a spill file; a job's N.job-stdout.log.
	logName := ""
	if asJob {
		logName = "job-"
	}
	j := &Job{
		id:      fmt.Sprintf("call%d", t.seq), // not a job id: Get does not find it
		spec:    spec,
		started: time.Now(),
		Stdout:  NewLog(spec.LogDir, logName+"stdout", spec.LogMax, spec.Redact),
		Stderr:  NewLog(spec.LogDir, logName+"stderr", spec.LogMax, spec.Redact),
		done:    make(chan struct{}),
	}
	if !asJob { // a call's output is one file, its spill file if it stays a call
		j.Stdout.Whole()
		j.Stderr.Whole()
	}
	t.jobs[j.id] = j
	return j, nil
}

// roomLocked says why no more jobs may run, if so.
func (t *Table) roomLocked() error {
	running := 0
	for _, j := range t.jobs {
		if j.kept() && !j.over() {
			running++
		}
	}
	if running >= t.limits.MaxRunning {
		return fmt.Errorf("%d jobs are running, the most this session allows; kill one first (list them to see which)", running)
	}
	return nil
}

// Keep makes j a job, with an id of its own (j1, j2, …), unless the session
// already runs its most jobs (asJob calls were counted by New).
func (t *Table) Keep(j *Job, asJob bool) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.roomLocked(); !asJob && err != nil {
		return err
	}
	delete(t.jobs, j.id)
	j.Stdout.Rotate()
	j.Stderr.Rotate()
	t.jobs2++
	j.mu.Lock()
	j.id = fmt.Sprintf("j%d", t.jobs2)
	j.mu.Unlock()
	t.jobs[j.id] = j
	return nil
}

// Discard forgets a job and removes its files: one that never started, or a
// foreground call that ended before it became a job.
func (t *Table) Discard(j *Job) {
	t.mu.Lock()
	delete(t.jobs, j.id)
	t.mu.Unlock()
	j.remove()
}

// Get returns the job with this id.
func (t *Table) Get(id string) (*Job, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.pruneLocked(time.Now())
	j, ok := t.jobs[id]
	if !ok || !j.kept() {
		return nil, false
	}
	return j, true
}

// List returns the jobs, oldest first.
func (t *Table) List() []*Job {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.pruneLocked(time.Now())
	list := make([]*Job, 0, len(t.jobs))
	for _, j := range t.jobs {
		if j.kept() {
			list = append(list, j)
		}
	}
	slices.SortFunc(list, func(a, b *Job) int { return a.started.Compare(b.started) })
	return list
}

// pruneLocked forgets ended jobs past Keep, and the oldest beyond MaxFinished.
func (t *Table) pruneLocked(now time.Time) {
	var ended []*Job
	for _, j := range t.jobs {
		if !j.over() {
			continue
		}
		j.mu.Lock()
		at := j.ended
		j.mu.Unlock()
		if now.Sub(at) > t.limits.Keep {
			delete(t.jobs, j.id)
			j.remove()
			continue
		}
		ended = append(ended, j)
	}
	if extra := len(ended) - t.limits.MaxFinished; extra > 0 {
		slices.SortFunc(ended, func(a, b *Job) int { return a.ended.Compare(b.ended) })
		for _, j := range ended[:extra] {
			delete(t.jobs, j.id)
			j.remove()
		}
	}
}

// Close kills every running job, waits until they have ended (or ctx is done),
// and removes every job's files.
func (t *Table) Close(ctx context.Context) error {
	t.mu.Lock()
	t.closed = true
	all := make([]*Job, 0, len(t.jobs))
	for _, j := range t.jobs {
		all = append(all, j)
	}
	t.jobs = map[string]*Job{}
	t.mu.Unlock()
	var err error
	for _, j := range all {
		if kerr := j.Kill(ctx); kerr != nil && err == nil {
			err = kerr
		}
		j.remove()
	}
	return err
}
