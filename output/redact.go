package output

import (
	"bytes"
	"maps"
	"slices"
)

// redactor replaces known secret values in a stream written in chunks of any size,
// including a value split between two writes: it holds back the end of a chunk that
// may be the start of a value until the next chunk (or the end) settles it.
type redactor struct {
	secrets []secret // longest first: of two values found at one place, the longer wins
	pending []byte   // bytes held back: a proper prefix of some value ends the stream so far
	out     []byte   // reused for what feed returns
	next    []int    // per secret, where it next occurs in the current buffer (-1: nowhere)
}

type secret struct {
	value []byte
	mark  []byte // [REDACTED:NAME]
}

// newRedactor returns a redactor for the values of names (name → value), or nil if
// there are none. Empty values are ignored.
func newRedactor(names map[string]string) *redactor {
	r := &redactor{}
	for _, name := range slices.Sorted(maps.Keys(names)) {
		if v := names[name]; v != "" {
			r.secrets = append(r.secrets, secret{[]byte(v), []byte("[REDACTED:" + name + "]")})
		}
	}
	if len(r.secrets) == 0 {
		return nil
	}
	slices.SortStableFunc(r.secrets, func(a, b secret) int { return len(b.value) - len(a.value) })
	r.next = make([]int, len(r.secrets))
	return r
}

// feed takes the next chunk and returns what is settled: the stream up to here with
// every value replaced by its mark, less the bytes held back. The result is valid
// until the next call.
func (r *redactor) feed(p []byte) []byte { return r.run(p, false) }

// flush returns the rest of the stream at its end, the bytes held back with every
// value in them replaced: nothing can complete a longer value any more.
func (r *redactor) flush() []byte { return r.run(nil, true) }

func (r *redactor) run(p []byte, end bool) []byte {
	buf := append(r.pending, p...)
	out := r.out[:0]
	for k, s := range r.secrets {
		r.next[k] = bytes.Index(buf, s.value)
	}
	hold := func(from int) int {
		if end {
			return len(buf)
		}
		return r.firstHold(buf, from)
	}
	i, h := 0, hold(0)
	for {
		best := -1
		for k, at := range r.next {
			if at >= 0 && (best < 0 || at < r.next[best]) {
				best = k
			}
		}
		// From h on, a value may still be completing: a longer one than found there,
		// or one covering what was found after h. Leftmost-longest waits for it.
		if best < 0 || r.next[best] >= h {
			break
		}
		at, s := r.next[best], r.secrets[best]
		out = append(append(out, buf[i:at]...), s.mark...)
		i = at + len(s.value)
		if h < i {
			h = hold(i)
		}
		for k, t := range r.secrets { // values that overlapped the one replaced: look again
			if r.next[k] >= 0 && r.next[k] < i {
				if j := bytes.Index(buf[i:], t.value); j >= 0 {
					r.next[k] = i + j
				} else {
					r.next[k] = -1
				}
			}
		}
	}
	out = append(out, buf[i:h]...)
	r.pending = append(buf[:0], buf[h:]...) // copy handles the overlap
	r.out = out
	return out
}

// firstHold returns the first position from from on where the rest of b is a proper
// prefix of a value, so that a later write could complete it; len(b) if none.
func (r *redactor) firstHold(b []byte, from int) int {
	longest := len(r.secrets[0].value) - 1
	for start := max(from, len(b)-longest); start < len(b); start++ {
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
