package output

import (
	"bytes"
	"encoding/binary"
	"maps"
	"slices"
	"sync/atomic"
)

// minSecret is the shortest value redacted: shorter ones ("1", "true", "dev") would
// hit ordinary text. It is also the width of the filter's window.
const minSecret = 8

// filterBits sizes the filter of first-8-byte windows: with a handful of secrets
// almost every position of the output is passed over after one table look-up.
const filterBits = 12

// redactor replaces known secret values in a stream written in chunks of any size,
// including a value split between two writes: it holds back the end of a chunk that
// may be the start of a value until the next chunk (or the end) settles it. Where
// two values could match, the leftmost wins, then the longest.
type redactor struct {
	*secretSet        // shared, read only
	pending    []byte // bytes held back: a proper prefix of some value ends the stream so far
	out        []byte // reused for what feed returns
}

// secretSet is what a redactor looks for. It does not change once built, so
// every stream redacted for the same secrets shares one: each call has two
// captures, and the filter alone is 4 KiB.
type secretSet struct {
	names   map[string]string // what it was built from, to tell whether it fits
	secrets []secret          // longest first
	filter  [1 << filterBits]bool
	longest int
}

type secret struct {
	value []byte
	mark  []byte // [REDACTED:NAME]
	head  uint64 // the value's first 8 bytes, as the filter reads them
}

// lastSet is the set built last: a Gate's calls redact the same secrets (those
// of its environment) call after call.
var lastSet atomic.Pointer[secretSet]

// newRedactor returns a redactor for the values of names (name → value), or nil if
// there are none. Values shorter than minSecret are ignored.
func newRedactor(names map[string]string) *redactor {
	if !anyLongEnough(names) {
		return nil
	}
	set := lastSet.Load()
	if set == nil || !maps.Equal(set.names, names) {
		set = newSecretSet(names)
		lastSet.Store(set)
	}
	return &redactor{secretSet: set}
}

func anyLongEnough(names map[string]string) bool {
	for _, v := range names {
		if len(v) >= minSecret {
			return true
		}
	}
	return false
}

func newSecretSet(names map[string]string) *secretSet {
	set := &secretSet{names: maps.Clone(names)}
	for _, name := range slices.Sorted(maps.Keys(names)) {
		v := []byte(names[name])
		if len(v) < minSecret {
			continue
		}
		s := secret{value: v, mark: []byte("[REDACTED:" + name + "]"), head: binary.LittleEndian.Uint64(v)}
		set.secrets = append(set.secrets, s)
		set.filter[slot(s.head)] = true
		set.longest = max(set.longest, len(v))
	}
	slices.SortStableFunc(set.secrets, func(a, b secret) int { return len(b.value) - len(a.value) })
	return set
}

// slot hashes an 8-byte window into the filter.
func slot(x uint64) uint { return uint((x * 0x9E3779B97F4A7C15) >> (64 - filterBits)) }

// feed takes the next chunk and returns what is settled: the stream up to here with
// every value replaced by its mark, less the bytes held back. The result is valid
// until the next call.
func (r *redactor) feed(p []byte) []byte { return r.run(p, false) }

// flush returns the rest of the stream at its end, the bytes held back with every
// value in them replaced: nothing can complete a longer value any more.
func (r *redactor) flush() []byte { return r.run(nil, true) }

func (r *redactor) run(p []byte, end bool) []byte {
	buf := append(r.pending, p...)
	hold := func(from int) int {
		if end {
			return len(buf)
		}
		return r.firstHold(buf, from)
	}
	// From h on, a value may still be completing: a longer one than found there,
	// or one covering what was found after h. Leftmost-longest waits for it.
	h := hold(0)
	out := r.out[:0]
	from := 0 // buf[:from] is settled and in out
	for i := 0; i < h && i+minSecret <= len(buf); {
		x := binary.LittleEndian.Uint64(buf[i:])
		if !r.filter[slot(x)] {
			i++
			continue
		}
		s := r.match(buf[i:], x)
		if s == nil {
			i++
			continue
		}
		out = append(append(out, buf[from:i]...), s.mark...)
		i += len(s.value)
		from = i
		if h < i {
			h = hold(i)
		}
	}
	out = append(out, buf[from:h]...)
	r.pending = append(buf[:0], buf[h:]...) // copy handles the overlap
	r.out = out
	return out
}

// match returns the longest value b starts with, whose first 8 bytes are x.
func (r *redactor) match(b []byte, x uint64) *secret {
	for k := range r.secrets {
		if s := &r.secrets[k]; s.head == x && bytes.HasPrefix(b, s.value) {
			return s
		}
	}
	return nil
}

// firstHold returns the first position from from on where the rest of b is a proper
// prefix of a value, so that a later write could complete it; len(b) if none.
func (r *redactor) firstHold(b []byte, from int) int {
	for start := max(from, len(b)-r.longest+1); start < len(b); start++ {
		for _, s := range r.secrets {
			if len(b)-start < len(s.value) && bytes.HasPrefix(s.value, b[start:]) {
				return start
			}
		}
	}
	return len(b)
}

// held is the number of bytes held back.
func (r *redactor) held() int { return len(r.pending) }
