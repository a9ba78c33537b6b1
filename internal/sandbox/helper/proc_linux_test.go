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
		return listsOtherPID(fd, make([]byte, 4096))
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
	if !listsOtherPID(-1, make([]byte, 4096)) {
		t.Fatal("a /proc that cannot be read must count as busy")
	}
	if !lists("/proc") { // this test's own process, at least
		t.Fatal("missed the processes of the host's /proc")
	}
}
