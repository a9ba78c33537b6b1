package output

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
)

// naiveWordAt is wordAt by its definition: the first offset where one of
// digestWords starts, ignoring ASCII case.
func naiveWordAt(b []byte) int {
	lower := make([]byte, len(b)) // ASCII letters only: bytes.ToLower would turn invalid UTF-8 into longer U+FFFD
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		lower[i] = c
	}
	first := -1
	for _, w := range digestWords {
		if i := bytes.Index(lower, []byte(w)); i >= 0 && (first < 0 || i < first) {
			first = i
		}
	}
	return first
}

// wordAt against its definition: each word at every offset of a 40-byte
// stretch (both sides of each 16-byte step and of the scan's tail), in
// either case, in text full of its first letters, and in random bytes.
func TestWordAtEveryOffset(t *testing.T) {
	fillers := map[string]string{
		"hex":     "0123456789abcdef",
		"letters": "erwafapaextrEWFPTX", // first letters and pairs' halves, no word
		"text":    "the quick brown fox jumps over a lazy dog ",
		"binary":  "\x00\xff\x80\xe5\xc5\x45\x65\n",
	}
	for name, filler := range fillers {
		for _, w := range append(digestWords, "ERROR", "Warning", "fAiL", "TraceBack") {
			for n := 0; n < 40; n++ {
				for at := 0; at+len(w) <= n; at++ {
					b := []byte(strings.Repeat(filler, 40/len(filler)+1)[:n])
					copy(b[at:], w)
					if got, want := wordAt(b), naiveWordAt(b); got != want {
						t.Fatalf("%s, %q at %d of %d: wordAt %d, want %d (%q)", name, w, at, n, got, want, b)
					}
				}
			}
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("erwafpxtlionbcERWAFPXT \n\x00\xff")
	for range 20000 {
		b := make([]byte, rng.IntN(80))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		if rng.IntN(3) == 0 && len(b) > 9 {
			w := digestWords[rng.IntN(len(digestWords))]
			copy(b[rng.IntN(len(b)-len(w)+1):], w)
		}
		if got, want := wordAt(b), naiveWordAt(b); got != want {
			t.Fatalf("wordAt(%q) = %d, want %d", b, got, want)
		}
	}
}
