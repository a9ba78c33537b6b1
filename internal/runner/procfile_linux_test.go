package runner

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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
		got, err := readProcFile(path, &buf, false)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("size %d: read %d bytes, %v", size, len(got), err)
		}
	}
	if _, err := readProcFile(filepath.Join(dir, "missing"), &buf, false); !os.IsNotExist(err) {
		t.Errorf("missing file: %v", err)
	}
	// The process's own environment, as the marker scan reads it.
	env, err := readEnviron(os.Getpid(), &buf)
	if err != nil || !bytes.Contains(env, []byte("PATH=")) {
		t.Errorf("own environ: %v %.100q", err, env)
	}
}

// A /proc seq file read as one (seq: a read that leaves room taken as its
// end) is still read whole, far larger than a page or the buffer, and a
// task directory is listed whole.
func TestReadProcSeqFile(t *testing.T) {
	for _, path := range []string{"/proc/kallsyms", "/proc/self/mountinfo", "/proc/self/syscall"} {
		want, err := os.ReadFile(path)
		if err != nil {
			t.Logf("%s: %v", path, err)
			continue
		}
		buf := make([]byte, 0, 4096)
		got, err := readProcFile(path, &buf, true)
		if path == "/proc/self/syscall" { // its own read, at another place
			if err != nil || len(got) == 0 || !bytes.HasSuffix(got, []byte("\n")) {
				t.Errorf("%s: %q, %v", path, got, err)
			}
			continue
		}
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: read %d bytes of %d, %v", path, len(got), len(want), err)
		}
	}
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
