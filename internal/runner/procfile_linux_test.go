package runner

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// readProcFile reads a file whole whatever its size, into a buffer it grows and
// reuses: an environment can be far larger than the buffer's first size.
func TestReadProcFile(t *testing.T) {
	dir := t.TempDir()
	buf := make([]byte, 0, 16)
	for _, size := range []int{0, 1, 16, 17, 100 << 10} {
		want := bytes.Repeat([]byte("K=v\x00"), size/4+1)[:size]
		path := filepath.Join(dir, "f")
		if err := os.WriteFile(path, want, 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := readProcFile(path, &buf)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("size %d: read %d bytes, %v", size, len(got), err)
		}
	}
	if _, err := readProcFile(filepath.Join(dir, "missing"), &buf); !os.IsNotExist(err) {
		t.Errorf("missing file: %v", err)
	}
	// The process's own environment, as the marker scan reads it.
	env, err := readEnviron(os.Getpid(), &buf)
	if err != nil || !bytes.Contains(env, []byte("PATH=")) {
		t.Errorf("own environ: %v %.100q", err, env)
	}
}
