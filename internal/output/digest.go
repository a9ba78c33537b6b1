package output

import (
	"bufio"
	"errors"
	"math/bits"
	"os"
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
)

// digestWords mark a line worth showing from the omitted middle (matched ignoring
// ASCII case).
var digestWords = []string{"error", "warning", "fail", "fatal", "panic", "exception", "traceback"}

// digest returns the lines starting in [from, to) of the file at path that look like
// errors, warnings or failures: what a reader of the head and tail would miss most.
// It is deterministic, reads at most maxDigestScan bytes of the middle, and returns
// nil if the file cannot be read.
func digest(path string, from, to int64) []Line {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64<<10)
	to = min(to, from+maxDigestScan)
	var out []Line
	var off int64
	for n := int64(1); off < to; n++ {
		line, err := r.ReadSlice('\n')
		if len(line) == 0 {
			break
		}
		// Judge the line by its first 64 KiB; the buffer is reused by the next read.
		if off >= from && looksBad(line) {
			if len(out) == maxDigestLines {
				break
			}
			out = append(out, Line{N: n, Text: clip(line)})
		}
		off += int64(len(line))
		for errors.Is(err, bufio.ErrBufferFull) { // the rest of a very long line
			line, err = r.ReadSlice('\n')
			off += int64(len(line))
		}
		if err != nil {
			break
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
// Most bytes start no word: one look in wordStarts passes them by.
func looksBad(line []byte) bool {
	for i, b := range line {
		if wordStarts[b] == 0 {
			continue
		}
		for ws := wordStarts[b]; ws != 0; ws &= ws - 1 {
			if hasFoldPrefix(line[i:], digestWords[bits.TrailingZeros8(ws)]) {
				return true
			}
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
