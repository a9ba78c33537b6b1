package output

import (
	"bytes"
	"unicode/utf8"
)

// lineWindow is how far from a cut we look for a newline to cut at instead: near
// enough that little text is lost, far enough for ordinary log and compiler lines.
func lineWindow(n int) int { return min(n/4, 2048) }

// cutHead returns where to end a head taken from b, which is at least h+1 bytes long,
// at most h bytes in: after the last newline close to h, else at the rune boundary at
// or before h, so that no UTF-8 sequence is split.
func cutHead(b []byte, h int) int {
	w := lineWindow(h)
	if i := bytes.LastIndexByte(b[h-w:h], '\n'); i >= 0 {
		return h - w + i + 1
	}
	for n := h; n >= 0 && n > h-utf8.UTFMax; n-- {
		if n == 0 || utf8.RuneStart(b[n]) {
			return n
		}
	}
	return h // no rune start nearby: invalid UTF-8, which keep has already seen
}

// cutTail returns where to start a tail taken from t, the last bytes of a stream whose
// byte just before t was before: after the first newline close to the start, else at
// the first rune boundary, so that the tail starts a line or at least a character.
func cutTail(t []byte, before byte) int {
	if before == '\n' || len(t) == 0 {
		return 0
	}
	w := lineWindow(len(t))
	if i := bytes.IndexByte(t[:w], '\n'); i >= 0 {
		return i + 1
	}
	for n := 0; n < utf8.UTFMax && n < len(t); n++ {
		if utf8.RuneStart(t[n]) {
			return n
		}
	}
	return 0 // no rune start nearby: invalid UTF-8, which Close will see
}

// minJudged is how many bytes are looked at before output is called binary for
// being mostly undecodable.
const minJudged = 1 << 10

// undecodable reports whether bad bytes of n are too many for text: more than 30%.
func undecodable(bad, n int) bool { return n > 0 && bad*10 > n*3 }

// decode counts the bytes of b that are not UTF-8, up to an incomplete rune at its
// end that a later write may complete; n is the length of b without that rune.
func decode(b []byte) (n, bad int) {
	n = len(b) - incompleteSuffix(b)
	if utf8.Valid(b[:n]) {
		return n, 0
	}
	for i := 0; i < n; {
		if b[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:n])
		if r == utf8.RuneError && size == 1 {
			bad++
		}
		i += size
	}
	return n, bad
}

// incompleteSuffix returns the length of the UTF-8 sequence at the end of b that is
// valid so far but needs more bytes, or 0.
func incompleteSuffix(b []byte) int {
	for i := 1; i < utf8.UTFMax && i <= len(b); i++ {
		if utf8.RuneStart(b[len(b)-i]) {
			if utf8.FullRune(b[len(b)-i:]) {
				return 0
			}
			return i
		}
	}
	return 0
}
