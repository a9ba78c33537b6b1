package output

import (
	"bytes"
	"math/bits"
	"unicode/utf8"
)

// Line is one line of the full output, numbered from 1.
type Line struct {
	N    int64
	Text string
}

// Bounds of a digest: it must stay a few KB whatever the output.
const (
	maxDigestLines = 20
	maxDigestLine  = 200
	maxDigestScan  = 64 << 20 // bytes of the omitted middle looked at
	// maxDigestRaw is how much of a line is kept for its text: clip shows at most
	// maxDigestLine bytes of it once terminal control is removed.
	maxDigestRaw = 1 << 10
	// longestWord is the length of the longest of digestWords.
	longestWord = 9
)

// digestWords mark a line worth showing from the omitted middle (matched ignoring
// ASCII case).
var digestWords = []string{"error", "warning", "fail", "fatal", "panic", "exception", "traceback"}

// A digester finds, as the output is written, the lines that look like errors,
// warnings or failures: what a reader of the head and tail would miss most. It
// is fed the stream from a line start on and keeps the first maxDigestLines such
// lines that start before end, so that closing a capture need not read its
// spill file back: the bytes are looked at once, while the command runs.
type digester struct {
	start0 int64 // the offset it started at
	off    int64 // stream offset of the next byte fed
	n      int64 // number of the line holding off
	start  int64 // offset where that line starts
	end    int64 // lines starting at or after end are not looked at

	bad  bool   // the line holding off has a word
	head []byte // the first maxDigestRaw bytes of that line seen so far
	// last holds the last bytes fed of that line, up to longestWord-1, for a
	// word split between two feeds.
	last []byte

	found []found
}

// found is a line of the digest and where it starts.
type found struct {
	at   int64
	line Line
	raw  []byte // its first bytes, up to maxDigestRaw; complete once the line is
}

// newDigester starts at offset off, a line start, which is line n.
func newDigester(off, n, end int64) *digester {
	return &digester{start0: off, off: off, n: n, start: off, end: end}
}

// full reports that nothing more fed can change the digest: the last line
// found, if any, is complete, and no other is looked for. One line more than a
// digest holds is looked for: the first, where the digester started, may
// start before the middle, which a head cut inside a line begins.
func (d *digester) full() bool {
	return !d.bad && (len(d.found) == maxDigestLines+1 || d.start >= d.end)
}

// feed looks at p, the next bytes of the stream. A clean stretch costs one
// look in wordStarts a byte and a count of its newlines.
func (d *digester) feed(p []byte) {
	for len(p) > 0 && !d.full() {
		if !d.bad {
			w := -1
			if d.splitWord(p) {
				w = 0
			} else if w = wordAt(p); w < 0 {
				d.skip(p)
				return
			}
			if ln := bytes.LastIndexByte(p[:w], '\n'); ln >= 0 {
				d.nextLine(p[:ln+1])
				p = p[ln+1:]
				if d.start >= d.end {
					return
				}
			}
			d.bad = true
			d.found = append(d.found, found{at: d.start, line: Line{N: d.n}, raw: d.head})
			d.head = nil
		}
		// The line holding d.off is the last one found: keep its text.
		f := &d.found[len(d.found)-1]
		nl := bytes.IndexByte(p, '\n')
		if nl < 0 {
			f.raw = appendUpTo(f.raw, p, maxDigestRaw)
			d.off += int64(len(p))
			return
		}
		f.raw = appendUpTo(f.raw, p[:nl+1], maxDigestRaw)
		d.nextLine(p[:nl+1])
		p = p[nl+1:]
	}
	d.off += int64(len(p))
}

// skip passes over p, which holds no word but perhaps the end of one split
// with what comes next.
func (d *digester) skip(p []byte) {
	if ln := bytes.LastIndexByte(p, '\n'); ln >= 0 {
		d.nextLine(p[:ln+1])
		p = p[ln+1:]
	}
	d.head = appendUpTo(d.head, p, maxDigestRaw)
	d.keepLast(p)
	d.off += int64(len(p))
}

// nextLine moves past p, which ends with a newline, to the line after it.
func (d *digester) nextLine(p []byte) {
	d.n += int64(bytes.Count(p, []byte{'\n'}))
	d.off += int64(len(p))
	d.start, d.bad, d.head, d.last = d.off, false, nil, d.last[:0]
}

// appendUpTo appends to b as much of p as keeps it at most max bytes long.
func appendUpTo(b, p []byte, max int) []byte {
	return append(b, p[:min(len(p), max-len(b))]...)
}

// splitWord reports whether a word starts in the bytes kept from the previous
// feed of this line and ends in seg.
func (d *digester) splitWord(seg []byte) bool {
	if len(d.last) == 0 {
		return false
	}
	var b [2 * longestWord]byte
	j := copy(b[:], d.last)
	k := j + copy(b[j:], seg[:min(len(seg), longestWord-1)])
	i := wordAt(b[:k])
	return i >= 0 && i < j
}

// keepLast keeps the last bytes of seg, of the line still being written.
func (d *digester) keepLast(seg []byte) {
	if len(seg) >= longestWord-1 {
		d.last = append(d.last[:0], seg[len(seg)-(longestWord-1):]...)
		return
	}
	d.last = append(d.last, seg...)
	if extra := len(d.last) - (longestWord - 1); extra > 0 {
		d.last = d.last[:copy(d.last, d.last[extra:])]
	}
}

// lines returns the lines found that start in [from, to), with their text.
func (d *digester) lines(from, to int64, out []Line) []Line {
	for _, f := range d.found {
		if len(out) == maxDigestLines {
			break
		}
		if f.at >= from && f.at < to {
			f.line.Text = clip(f.raw)
			out = append(out, f.line)
		}
	}
	return out
}

// clip trims a line for the digest: no newline, at most maxDigestLine bytes, valid UTF-8.
func clip(line []byte) string {
	for len(line) > 0 && (line[len(line)-1] == '\n' || line[len(line)-1] == '\r') {
		line = line[:len(line)-1]
	}
	s, _ := sanitize(line)
	if len(s) > maxDigestLine {
		cut := maxDigestLine
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// looksBad reports whether line contains one of digestWords, ignoring ASCII case.
func looksBad(line []byte) bool { return wordAt(line) >= 0 }

// wordAt returns where the first of digestWords in b starts, ignoring ASCII
// case, or -1. pairScan finds where a word's first two letters (er, ex, tr,
// wa, fa, pa) are, sixteen positions at a time; only there does one look in
// wordStarts tell which words to try.
func wordAt(b []byte) int {
	i := 0
	for {
		j, m := pairScan(b[i:])
		i += j
		if m == 0 {
			break
		}
		for ; m != 0; m &= m - 1 {
			// A set bit may be false (a byte folded into a letter);
			// wordStarts and hasFoldPrefix decide.
			if k := i + bits.TrailingZeros32(m); startsWord(b[k:]) {
				return k
			}
		}
		i += 16
	}
	for ; i < len(b); i++ {
		if wordStarts[b[i]] != 0 && startsWord(b[i:]) {
			return i
		}
	}
	return -1
}

// startsWord reports whether b starts with one of digestWords, ignoring ASCII case.
func startsWord(b []byte) bool {
	for ws := wordStarts[b[0]]; ws != 0; ws &= ws - 1 {
		if hasFoldPrefix(b, digestWords[bits.TrailingZeros8(ws)]) {
			return true
		}
	}
	return false
}

// wordStarts maps a byte to the digestWords (a bit each, by index) whose first
// letter it is in either case. It is a constant table: nothing to build at start.
var wordStarts = [256]uint8{
	'e': 1<<0 | 1<<5, 'E': 1<<0 | 1<<5, // error, exception
	'w': 1 << 1, 'W': 1 << 1, // warning
	'f': 1<<2 | 1<<3, 'F': 1<<2 | 1<<3, // fail, fatal
	'p': 1 << 4, 'P': 1 << 4, // panic
	't': 1 << 6, 'T': 1 << 6, // traceback
}

func hasFoldPrefix(b []byte, w string) bool {
	if len(b) < len(w) {
		return false
	}
	for j := 0; j < len(w); j++ {
		if b[j]|0x20 != w[j] {
			return false
		}
	}
	return true
}
