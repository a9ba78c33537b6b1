package copyup

import (
	"bytes"
	"os"
	"testing"
)

// readProc reads a proc file whole, past its first buffer too, as
// os.ReadFile does; nothing for one that is not there.
func TestReadProc(t *testing.T) {
	want, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil || len(want) <= 512 {
		t.Skipf("no mountinfo past 512 bytes here (%d): %v", len(want), err)
	}
	if got := readProc("/proc/self/mountinfo"); !bytes.Equal(got, want) {
		t.Errorf("read %d bytes of /proc/self/mountinfo, want %d", len(got), len(want))
	}
	if stat := readProc("/proc/self/stat"); !bytes.Contains(stat, []byte(") ")) {
		t.Errorf("/proc/self/stat: %q", stat)
	}
	if got := readProc("/proc/self/no-such-file"); got != nil {
		t.Errorf("a file that is not there: %q", got)
	}
}
