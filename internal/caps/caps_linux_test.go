package caps

import (
	"os"
	"os/exec"
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

// Drop alone leaves a program started after it no capability to be given
// back: the inheritable set a thread was started with (the sandbox's helper
// holds ambient capabilities, which need it) is emptied too.
func TestDropEmptiesInheritable(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("raising the inheritable set needs CAP_SETPCAP")
	}
	done := make(chan string)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
		hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
		var sets [2]unix.CapUserData
		if err := unix.Capget(&hdr, &sets[0]); err != nil {
			done <- "capget: " + err.Error()
			return
		}
		sets[0].Inheritable = 1<<unix.CAP_SYS_ADMIN | 1<<unix.CAP_DAC_OVERRIDE
		if err := unix.Capset(&hdr, &sets[0]); err != nil {
			done <- "capset: " + err.Error()
			return
		}
		if err := Drop(); err != nil {
			done <- "Drop: " + err.Error()
			return
		}
		out, err := exec.Command("grep", "^CapInh", "/proc/self/status").Output()
		if err != nil {
			done <- "grep: " + err.Error()
			return
		}
		done <- strings.TrimSpace(string(out))
	}()
	got := <-done
	if _, v, ok := strings.Cut(got, ":"); !ok || strings.Trim(strings.TrimSpace(v), "0") != "" {
		t.Errorf("a program started after Drop: %q, want no inheritable capability", got)
	}
}
