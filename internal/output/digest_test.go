package output

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

// The digest found while the output is written is the one a plain pass over the
// spill file finds: the first lines of the omitted middle that hold a word, with
// their numbers in the file, whatever the chunks, the limits and the lines' lengths
// (words split between writes, lines longer than what is kept of them, a head cut
// inside a line).
func TestDigestAsWritten(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	pieces := []string{"ok ", "compiled ", "Error", "WARNING: ", "fail", "fa", "il", "exce", "ption", "panic", "TraceBack", "\t", "x", "e", "t"}
	truncated, withDigest := 0, 0
	for round := range 400 {
		var b bytes.Buffer
		for range 50 + r.IntN(400) {
			for range r.IntN(8) {
				b.WriteString(pieces[r.IntN(len(pieces))])
			}
			if r.IntN(30) == 0 {
				b.WriteString(strings.Repeat("long ", r.IntN(600)))
			}
			if r.IntN(4) != 0 { // words of other lines' lengths: not every piece is a word
				b.WriteString(pieces[r.IntN(2)])
			}
			b.WriteByte('\n')
		}
		if r.IntN(3) == 0 {
			b.WriteString("error without a newline")
		}
		in := b.Bytes()
		limit := []int{64, 512, 4096}[r.IntN(3)]
		within := limit - r.IntN(limit/2)
		c := New(Options{Limit: limit, SpillDir: t.TempDir(), Name: "stdout"})
		sizes := []int{1 + r.IntN(5), 1 + r.IntN(200), 1 + r.IntN(5000)}
		writeChunks(t, c, in, sizes...)
		res := c.CloseWithin(within)
		if !res.Truncated {
			continue
		}
		truncated++
		full, err := os.ReadFile(res.SpillPath)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(full, in) {
			t.Fatalf("round %d: the spill file is not the input", round)
		}
		// The text is the head, the marker and the tail, as printed (the input has
		// no terminal control): where the middle starts and ends.
		m := strings.Index(res.Text, "... [")
		tail := res.Text[m+strings.Index(res.Text[m:], "\n")+1:]
		var omitted int64
		fmt.Sscanf(res.Text[m:], "... [%d bytes omitted", &omitted)
		to := res.Total - int64(len(tail))
		want := plainDigest(full, to-omitted, to)
		if len(want) > 0 {
			withDigest++
		}
		if fmt.Sprint(res.Digest) != fmt.Sprint(want) {
			t.Fatalf("round %d (limit %d within %d, chunks %v): digest\n%v\nwant\n%v", round, limit, within, sizes, res.Digest, want)
		}
		os.Remove(res.SpillPath)
	}
	if truncated < 300 || withDigest < 200 {
		t.Errorf("%d rounds truncated, %d with a digest: the test proves little", truncated, withDigest)
	}
}

// plainDigest is the digest by its definition: the lines of full starting in
// [from, to) that hold a word, the first maxDigestLines of them.
func plainDigest(full []byte, from, to int64) []Line {
	var out []Line
	var off int64
	for n, line := range bytes.SplitAfter(full, []byte("\n")) {
		if off >= from && off < to && len(out) < maxDigestLines && len(line) > 0 && looksBad(line) {
			out = append(out, Line{N: int64(n + 1), Text: clip(line[:min(len(line), maxDigestRaw)])})
		}
		off += int64(len(line))
	}
	return out
}
