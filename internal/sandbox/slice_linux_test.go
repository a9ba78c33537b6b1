package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/shellgate/shellgate/internal/lane"
)

// The helper's threads ask for a short slice, so that each hand-off of a
// command between them runs at once; the commands themselves run with the
// kernel's default, as they would outside the sandbox.
func TestCommandsKeepDefaultSlice(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	s := start(t, l.spec())
	var short int
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/sched", s.helper.Process.Pid))
	for _, task := range tasks {
		if b, err := os.ReadFile(task); err == nil && schedSlice(t, string(b)) == wakeSlice {
			short++
		}
	}
	if short == 0 {
		t.Skip("no thread of the helper has a short slice: the kernel has none to give (Linux < 6.12)")
	}
	out, code := run(t, s, l.root, "cat /proc/self/sched")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	if got := schedSlice(t, out); got == wakeSlice {
		t.Errorf("a command runs with the helper's short slice (%d ns): it should have the kernel's default", got)
	}
}

// schedSlice is se.slice of a /proc/PID/sched text.
func schedSlice(t *testing.T, sched string) int {
	t.Helper()
	m := regexp.MustCompile(`(?m)^se\.slice\s*:\s*(\d+)`).FindStringSubmatch(sched)
	if m == nil {
		t.Skipf("no se.slice in /proc/PID/sched here")
	}
	n, _ := strconv.Atoi(m[1])
	return n
}
