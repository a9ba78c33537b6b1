package output

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSpillDiskFull makes the spill file's writes fail as on a full disk (/dev/full):
// Write still succeeds, the incomplete file is removed, and SpillErr says why.
func TestSpillDiskFull(t *testing.T) {
	t.Parallel()
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip(err)
	}
	partial := filepath.Join(t.TempDir(), "partial")
	os.WriteFile(partial, []byte("some of it"), 0o600)

	c := New(Options{Limit: 100, SpillDir: t.TempDir()})
	c.spill = spillFile{started: true, f: full, path: partial, max: DefaultSpillMax}
	in := lines(1000)
	writeChunks(t, c, in, 4096)
	r := c.Close()
	if r.SpillPath != "" || r.SpillErr == nil || !strings.Contains(r.SpillErr.Error(), "no space left") {
		t.Errorf("SpillPath %q, SpillErr %v; want none and ENOSPC", r.SpillPath, r.SpillErr)
	}
	if _, err := os.Stat(partial); !os.IsNotExist(err) {
		t.Errorf("incomplete spill file kept: %v", err)
	}
	if !strings.Contains(r.Text, "full output not saved: cannot write spill file") {
		t.Errorf("marker does not give the reason: %q", abbrev(r.Text))
	}
	checkProperties(t, in, r, 100)
}
