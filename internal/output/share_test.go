package output

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/shellgate/shellgate/internal/lane"
)

func TestShare(t *testing.T) {
	tests := []struct {
		budget     int
		a, b       int64
		wantA, wnB int
	}{
		{100, 30, 20, 30, 70},   // both fit
		{100, 0, 500, 0, 100},   // stderr gets it all
		{100, 500, 10, 90, 10},  // the small one keeps all of its output
		{100, 500, 500, 50, 50}, // both big: half each
		{100, 50, 500, 50, 50},
	}
	for _, tt := range tests {
		a, b := Share(tt.budget, tt.a, tt.b)
		if a != tt.wantA || b != tt.wnB {
			t.Errorf("Share(%d, %d, %d) = %d, %d; want %d, %d", tt.budget, tt.a, tt.b, a, b, tt.wantA, tt.wnB)
		}
		if a+b > tt.budget {
			t.Errorf("Share(%d, %d, %d) gives %d", tt.budget, tt.a, tt.b, a+b)
		}
	}
}

// A stream that fitted in its Capture but not in its share of the budget is cut
// like any other, and its whole output is spilled.
func TestCloseWithinAShare(t *testing.T) {
	t.Parallel()
	in := lines(1000) // 28 KB
	c := New(Options{Limit: 50 << 10, SpillDir: t.TempDir(), Name: "stdout"})
	c.Write(in)
	r := c.CloseWithin(10 << 10)
	if !r.Truncated || r.SpillPath == "" || len(r.Text) > 11<<10 {
		t.Fatalf("Truncated %v, SpillPath %q, %d bytes of text", r.Truncated, r.SpillPath, len(r.Text))
	}
	checkProperties(t, in, r, 10<<10)
	// A share larger than the limit is the limit.
	c = New(Options{Limit: 100, SpillDir: t.TempDir()})
	c.Write(in)
	if r := c.CloseWithin(1 << 20); len(r.Text) > 300 {
		t.Errorf("text of %d bytes with a 100-byte limit", len(r.Text))
	}
}

// The digest names the error-like lines of the omitted middle, with their numbers,
// and none of the head or tail, which are shown anyway.
func TestDigest(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	for i := 1; i <= 20000; i++ {
		switch i {
		case 5, 7000, 19999:
			fmt.Fprintf(&b, "main.go:%d: ERROR: undefined: foo\n", i)
		case 9000:
			fmt.Fprintf(&b, "--- FAIL: TestThing (0.00s)\n")
		case 12000:
			b.WriteString("warning: " + strings.Repeat("long ", 100) + "\n")
		default:
			fmt.Fprintf(&b, "ok %d compiled\n", i)
		}
	}
	c := New(Options{SpillDir: t.TempDir(), Name: "stdout"})
	c.Write(b.Bytes())
	r := c.Close()
	if len(r.Digest) != 3 {
		t.Fatalf("digest %+v", r.Digest)
	}
	want := []Line{{7000, "main.go:7000: ERROR: undefined: foo"}, {9000, "--- FAIL: TestThing (0.00s)"}}
	for i, w := range want {
		if r.Digest[i] != w {
			t.Errorf("digest[%d] = %+v, want %+v", i, r.Digest[i], w)
		}
	}
	if l := r.Digest[2]; l.N != 12000 || len(l.Text) > maxDigestLine+len("…") || !strings.HasPrefix(l.Text, "warning: long") {
		t.Errorf("digest[2] = %+v", l)
	}
	// The spill file's line numbers are the digest's.
	full, _ := os.ReadFile(r.SpillPath)
	if got := strings.Split(string(full), "\n")[6999]; got != want[0].Text {
		t.Errorf("line 7000 of the spill file is %q", got)
	}
}

// wordStarts marks, for every byte, exactly the digest words that start with it
// in either case, and looksBad finds each word wherever it is, in any case.
func TestWordStarts(t *testing.T) {
	for b := range 256 {
		var want uint8
		for i, w := range digestWords {
			if byte(b)|0x20 == w[0] {
				want |= 1 << i
			}
		}
		if wordStarts[b] != want {
			t.Errorf("wordStarts[%q] = %07b, want %07b", byte(b), wordStarts[b], want)
		}
	}
	for _, w := range digestWords {
		for _, line := range []string{w, "x " + strings.ToUpper(w) + " y", "..." + strings.ToUpper(w[:1]) + w[1:]} {
			if !looksBad([]byte(line)) {
				t.Errorf("looksBad(%q) = false", line)
			}
		}
		if cut := w[:len(w)-1]; looksBad([]byte(cut + " " + cut)) {
			t.Errorf("looksBad(%q) = true", cut)
		}
	}
}

// wordAt agrees with the plain search it speeds up, on lines made of the
// words' letters in both cases, whole words and cut ones: the same first word.
func TestLooksBadAgrees(t *testing.T) {
	plain := func(line []byte) int {
		for i := range line {
			for _, w := range digestWords {
				if hasFoldPrefix(line[i:], w) {
					return i
				}
			}
		}
		return -1
	}
	pieces := append(slices.Clone(digestWords), "er", "wa", "fa", "pa", "ex", "tr", "ERRO", "Fata", "e", "x", " ", "\x00", "\xff")
	r := rand.New(rand.NewPCG(1, 2))
	hits := 0
	for range 20000 {
		var line []byte
		for range r.IntN(14) {
			p := []byte(pieces[r.IntN(len(pieces))])
			for i := range p {
				if r.IntN(2) == 0 {
					p[i] = bytes.ToUpper(p[i : i+1])[0]
				}
			}
			line = append(line, p...)
		}
		want := plain(line)
		if got := wordAt(line); got != want {
			t.Fatalf("wordAt(%q) = %d, want %d", line, got, want)
		}
		if want >= 0 {
			hits++
		}
	}
	if hits < 1000 {
		t.Errorf("only %d lines of 20000 had a word: the test proves little", hits)
	}
}

func TestDigestBounded(t *testing.T) {
	lane.Live(t)
	t.Parallel()
	in := bytes.Repeat([]byte("error: again\n"), 100000)
	c := New(Options{SpillDir: t.TempDir()})
	c.Write(in)
	if r := c.Close(); len(r.Digest) != maxDigestLines {
		t.Errorf("%d digest lines", len(r.Digest))
	}
	c = New(Options{SpillDir: t.TempDir()})
	c.Write(lines(10000))
	if r := c.Close(); !r.Truncated || r.Digest != nil {
		t.Errorf("digest of a clean log: %+v", r.Digest)
	}
}

// NoSpill keeps no file of text output, but still saves binary output.
func TestNoSpill(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := New(Options{Limit: 1000, SpillDir: dir, NoSpill: true})
	c.Write(lines(1000))
	r := c.Close()
	if !r.Truncated || r.SpillPath != "" || !strings.Contains(r.Text, "full output not saved") {
		t.Errorf("text: truncated %v, spill %q", r.Truncated, r.SpillPath)
	}
	c = New(Options{Limit: 1000, SpillDir: dir, NoSpill: true})
	c.Write(append([]byte{0, 1}, lines(10)...))
	if r := c.Close(); !r.Binary || r.SpillPath == "" {
		t.Errorf("binary: %v, spill %q", r.Binary, r.SpillPath)
	}
}
