package mcpserver

import (
	"crypto/rand"
	"os"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// spillFiles remembers the files each session's complete outputs were saved to, so
// that they go when the session ends rather than staying for the retention period:
// the paths were given to that session's model only.
type spillFiles struct {
	mu     sync.Mutex
	files  map[string][]string
	ending map[string]bool // sessions that ended with calls still in flight
}

// sessionKey names ss: its ID over HTTP; stdio and in-memory sessions have none,
// and get one of their own, random, until forgetSessionKey. (Their address would
// not do: once a session is freed a new one may get it, and would inherit the
// ended session's state — refused as ended — and its audit records' id.)
func sessionKey(ss *mcp.ServerSession) string {
	if ss == nil {
		return ""
	}
	if id := ss.ID(); id != "" {
		return id
	}
	localKeys.mu.Lock()
	defer localKeys.mu.Unlock()
	if id, ok := localKeys.ids[ss]; ok {
		return id
	}
	if localKeys.ids == nil {
		localKeys.ids = map[*mcp.ServerSession]string{}
	}
	id := "local-" + strings.ToLower(rand.Text()[:16])
	localKeys.ids[ss] = id
	return id
}

// forgetSessionKey drops ss's key, once the session has ended.
func forgetSessionKey(ss *mcp.ServerSession) {
	localKeys.mu.Lock()
	delete(localKeys.ids, ss)
	localKeys.mu.Unlock()
}

var localKeys struct {
	mu  sync.Mutex
	ids map[*mcp.ServerSession]string
}

func (s *spillFiles) add(key, path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.files == nil {
		s.files = map[string][]string{}
	}
	s.files[key] = append(s.files[key], path)
}

// remove deletes the files of session key.
func (s *spillFiles) remove(key string) {
	s.mu.Lock()
	files := s.files[key]
	delete(s.files, key)
	delete(s.ending, key)
	s.mu.Unlock()
	for _, f := range files {
		os.Remove(f)
	}
}

// end removes the files of session key now, or once its calls in flight have
// returned (busy), since those may still save output.
func (s *spillFiles) end(key string, busy bool) {
	if !busy {
		s.remove(key)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ending == nil {
		s.ending = map[string]bool{}
	}
	s.ending[key] = true
}

// idle is called when session key has no call in flight any more.
func (s *spillFiles) idle(key string) {
	s.mu.Lock()
	ending := s.ending[key]
	s.mu.Unlock()
	if ending {
		s.remove(key)
	}
}

// keys lists the sessions with files.
func (s *spillFiles) keys() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := make([]string, 0, len(s.files))
	for k := range s.files {
		keys = append(keys, k)
	}
	return keys
}

// removeAll deletes every file remembered, when the server closes.
func (s *spillFiles) removeAll() {
	for _, k := range s.keys() {
		s.remove(k)
	}
}
