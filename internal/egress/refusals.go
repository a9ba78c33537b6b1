package egress

import (
	"net"
	"slices"
	"strconv"
	"sync"
	"time"
)

// Refusals keeps the proxy's latest refusals, for the note of the command
// that made them. The zero value is empty; it is safe for concurrent use.
type Refusals struct {
	mu   sync.Mutex
	list []refusedAt
}

// refusedAt is a connection the proxy refused, and when.
type refusedAt struct {
	at     time.Time
	target string // "x.invalid:443"
}

// maxRefusals bounds the refusals kept.
const maxRefusals = 16

// Note keeps the refusal ev.
func (r *Refusals) Note(ev Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.list = append(r.list, refusedAt{time.Now(), net.JoinHostPort(ev.Domain, strconv.Itoa(ev.Port))})
	if len(r.list) > maxRefusals {
		r.list = r.list[len(r.list)-maxRefusals:]
	}
}

// Since lists the targets refused since t, each once, oldest first.
func (r *Refusals) Since(t time.Time) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, x := range r.list {
		if !x.at.Before(t) && !slices.Contains(out, x.target) {
			out = append(out, x.target)
		}
	}
	return out
}
