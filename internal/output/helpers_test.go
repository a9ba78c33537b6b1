package output

import (
	"bytes"
	"crypto/sha256"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// markerRE matches the line standing for the omitted middle of a truncated Text.
var markerRE = regexp.MustCompile(`\.\.\. \[(\d+) bytes omitted; [^\n]*\] \.\.\.\n`)

// splitText takes a truncated Text apart into head, marker line and tail. It picks the
// marker match whose byte count is consistent with the input (which may itself contain
// marker-like text) and, of the readings that fit, prefers one whose head and tail are
// a true prefix and suffix of in. The head loses the newline added before the marker.
func splitText(text string, in []byte) (head, marker, tail string, ok bool) {
	for _, m := range markerRE.FindAllStringSubmatchIndex(text, -1) {
		omitted, err := strconv.ParseInt(text[m[2]:m[3]], 10, 64)
		if err != nil {
			continue
		}
		h, t := text[:m[0]], text[m[1]:]
		// A final U+FFFD (3 bytes) may stand for 1-3 bytes of an incomplete rune.
		tailLens := []int{len(t)}
		if strings.HasSuffix(t, "\uFFFD") {
			tailLens = append(tailLens, len(t)-2, len(t)-1)
		}
		for _, hd := range []string{trimSep(h), h} { // the newline before the marker is usually added
			for _, n := range tailLens {
				// Bytes shown as U+FFFD, or controls removed, change lengths: then only
				// the order can be checked.
				if plain(in[:len(in)-incompleteSuffix(in)]) && int64(len(hd)+n)+omitted != int64(len(in)) {
					continue
				}
				if bytes.HasPrefix(endText(in), []byte(hd)) && bytes.HasSuffix(endText(in), []byte(t)) {
					return hd, text[m[0]:m[1]], t, true
				}
				if !ok {
					head, marker, tail, ok = hd, text[m[0]:m[1]], t, true
				}
			}
		}
	}
	return head, marker, tail, ok
}

func trimSep(h string) string {
	if len(h) > 0 && h[len(h)-1] == '\n' {
		return h[:len(h)-1]
	}
	return h
}

// endText is what Text shows for in: bytes that are not UTF-8 (an incomplete final
// rune, a stray byte) become U+FFFD, and terminal controls are removed.
func endText(in []byte) []byte {
	s, _ := sanitize(in) // without Controls, only what no terminal shows was removed
	return []byte(s)
}

// checkProperties asserts what must hold for any input whose Result is r:
// Total, valid UTF-8, exact text or true head prefix and tail suffix, spill content.
func checkProperties(t *testing.T, in []byte, r Result, limit int) {
	t.Helper()
	if r.Total != int64(len(in)) {
		t.Fatalf("Total = %d, want %d", r.Total, len(in))
	}
	if r.Truncated != (len(in) > limit) {
		t.Errorf("Truncated = %v with %d bytes and limit %d", r.Truncated, len(in), limit)
	}
	if r.Binary {
		if r.Text != "" {
			t.Errorf("Binary but Text = %q", abbrev(r.Text))
		}
		if r.SpillPath == "" && r.SpillErr == nil {
			t.Errorf("Binary output was not spilled and no SpillErr")
		}
	} else {
		if !utf8.ValidString(r.Text) {
			t.Errorf("Text is not valid UTF-8: %q", abbrev(r.Text))
		}
		if i := strings.IndexFunc(r.Text, isControl); i >= 0 {
			t.Errorf("Text has control %q at %d: %q", r.Text[i:i+1], i, abbrev(r.Text))
		}
		if !r.Truncated {
			if want, _ := sanitize(in); r.Text != want {
				t.Errorf("Text = %q, want %q", abbrev(r.Text), abbrev(want))
			}
		} else if whole, _ := sanitize(in); whole == strings.ToValidUTF8(string(in), "\uFFFD") {
			// Else head and tail, sanitized apart, need not be a prefix and suffix of
			// the whole sanitized: a '\r' or an escape sequence may span the cut.

			head, _, tail, ok := splitText(r.Text, in)
			switch {
			case !ok:
				t.Errorf("truncated Text has no consistent marker: %q", abbrev(r.Text))
			case !bytes.HasPrefix(endText(in), []byte(head)):
				t.Errorf("head %q is not a prefix of the input", abbrev(head))
			case !bytes.HasSuffix(endText(in), []byte(tail)):
				t.Errorf("tail %q is not a suffix of the input", abbrev(tail))
			// A byte that is not UTF-8 is shown as U+FFFD, 3 bytes: count it as one.
			case shownLen(head) > limit/2 || shownLen(tail) > limit-limit/2+utf8.UTFMax:
				t.Errorf("head %d + tail %d bytes exceed limit %d", len(head), len(tail), limit)
			}
		}
	}
	if !r.Truncated && !r.Binary && !r.Controls && r.SpillPath != "" {
		t.Errorf("spilled %s though nothing was cut", r.SpillPath)
	}
	if r.SpillPath != "" {
		checkSpill(t, r.SpillPath, in, r.SpillCapped)
	}
}

// checkSpill asserts the spill file holds exactly the input, or its start if capped.
func checkSpill(t *testing.T, path string, in []byte, capped bool) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if capped {
		if !bytes.HasPrefix(in, got) || len(got) >= len(in) {
			t.Errorf("capped spill file (%d bytes) is not a proper prefix of the input (%d bytes)", len(got), len(in))
		}
		return
	}
	if sha256.Sum256(got) != sha256.Sum256(in) {
		t.Errorf("spill file differs from the input: %d bytes, want %d", len(got), len(in))
	}
}

// writeChunks writes in to w in chunks of the given sizes, cycling through them.
func writeChunks(t testing.TB, w io.Writer, in []byte, sizes ...int) {
	t.Helper()
	for i := 0; len(in) > 0; i++ {
		n := len(in)
		if len(sizes) > 0 {
			n = min(max(sizes[i%len(sizes)], 1), len(in))
		}
		if m, err := w.Write(in[:n]); m != n || err != nil {
			t.Fatalf("Write = %d, %v; want %d, nil", m, err, n)
		}
		in = in[n:]
	}
}

func abbrev(s string) string {
	if len(s) <= 200 {
		return s
	}
	return s[:100] + "…" + s[len(s)-100:]
}

// filled returns size bytes of line repeated (the last copy cut short).
func filled(size int, line string) []byte {
	return bytes.Repeat([]byte(line), size/len(line)+1)[:size]
}

// isControl reports a character sanitize never leaves in Text.
func isControl(r rune) bool {
	return r < ' ' && r != '\n' && r != '\t' || r >= 0x7f && r <= 0x9f
}

// shownLen is the length of text as captured bytes: a U+FFFD stands for one byte.
func shownLen(text string) int { return len(text) - 2*strings.Count(text, "\uFFFD") }
