package caps

import (
	"os"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// After Drop and Clear, the thread holds no capability in any set, and a
// program it starts holds none either, even as root.
func TestDropAndClear(t *testing.T) {
	done := make(chan map[string]string)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
		status := map[string]string{}
		defer func() { done <- status }()
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			status["error"] = err.Error()
			return
		}
		if err := Drop(); err != nil {
			status["error"] = "Drop: " + err.Error()
			return
		}
		if err := Clear(); err != nil {
			status["error"] = "Clear: " + err.Error()
			return
		}
		b, _ := os.ReadFile("/proc/thread-self/status")
		for line := range strings.Lines(string(b)) {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.HasPrefix(k, "Cap") {
				status[k] = strings.TrimSpace(v)
			}
		}
	}()
	status := <-done
	if status["error"] != "" {
		t.Fatal(status["error"])
	}
	for _, set := range []string{"CapEff", "CapPrm", "CapInh", "CapBnd", "CapAmb"} {
		if v := status[set]; strings.Trim(v, "0") != "" || v == "" {
			t.Errorf("%s = %q after Drop and Clear, want none", set, v)
		}
	}
}
