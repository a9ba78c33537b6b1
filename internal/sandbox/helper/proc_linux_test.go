package helper

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// listsOtherPID reads a directory as the session's /proc: a process other
// than the helper (PID 1) is a name of digits but "1", however many entries
// come before it.
func TestListsOtherPID(t *testing.T) {
	dir := t.TempDir()
	lists := func(dir string) bool {
		fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Close(fd)
		return listsOtherPID(fd, make([]byte, 4096), nil)
	}
	mk := func(names ...string) {
		for _, n := range names {
			if err := os.Mkdir(filepath.Join(dir, n), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	mk("1", "self", "thread-self", "sys", "1a", "a1", "x")
	for i := range 300 { // more than one getdents call's worth
		mk(fmt.Sprintf("entry-%03d-with-a-long-name-to-fill-the-buffer-sooner", i))
	}
	if lists(dir) {
		t.Fatal("found another process where only PID 1 is")
	}
	mk("17")
	if !lists(dir) {
		t.Fatal("missed PID 17")
	}
	if !listsOtherPID(-1, make([]byte, 4096), nil) {
		t.Fatal("a /proc that cannot be read must count as busy")
	}
	if !lists("/proc") { // this test's own process, at least
		t.Fatal("missed the processes of the host's /proc")
	}
}

// /proc read from the offset a listing noted lists every process from PID 1
// on and nothing else first: othersAlive skips the other entries and no
// process.
func TestProcListedFromItsProcesses(t *testing.T) {
	fd, err := unix.Open("/proc", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Skip(err)
	}
	defer unix.Close(fd)
	var at int64
	if !listsOtherPID(fd, make([]byte, 4096), &at) || at == 0 {
		t.Fatalf("the host's /proc: no offset of its processes noted (%d)", at)
	}
	if _, err := unix.Seek(fd, at, 0); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	n, err := unix.Getdents(fd, buf)
	if err != nil || n <= 0 {
		t.Fatalf("getdents from %d: %d, %v", at, n, err)
	}
	_, _, names := unix.ParseDirent(buf[:n], -1, nil)
	if len(names) == 0 || names[0] != "1" {
		t.Errorf("/proc from offset %d begins %q, want PID 1 first", at, names[:min(len(names), 5)])
	}
	for _, n := range names {
		if !isPID([]byte(n)) {
			t.Errorf("/proc from offset %d lists %q, not a process", at, n)
		}
	}
}
