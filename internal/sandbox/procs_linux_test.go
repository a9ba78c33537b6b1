package sandbox

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shellgate/shellgate/internal/lane"
)

// Processes lists every process of the session, however it left its group,
// session and environment, and nothing outside it: the runner's search for
// escaped descendants reads only those.
func TestProcessesListsTheSession(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	s := start(t, l.spec())
	if _, err := os.Stat("/proc/thread-self/children"); err != nil {
		t.Skip("no /proc/PID/task/TID/children in this kernel: the runner searches every process")
	}
	// The last is a grandchild of the helper: its bash lives on, waiting.
	names := []string{"6101.5" + runTag, "6102.5" + runTag, "6103.5" + runTag, "6104.5" + runTag}
	run(t, s, l.root, "setsid -f env -i sleep 6101.5"+runTag+" >/dev/null 2>&1; nohup sleep 6102.5"+runTag+" >/dev/null 2>&1 & (setsid sleep 6103.5"+runTag+" >/dev/null 2>&1 &) ; "+
		"setsid -f bash -c 'sleep 6104.5"+runTag+" & wait' >/dev/null 2>&1; true")
	var escaped []int
	for deadline := time.Now().Add(5 * time.Second); len(escaped) != len(names); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the escapes did not start: %v", procsNamed(names...))
		}
		escaped = escaped[:0]
		for _, p := range procsNamed(names...) {
			pid, _ := strconv.Atoi(strings.Fields(p)[0])
			escaped = append(escaped, pid)
		}
	}
	pids, ok := s.Processes()
	if !ok {
		t.Fatal("Processes: not listed")
	}
	for _, pid := range escaped {
		if !slices.Contains(pids, pid) {
			t.Errorf("process %d (%v) is missing from %v", pid, procsNamed(names...), pids)
		}
	}
	for _, pid := range pids {
		if !s.Contains(pid) {
			t.Errorf("process %d is listed but not in the session", pid)
		}
	}
	must(t, s.Close())
	if pids, ok := s.Processes(); ok && len(pids) > 0 {
		t.Errorf("after Close: %v", pids)
	}
}
