package sandbox

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/shellgate/shellgate/internal/lane"
)

// A command's start does not go through the helper's main thread. The
// helper is set up in the package's init, when the main goroutine is locked
// to the main thread; serving the control socket there made every frame a
// wake of the poller's thread and then of the main thread, and every start
// on the launcher's thread two hand-offs each way (about four switches of
// the main thread a command). Served by a goroutine of its own, the main
// thread sleeps while commands run.
func TestHelperMainThreadSleeps(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	s := start(t, l.spec())
	pid := s.helper.Process.Pid
	run := func() {
		cmd, _ := launch(t, s, l.root, "true")
		cmd.Wait()
	}
	run()
	before := mainThreadSwitches(t, pid)
	const n = 20
	for range n {
		run()
	}
	if got := mainThreadSwitches(t, pid) - before; got > n/4 {
		t.Errorf("the helper's main thread switched %d times in %d commands", got, n)
	}
}

// mainThreadSwitches returns the context switches of pid's main thread.
func mainThreadSwitches(t *testing.T, pid int) int64 {
	t.Helper()
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/status", pid, pid))
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, line := range strings.Split(string(st), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.HasSuffix(k, "ctxt_switches") {
			c, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			n += c
		}
	}
	return n
}
