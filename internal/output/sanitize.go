package output

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// sanitize turns captured bytes into the text a model reads: valid UTF-8 (bytes that
// are not UTF-8 become U+FFFD) with no terminal control left in it. It reports
// whether anything was removed or painted over (see Result.Controls).
//
//   - '\n' and '\t' are kept; a NUL is shown as ␀ (U+2400), which counts as
//     removed only where the text holds a ␀ of its own.
//   - '\r' and backspace are rendered as a terminal would within the line: what
//     follows overwrites from the start of the line, or from one character back, so a
//     progress bar redrawn with '\r' shows its last state and "a\rb" reads "b". A
//     '\r' before '\n' (CRLF) changes nothing. Cells are characters, not display
//     columns: a wide character counts as one.
//   - Escape sequences (CSI, OSC, DCS, APC, PM, SOS, two-byte ESC ones) are removed
//     whole (colours and styles, SGR, without counting as removed), as is any
//     other C0 or C1 control, in its 8-bit form, a stray byte
//     0x80-0x9F, or its UTF-8 form, U+0080-U+009F. A sequence still open where the
//     text ends, or a string (OSC, DCS …) running over a newline, loses only its
//     introducer: a terminal would swallow the rest, the model should see it.
func sanitize(b []byte) (string, bool) {
	if plain(b) {
		return string(b), false
	}
	var r renderer
	r.out.Grow(len(b))
	afterBad := -1 // where the last run of invalid bytes ended, which shows as one U+FFFD
	nul := false
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == '\n':
			r.newline()
			i++
		case c == '\t' || c >= ' ' && c < 0x7f:
			r.put(rune(c))
			i++
		case c == '\r':
			r.col = 0
			i++
		case c == '\b':
			r.col = max(0, r.col-1)
			i++
		case c == ansi.ESC:
			i += r.sequence(b[i:])
		case c == 0:
			// A NUL in text (a separator: find -print0) is shown, not run
			// together, as the symbol for it: nothing is lost, unless the
			// text has that symbol of its own too (below).
			r.put('\u2400')
			nul = true
			i++
		case c < ' ' || c == 0x7f:
			r.removed = true
			i++
		case c == 0xc2 && i+1 < len(b) && b[i+1] >= 0x80 && b[i+1] <= 0x9f:
			// U+0080-U+009F, a C1 control in UTF-8: its second byte is the 8-bit form.
			i += 1 + r.sequence(b[i+1:])
		default:
			ch, size := utf8.DecodeRune(b[i:])
			switch {
			case ch != utf8.RuneError || size > 1:
				r.put(ch)
			case c <= 0x9f: // a stray 8-bit C1 control, e.g. 0x9b, CSI
				size = r.sequence(b[i:])
			default:
				if i != afterBad { // one U+FFFD for a run, like strings.ToValidUTF8
					r.put(utf8.RuneError)
				}
				afterBad = i + size
			}
			i += size
		}
	}
	r.newline()
	s := r.out.String()
	removed := r.removed || nul && bytes.Contains(b, []byte("\u2400"))
	return s[:len(s)-1], removed // without the newline that flushed the last line
}

// plain reports whether b is valid UTF-8 with no control but '\n' and '\t': text that
// sanitize would return unchanged. It is the fast path for ordinary output.
func plain(b []byte) bool {
	ascii := true
	for i, c := range b {
		switch {
		case c < ' ':
			if c != '\n' && c != '\t' {
				return false
			}
		case c == 0x7f:
			return false
		case c >= 0x80:
			ascii = false
			if c == 0xc2 && i+1 < len(b) && b[i+1] <= 0x9f {
				return false // U+0080-U+009F
			}
		}
	}
	return ascii || utf8.Valid(b)
}

// renderer builds sanitized text one line at a time, so that '\r' and backspace
// can move back over the current line.
type renderer struct {
	out     strings.Builder
	line    []rune // the current line's characters
	col     int    // where the next character goes in line
	removed bool   // something was removed or painted over
}

func (r *renderer) put(ch rune) {
	if r.col < len(r.line) {
		r.line[r.col] = ch
		r.removed = true
	} else {
		r.line = append(r.line, ch)
	}
	r.col++
}

func (r *renderer) newline() {
	r.out.WriteString(string(r.line))
	r.out.WriteByte('\n')
	r.line, r.col = r.line[:0], 0
}

// sequence skips the escape sequence or control at the start of b (an ESC or a C1
// byte) and returns its length.
func (r *renderer) sequence(b []byte) int {
	seq, _, n, state := ansi.DecodeSequence(b, ansi.NormalState, nil)
	switch {
	case n < 1:
		r.removed = true
		return 1
	case state != ansi.NormalState || bytes.IndexByte(seq, '\n') >= 0:
		// Still open at the end, or a string running over lines: drop only the
		// introducer, so that a stray one cannot swallow the rest of the output.
		r.removed = true
		if b[0] == ansi.ESC && len(b) > 1 {
			return 2
		}
		return 1
	}
	// Colours and styles (SGR) change how text looks, not what it says:
	// removing them loses nothing worth a note or a spill file. The rest
	// (cursor moves, titles, hyperlinks' targets) is told.
	if !styleOnly(seq) {
		r.removed = true
	}
	r.eraseInLine(seq)
	return n
}

// styleOnly reports whether seq is a complete SGR sequence (ESC [ … m, as
// programs colour their output; the rare 8-bit forms are told) whose
// parameters are digits and separators alone.
func styleOnly(seq []byte) bool {
	if len(seq) < 3 || seq[0] != ansi.ESC || seq[1] != '[' || seq[len(seq)-1] != 'm' {
		return false
	}
	for _, c := range seq[2 : len(seq)-1] {
		if (c < '0' || c > '9') && c != ';' && c != ':' {
			return false
		}
	}
	return true
}

// eraseInLine applies "erase in line" (CSI K, CSI 2K), which progress bars
// send after '\r' to clear the last state: what it erases is not shown.
func (r *renderer) eraseInLine(seq []byte) {
	var params string
	switch {
	case len(seq) >= 3 && seq[0] == ansi.ESC && seq[1] == '[':
		params = string(seq[2 : len(seq)-1])
	case len(seq) >= 2 && seq[0] == 0x9b:
		params = string(seq[1 : len(seq)-1])
	default:
		return
	}
	if seq[len(seq)-1] != 'K' {
		return
	}
	switch params {
	case "", "0": // from the cursor to the end
		r.line = r.line[:min(r.col, len(r.line))]
	case "2": // the whole line; the cursor stays
		for i := range r.line {
			r.line[i] = ' '
		}
		r.line = r.line[:min(r.col, len(r.line))]
	}
}
