package mcpserver

import (
	"sync"

	"github.com/shellgate/shellgate"
)

// shellSessions holds a shellgate Session per MCP session: its directory, jobs
// and sandbox live as long as the client's connection.
type shellSessions struct {
	mu     sync.Mutex
	open   map[string]*shellgate.Session
	ended  map[string]bool // never reopened: a late call of an ended session runs nothing
	closed bool
}

// session returns the shell session of MCP session key, starting it on first
// use; nil once the session (or the server) has ended.
func (s *Server) session(key string) *shellgate.Session {
	ss := &s.sessions
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.closed || ss.ended[key] {
		return nil
	}
	if sess := ss.open[key]; sess != nil {
		return sess
	}
	if ss.open == nil {
		ss.open = map[string]*shellgate.Session{}
	}
	sess := s.gate.NewSession(shellgate.SessionConfig{ID: key})
	ss.open[key] = sess
	return sess
}

// end closes the shell session of key, killing its jobs.
func (ss *shellSessions) end(key string) {
	ss.mu.Lock()
	sess := ss.open[key]
	delete(ss.open, key)
	if key != "" { // in-process callers without a session share one, reopened as needed
		if ss.ended == nil {
			ss.ended = map[string]bool{}
		}
		ss.ended[key] = true
	}
	ss.mu.Unlock()
	if sess != nil {
		sess.Close()
	}
}

func (ss *shellSessions) isEnded(key string) bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.ended[key]
}

func (ss *shellSessions) keys() []string {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	keys := make([]string, 0, len(ss.open))
	for k := range ss.open {
		keys = append(keys, k)
	}
	return keys
}

// closeAll closes every shell session, side by side: each close waits for
// its sandbox to go (tens of milliseconds, most of it the kernel's), and
// hundreds one after another held a server's exit for seconds. None opens
// afterwards.
func (ss *shellSessions) closeAll() {
	ss.mu.Lock()
	ss.closed = true
	open := ss.open
	ss.open = nil
	ss.mu.Unlock()
	var wg sync.WaitGroup
	slots := make(chan struct{}, closeTogether)
	for _, sess := range open {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			if beforeSessionClose != nil {
				beforeSessionClose()
			}
			sess.Close()
		})
	}
	wg.Wait()
}

// closeTogether bounds the sessions closeAll closes at once.
const closeTogether = 32

// beforeSessionClose, if set (tests), runs before each close of closeAll.
var beforeSessionClose func()
