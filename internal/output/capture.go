package output

import (
	"bytes"
	"sync"
	"sync/atomic"
)

// DefaultLimit is the number of text bytes kept for the envelope when Options.Limit is 0.
const DefaultLimit = 50 * 1024

// DefaultSpillMax caps one spill file when Options.SpillMax is 0.
const DefaultSpillMax int64 = 1 << 30

// nulWindow is how far into the stream NUL bytes are looked for (as git looks
// at its first 8000 bytes): where they mark the output binary (see nulsBinary).
const nulWindow = 8 << 10

// nulsBinary reports whether the NUL bytes of a stream's first bytes make it
// binary, given how many bytes were seen, how many were NULs, and how many
// were bytes no text holds (C0 controls but tab, newlines, form feed,
// backspace and escape; DEL; bytes never in UTF-8). A NUL or two among text
// (`printf 'ok\0tail'`, `find -print0`'s names) is shown, the NULs as ␀;
// NULs beside such bytes (executables, images, archives' headers) or dense
// (UTF-16, padded blocks) are binary.
func nulsBinary(seen, nuls, odd int) bool {
	return nuls > 0 && (odd > 0 || nuls > 8 && nuls*10 > seen)
}

// oddByte reports a byte no text holds (see nulsBinary).
var oddByte = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	for _, c := range []byte{0, '\t', '\n', '\v', '\f', '\r', '\b', 0x1b} {
		t[c] = false
	}
	t[0x7f], t[0xc0], t[0xc1] = true, true, true
	for c := 0xf5; c < 0x100; c++ {
		t[c] = true
	}
	return t
}()

// Options configure a Capture. The zero value uses every default.
type Options struct {
	// Limit is the number of bytes of text kept in memory for the envelope, head and
	// tail together. Zero or negative means DefaultLimit.
	Limit int
	// SpillDir receives full-output files; "" means DefaultSpillDir().
	SpillDir string
	// SpillMax caps one spill file; past it bytes are counted, not kept.
	// Zero or negative means DefaultSpillMax.
	SpillMax int64
	// Quota, if not nil, bounds the spill files of the session together.
	Quota *Quota
	// NoSpill keeps no file of text output, which the caller has shown in full as it
	// arrived; binary output, which it cannot have shown, is still spilled.
	NoSpill bool
	// Redact maps variable names to secret values (see shell.Secrets) that must not
	// reach a reader: each occurrence becomes [REDACTED:NAME], in Text and in the
	// spill file alike, since a model given the file's path can read it. A value split
	// between two writes is found too. Values shorter than 8 bytes are ignored.
	Redact map[string]string
	// Store, if not nil, already keeps the whole stream (a session call's job
	// log: in memory while it is small, then in a file): the Capture writes no
	// file of its own, and takes the store's file as its spill file when it
	// needs one (Handover makes it then from what memory holds), so that an
	// output is on disk once, and a small one not at all.
	Store Store
	// Name goes into the spill file name, <dir>/<random-id>.<name>.log, e.g. "stdout".
	// Characters other than ASCII letters, digits, '-' and '_' become '_'.
	Name string
}

// A Store keeps every byte written to a Capture (after redaction, as the
// Capture does), up to SpillMax bytes, and gives them up as a file.
type Store interface {
	// Handover gives the file up to the caller: its path and the bytes in it,
	// "" if there is none, or why it could not be kept whole.
	Handover() (path string, size int64, err error)
}

// Result is what a Capture holds once closed.
type Result struct {
	// Text is what the envelope shows: all of the output if Total <= the limit, else
	// the head, a marker line saying how much was omitted and where the full output
	// is, and the tail. It is always valid UTF-8, and "" when Binary: bytes that are
	// not UTF-8 (a stray Latin-1 byte, a rune cut by "head -c") are shown as U+FFFD.
	// It holds no terminal control but '\n' and '\t' (see Controls).
	Text string
	// Total counts every byte written, kept or not (after redaction, see Options.Redact).
	Total int64
	// Truncated: more bytes were written than the limit, so Text (if not Binary) has a gap.
	Truncated bool
	// Binary: a NUL byte in the first 8 KiB, or mostly undecodable content (more than
	// 30% of the bytes looked at are not UTF-8). Binary output is always spilled.
	Binary bool
	// SpillPath is the file holding the complete output (up to SpillMax), or "" if none
	// was needed or it could not be written (see SpillErr).
	SpillPath string
	// SpillCapped: the output exceeded SpillMax, or the Quota's room, so the
	// spill file holds only its first SpillSize bytes.
	SpillCapped bool
	SpillSize   int64
	// SpillErr says why the spill file could not be created or completed.
	SpillErr error
	// Controls: terminal control was removed from Text: escape sequences (colour,
	// cursor moves, window titles, hyperlinks), control characters, or characters
	// painted over by '\r' or backspace. The bytes as printed are in the spill file.
	Controls bool
	// Digest lists the lines of the omitted middle of truncated text output that look
	// like errors, warnings or failures, with their line numbers in the spill file.
	Digest []Line
}

// Capture is a bounded sink for one output stream. It keeps at most Limit bytes in
// memory (the first Limit/2 and a ring of the last Limit/2), and spills the complete
// stream to a file once it outgrows that or looks binary.
//
// Write must be called from one goroutine at a time; Total and Binary may be called
// from any goroutine concurrently with it. Writes after Close are ignored.
type Capture struct {
	opts   Options
	total  atomic.Int64 // bytes written; read live for progress
	binary atomic.Bool  // sticky: once seen, the output is binary

	mu     sync.Mutex // Write against Close, in case a writer outlives the command
	closed bool
	result Result

	// buf holds the first Limit bytes. Once they overflow, buf[:headLen] is the head and
	// buf[Limit/2:] is reused as the tail ring.
	buf     []byte
	checked int // buf[:checked] has been decoded and ends on a rune boundary
	bad     int // bytes of buf[:checked] that are not UTF-8
	// In the stream's first nulWindow bytes: NULs, and bytes no text holds.
	nuls, odd int

	overflowed bool
	headLen    int // head length after the line/rune cut, fixed at overflow
	tail       ring

	spill spillFile
	// dig finds the digest's lines past the head as they are written, once the
	// output has overflowed into a spill file; nil before.
	dig *digester

	redact *redactor    // nil: nothing to redact
	held   atomic.Int64 // bytes the redactor holds back, counted in Total
}

// New returns a Capture configured by o.
func New(o Options) *Capture {
	if o.Limit <= 0 {
		o.Limit = DefaultLimit
	}
	if o.SpillMax <= 0 {
		o.SpillMax = DefaultSpillMax
	}
	if o.SpillDir == "" {
		o.SpillDir = DefaultSpillDir()
	}
	return &Capture{opts: o, redact: newRedactor(o.Redact)}
}

// Write records p. It always returns len(p), nil: a full disk or an unwritable spill
// directory must not kill the command; the problem is reported in Result.SpillErr.
func (c *Capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || len(p) == 0 {
		return len(p), nil
	}
	n := len(p)
	if c.redact != nil {
		p = c.redact.feed(p)
		c.held.Store(int64(c.redact.held()))
	}
	c.write(p)
	return n, nil
}

// write records p, which is what the reader may see.
func (c *Capture) write(p []byte) {
	if len(p) == 0 {
		return
	}
	if start := c.total.Load(); start < nulWindow && !c.binary.Load() {
		w := p[:min(int64(len(p)), nulWindow-start)]
		for _, b := range w {
			if b == 0 {
				c.nuls++
			} else if oddByte[b] {
				c.odd++
			}
		}
		if nulsBinary(int(start)+len(w), c.nuls, c.odd) {
			c.binary.Store(true)
		}
	}
	c.total.Add(int64(len(p)))

	if c.overflowed {
		c.spill.write(p)
		c.digest(p)
		c.tail.write(p)
		return
	}
	kept := min(c.opts.Limit-len(c.buf), len(p))
	c.keep(p[:kept])
	rest := p[kept:]
	switch {
	case c.spill.started:
		c.spill.write(p)
	case c.opts.Store != nil: // the store's file is the spill file, at Close
	case len(rest) > 0 && !c.opts.NoSpill || c.binary.Load():
		// Spill lazily, from the first byte: all of it is still in buf.
		c.spill.start(c.opts)
		c.spill.write(c.buf)
		c.spill.write(rest)
	}
	if len(rest) > 0 {
		c.overflow()
		c.digest(rest)
		c.tail.write(rest)
	}
}

// digest feeds p to the digester while its lines can still reach a digest: text
// output with a spill file, its own or the store's (a session call's job log,
// handed over at Close).
func (c *Capture) digest(p []byte) {
	if c.dig != nil && (c.spill.f != nil || c.opts.Store != nil) && !c.binary.Load() {
		c.dig.feed(p)
	}
}

// keep appends p to buf, which has room for it, and checks the new text.
func (c *Capture) keep(p []byte) {
	if len(c.buf)+len(p) > cap(c.buf) {
		// Grow by hand so that buf never holds more than Limit bytes of capacity.
		grown := make([]byte, len(c.buf), min(c.opts.Limit, max(2*cap(c.buf), len(c.buf)+len(p), 512)))
		copy(grown, c.buf)
		c.buf = grown
	}
	c.buf = append(c.buf, p...)
	if c.binary.Load() {
		return
	}
	n, bad := decode(c.buf[c.checked:])
	c.checked += n
	c.bad += bad
	if c.checked >= minJudged && undecodable(c.bad, c.checked) {
		c.binary.Store(true)
	}
}

// overflow switches from keeping everything to keeping head and tail. The head is cut
// now, while the bytes after it are still in buf; buf's second half becomes the ring.
func (c *Capture) overflow() {
	c.overflowed = true
	half := c.opts.Limit / 2
	c.headLen = cutHead(c.buf, half)
	before := byte('\n') // the start of the stream is a line start
	if half > 0 {
		before = c.buf[half-1]
	}
	c.tail = ring{buf: c.buf[half:], before: before}
	// The digest looks at lines from the one holding the head's end on; Close
	// looks at any before it in buf[:headLen], which stays.
	start := bytes.LastIndexByte(c.buf[:c.headLen], '\n') + 1
	lines := int64(bytes.Count(c.buf[:start], []byte{'\n'}))
	c.dig = newDigester(int64(start), lines+1, int64(c.headLen)+maxDigestScan)
	c.digest(c.buf[start:])
}

// Total reports the bytes written so far. It is safe to call from any goroutine.
func (c *Capture) Total() int64 { return c.total.Load() + c.held.Load() }

// Binary reports whether the output has looked binary so far. It is safe to call from
// any goroutine. It never goes back to false; Close may still set it, if the final
// tail is not valid UTF-8.
func (c *Capture) Binary() bool { return c.binary.Load() }

// Close finishes the capture, closes the spill file and returns the Result, keeping
// up to Options.Limit bytes of text. Calling it again returns the same Result.
func (c *Capture) Close() Result { return c.CloseWithin(c.opts.Limit) }

// CloseWithin is Close keeping at most limit bytes of text (at most Options.Limit):
// the share of an output budget this stream gets once the sizes of all the streams
// of a command are known (see Share). Calling it again returns the same Result.
func (c *Capture) CloseWithin(limit int) Result {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return c.result
	}
	if c.redact != nil {
		c.write(c.redact.flush())
		c.held.Store(0)
	}
	c.closed = true
	limit = max(0, min(limit, c.opts.Limit))
	r := Result{Total: c.total.Load()}
	r.Truncated = r.Total > int64(limit)

	head := c.buf // everything, unless it overflowed
	var tail []byte
	if r.Truncated {
		half := limit / 2
		before := byte('\n')
		tail = c.buf
		if c.overflowed {
			head = c.buf[:c.headLen]
			tail, before = c.tail.linear(), c.tail.before
		}
		if len(head) > half {
			head = head[:cutHead(head, half)]
		}
		if keep := limit - half; len(tail) > keep {
			before, tail = tail[len(tail)-keep-1], tail[len(tail)-keep:]
		}
		tail = tail[cutTail(tail, before):]
	}
	// Judge what is shown: a few undecodable bytes are shown as U+FFFD, mostly
	// undecodable output is binary.
	_, bad := decode(head) // an incomplete rune at an end is a cut one, not garbage
	_, tbad := decode(tail)
	if undecodable(bad+tbad, len(head)+len(tail)) {
		c.binary.Store(true)
	}
	r.Binary = c.binary.Load()

	if !r.Binary && !r.Truncated {
		r.Text, r.Controls = sanitize(head)
	}
	needed := (r.Truncated || r.Controls) && !c.opts.NoSpill || r.Binary
	if needed && c.opts.Store != nil {
		c.spill.adopt(c.opts, r.Total)
	} else if needed && !c.spill.started && !c.overflowed {
		// It all fitted in memory but not in this share, or is binary, or was changed
		// for the text: spill it now, so that the bytes as printed are kept.
		c.spill.start(c.opts)
		c.spill.write(c.buf)
	}
	c.spill.close()
	r.SpillPath, r.SpillCapped, r.SpillErr = c.spill.result()
	r.SpillSize = c.spill.written
	if !r.Binary && r.Truncated {
		r.Text, r.Controls = c.text(head, tail, r)
		if r.SpillPath != "" {
			r.Digest = c.digestLines(int64(len(head)), min(r.Total-int64(len(tail)), r.SpillSize))
		}
	}
	c.result = r
	c.buf, c.tail = nil, ring{}
	return r
}

// digestLines returns the digest's lines: those starting in [from, to) that look
// like errors, at most maxDigestScan bytes from from. Those past the head's end
// were found as they were written; any before it are in memory.
func (c *Capture) digestLines(from, to int64) []Line {
	to = min(to, from+maxDigestScan)
	start, kept := int64(len(c.buf)), c.buf // it all fitted in memory
	if c.dig != nil {
		start, kept = c.dig.start0, c.buf[:c.headLen]
	}
	var out []Line
	if from < start {
		// The lines starting in [from, start): whole in kept, since start is a
		// line start (or the end of everything).
		first := from
		if from > 0 && kept[from-1] != '\n' {
			nl := bytes.IndexByte(kept[from:start], '\n')
			if nl < 0 {
				first = start
			} else {
				first = from + int64(nl) + 1
			}
		}
		if first < start {
			d := newDigester(first, int64(bytes.Count(kept[:first], []byte{'\n'}))+1, min(to, start))
			d.feed(kept[first:start])
			out = d.lines(from, to, out)
		}
	}
	if c.dig != nil {
		out = c.dig.lines(from, to, out)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// Share splits an output budget between two streams that printed a and b bytes:
// each keeps all of its output if both fit; otherwise a stream that needs less than
// half keeps all of it and the other gets the rest, or each gets half.
func Share(budget int, a, b int64) (int, int) {
	half := int64(budget / 2)
	switch {
	case a+b <= int64(budget), a <= half:
		return int(a), budget - int(a)
	case b <= half:
		return budget - int(b), int(b)
	}
	return int(half), budget - int(half)
}
