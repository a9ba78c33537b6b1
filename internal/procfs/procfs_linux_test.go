package procfs

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// Read reads a file whole whatever its size, into a buffer it grows and
// reuses: an environment can be far larger than the buffer's first size.
func TestRead(t *testing.T) {
	dir := t.TempDir()
	buf := make([]byte, 0, 16)
	for _, size := range []int{0, 1, 16, 17, 100 << 10} {
		want := bytes.Repeat([]byte("K=v\x00"), size/4+1)[:size]
		path := filepath.Join(dir, "f")
		if err := os.WriteFile(path, want, 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := Read(path, &buf, false)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("size %d: read %d bytes, %v", size, len(got), err)
		}
	}
	if _, err := Read(filepath.Join(dir, "missing"), &buf, false); !os.IsNotExist(err) {
		t.Errorf("missing file: %v", err)
	}
}

// A /proc seq file read as one (seq: a read that leaves room taken as its
// end) is still read whole, far larger than a page or the buffer.
func TestReadSeqFile(t *testing.T) {
	for _, path := range []string{"/proc/kallsyms", "/proc/self/mountinfo", "/proc/self/syscall"} {
		want, err := os.ReadFile(path)
		if err != nil {
			t.Logf("%s: %v", path, err)
			continue
		}
		buf := make([]byte, 0, 4096)
		got, err := Read(path, &buf, true)
		if path == "/proc/self/syscall" { // its own read, at another place
			if err != nil || len(got) == 0 || !bytes.HasSuffix(got, []byte("\n")) {
				t.Errorf("%s: %q, %v", path, got, err)
			}
			continue
		}
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: read %d bytes of %d, %v", path, len(got), len(want), err)
		}
	}
}
