package output

import (
	"math/rand/v2"
	"testing"
)

// FuzzCapture writes random bytes in random chunks under a random limit: no panic,
// Total is every byte, Text is valid UTF-8 unless Binary, head and tail are a true
// prefix and suffix, and the spill file holds the input exactly.
func FuzzCapture(f *testing.F) {
	f.Add([]byte("hello\nworld\n"), uint16(4), uint64(1))
	f.Add([]byte("日本語のテキスト\n第二行\n"), uint16(7), uint64(2))
	f.Add([]byte("😀😀😀😀😀😀😀😀😀"), uint16(9), uint64(3))
	f.Add([]byte("a\xffb\x00c\xe2\x82"), uint16(3), uint64(4))
	f.Add([]byte("line\n... [5 bytes omitted; x] ...\ntail"), uint16(10), uint64(5))
	f.Fuzz(func(t *testing.T, in []byte, limit uint16, seed uint64) {
		limit = limit%512 + 1
		rng := rand.New(rand.NewPCG(seed, seed>>32))
		c := New(Options{Limit: int(limit), SpillDir: t.TempDir(), Name: "fuzz"})
		for rest := in; len(rest) > 0; {
			n := 1 + rng.IntN(min(len(rest), 2*int(limit)+8))
			if m, err := c.Write(rest[:n]); m != n || err != nil {
				t.Fatalf("Write = %d, %v", m, err)
			}
			rest = rest[n:]
		}
		r := c.Close()
		if r.SpillErr != nil {
			t.Fatal(r.SpillErr)
		}
		checkProperties(t, in, r, int(limit))
	})
}
