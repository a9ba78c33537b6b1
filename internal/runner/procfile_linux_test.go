package runner

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"
)

// readEnviron reads a process's environment whole.
func TestReadEnviron(t *testing.T) {
	buf := make([]byte, 0, 16)
	// The process's own environment, as the marker scan reads it.
	env, err := readEnviron(os.Getpid(), &buf)
	if err != nil || !bytes.Contains(env, []byte("PATH=")) {
		t.Errorf("own environ: %v %.100q", err, env)
	}
}

// A task directory is listed whole.
func TestDirNames(t *testing.T) {
	names, err := dirNames("/proc/self/task", make([]byte, 4096))
	entries, err2 := os.ReadDir("/proc/self/task")
	if err != nil || err2 != nil || len(names) != len(entries) {
		t.Errorf("/proc/self/task: %d names (%v), %d entries (%v)", len(names), err, len(entries), err2)
	}
}

// threads knows a process of one thread from its task directory's link
// count, and lists the threads of one that has more.
func TestThreads(t *testing.T) {
	sleep := exec.Command("sleep", "30")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { sleep.Process.Kill(); sleep.Wait() }()
	pid := sleep.Process.Pid
	if got, err := threads(pid, fmt.Sprintf("/proc/%d/task", pid), make([]byte, 4096)); err != nil || len(got) != 1 || got[0] != strconv.Itoa(pid) {
		t.Errorf("sleep: %q, %v", got, err)
	}
	entries, _ := os.ReadDir("/proc/self/task")
	got, err := threads(os.Getpid(), "/proc/self/task", make([]byte, 4096))
	if err != nil || len(entries) < 2 || len(got) != len(entries) {
		t.Errorf("this process: %d threads (%v), %d entries", len(got), err, len(entries))
	}
	if _, err := threads(pid, "/proc/0/task", make([]byte, 4096)); err == nil {
		t.Error("no such process: no error")
	}
}
