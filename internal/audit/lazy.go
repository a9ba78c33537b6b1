package audit

import "sync"

// Lazy is a Log opened by its first entry, so that a process that only
// checks commands never touches the file; one that could not be opened is
// tried again at the next entry. A nil *Lazy is a log that is off: it
// records nothing.
type Lazy struct {
	path    string
	pathErr error // no path: no home directory for the default
	opts    Options
	onError func(error)

	reported sync.Once // onError is called once

	mu     sync.Mutex
	log    *Log
	closed bool
}

// NewLazy returns the log at path, "" for DefaultPath. onError, if not nil,
// is called once, with the first failure of Write.
func NewLazy(path string, opts Options, onError func(error)) (*Lazy, error) {
	if err := opts.Check(); err != nil {
		return nil, err
	}
	a := &Lazy{path: path, opts: opts, onError: onError}
	if a.path == "" {
		a.path, a.pathErr = DefaultPath()
	}
	return a, nil
}

// Write appends e. A failure never reaches the caller, whose command goes
// on: it goes to onError, once.
func (a *Lazy) Write(e Entry) {
	if err := a.Append(e); err != nil {
		// Outside the lock: onError may do anything, even run a command.
		a.reported.Do(func() {
			if a.onError != nil {
				a.onError(err)
			}
		})
	}
}

// Append appends e, opening the log on first use; after Close it does
// nothing.
func (a *Lazy) Append(e Entry) error {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case a.closed:
		return nil
	case a.pathErr != nil:
		return a.pathErr
	case a.log == nil:
		l, err := Open(a.path, a.opts)
		if err != nil {
			return err
		}
		a.log = l
	}
	return a.log.Write(e)
}

// Sync fsyncs the lines written so far, so that Close finds nothing left to
// sync (a Gate has it done while it ends the commands).
func (a *Lazy) Sync() {
	if a == nil {
		return
	}
	a.mu.Lock()
	l := a.log
	a.mu.Unlock()
	if l != nil {
		l.Sync()
	}
}

// Close closes the log, if it was opened; later entries are dropped.
func (a *Lazy) Close() error {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.closed = true
	if a.log == nil {
		return nil
	}
	return a.log.Close()
}
