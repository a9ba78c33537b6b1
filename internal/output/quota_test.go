package output

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// A session's spill files together stay within its Quota: a new one makes
// room by removing the oldest complete files, and stops, capped, when even
// that is not enough; the marker says how much it holds.
// The same holds for files a Store kept (a session call's job log).
func TestQuota(t *testing.T) {
	t.Parallel()
	for _, stored := range []bool{false, true} {
		t.Run(map[bool]string{false: "own files", true: "a store's files"}[stored], func(t *testing.T) { quotaHolds(t, stored) })
	}
}

func quotaHolds(t *testing.T, stored bool) {
	dir := t.TempDir()
	q := NewQuota(100)
	spill := func(n int) Result {
		out := append(bytes.Repeat([]byte("x"), n-1), '\n')
		o := Options{Limit: 20, SpillDir: dir, Quota: q, Name: "stdout"}
		if stored {
			f, err := CreateFile(dir, "job-stdout")
			if err != nil {
				t.Fatal(err)
			}
			f.Write(out)
			f.Close()
			o.Store = fileStore{f.Name()}
		}
		c := New(o)
		c.Write(out[:n-1])
		c.Write(out[n-1:])
		return c.Close()
	}
	a := spill(60)
	b := spill(30)
	if a.SpillCapped || b.SpillCapped {
		t.Fatalf("capped within the quota: %+v %+v", a, b)
	}
	c := spill(50) // 140 > 100: a, the oldest, goes
	if _, err := os.Stat(a.SpillPath); !os.IsNotExist(err) {
		t.Errorf("the oldest file is still there: %v", err)
	}
	if fi, err := os.Stat(b.SpillPath); err != nil || fi.Size() != 30 {
		t.Errorf("the newer file: %v", err)
	}
	if c.SpillCapped || c.SpillSize != 50 {
		t.Errorf("the new file: capped %v, %d bytes", c.SpillCapped, c.SpillSize)
	}
	d := spill(150) // more than the whole quota: b and c go, and it is cut at 100
	if fi, err := os.Stat(d.SpillPath); err != nil || fi.Size() != 100 || !d.SpillCapped || d.SpillSize != 100 {
		t.Errorf("a file larger than the quota: %v %+v", err, d)
	}
	if !strings.Contains(d.Text, "full output (first 100 bytes only): "+d.SpillPath) {
		t.Errorf("the marker: %q", d.Text)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("the directory holds %d files, want 1", len(entries))
	}
}
