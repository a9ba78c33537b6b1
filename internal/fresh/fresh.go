// Package fresh shares a slow gathering (a walk of the host, say) among the
// callers that ask for it at once, without handing anyone a result older
// than its call: a caller that arrives while a gathering runs waits for the
// next one, which every caller arriving meanwhile shares. A burst of N calls
// gathers twice, not N times; a lone call gathers alone.
package fresh

import "sync"

// Shared gathers values of type T; its zero value is ready to use.
type Shared[T any] struct {
	mu      sync.Mutex
	running bool
	next    *call[T] // what callers arriving now get; not started yet
}

type call[T any] struct {
	done chan struct{}
	v    T
}

// Get returns what a call of gather that began after Get was called
// returned, shared with the other callers of that gathering.
func (s *Shared[T]) Get(gather func() T) T {
	s.mu.Lock()
	if s.next == nil {
		s.next = &call[T]{done: make(chan struct{})}
	}
	c := s.next
	if !s.running {
		s.running, s.next = true, nil
		go s.run(c, gather)
	}
	s.mu.Unlock()
	<-c.done
	return c.v
}

// run gathers for c, then for whoever arrived meanwhile, until nobody did.
func (s *Shared[T]) run(c *call[T], gather func() T) {
	for c != nil {
		c.v = gather()
		close(c.done)
		s.mu.Lock()
		c, s.next = s.next, nil
		s.running = c != nil
		s.mu.Unlock()
	}
}
