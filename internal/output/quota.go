package output

import (
	"os"
	"sync"
)

// A Quota bounds the bytes that the spill files of one session (a Gate's
// directory) hold together, so that a run of large outputs cannot fill the
// disk: a file that needs room takes it from the oldest complete files, which
// are removed; one that still finds none stops there, as at SpillMax. It is
// safe for concurrent use; nil means no bound.
type Quota struct {
	mu    sync.Mutex
	max   int64
	used  int64        // by open and complete files
	files []quotaEntry // complete files, oldest first
}

type quotaEntry struct {
	path string
	size int64
}

// NewQuota returns a Quota of max bytes.
func NewQuota(max int64) *Quota { return &Quota{max: max} }

// take grants up to n bytes, removing the oldest complete files while room
// is short.
func (q *Quota) take(n int64) int64 {
	if q == nil {
		return n
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.used+n > q.max && len(q.files) > 0 {
		old := q.files[0]
		q.files = q.files[1:]
		if err := os.Remove(old.path); err == nil || os.IsNotExist(err) {
			q.used -= old.size
		}
	}
	n = max(0, min(n, q.max-q.used))
	q.used += n
	return n
}

// done records a complete file of size bytes, to be removed first when room
// is short.
func (q *Quota) done(path string, size int64) {
	if q == nil || path == "" {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.files = append(q.files, quotaEntry{path, size})
}

// give returns bytes of a file removed before it was complete.
func (q *Quota) give(n int64) {
	if q == nil {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.used -= n
}

// adopt records a complete file of size bytes written without the quota,
// making room for it as take does, and cuts it to the room there is: it
// returns the bytes the file keeps.
func (q *Quota) adopt(path string, size int64) int64 {
	if q == nil {
		return size
	}
	kept := q.take(size)
	if kept < size && os.Truncate(path, kept) != nil {
		q.mu.Lock()
		q.used += size - kept // it stays whole: count what is there
		q.mu.Unlock()
		kept = size
	}
	q.done(path, kept)
	return kept
}
