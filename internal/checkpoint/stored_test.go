package checkpoint

import (
	"bytes"
	"compress/zlib"
	"io"
	"strings"
	"testing"
)

// storedZlib writes what zlib reads back (git inflates loose objects with
// zlib), for every size up to storedMax.
func TestStoredZlib(t *testing.T) {
	for _, n := range []int{0, 1, 255, 256, 1000, storedMax - 10} {
		head, data := []byte("blob 12\x00"), []byte(strings.Repeat("x", n))
		r, err := zlib.NewReader(bytes.NewReader(storedZlib(head, data)))
		if err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		got, err := io.ReadAll(r)
		if err != nil || !bytes.Equal(got, append(head, data...)) {
			t.Fatalf("%d bytes: read back %d bytes (%v)", n, len(got), err)
		}
		if err := r.Close(); err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
	}
}
