package inherit

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// leak opens a file as a parent that forgot O_CLOEXEC would have left it.
func leak(t *testing.T) int {
	t.Helper()
	fd, err := syscall.Open(filepath.Join(t.TempDir(), "victim"), syscall.O_CREAT|syscall.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	return fd
}

// childSees reports whether a program started now is given descriptor fd.
func childSees(t *testing.T, fd int) bool {
	t.Helper()
	out, err := exec.Command("sh", "-c", "ls /proc/self/fd").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.Contains(" "+strings.Join(strings.Fields(string(out)), " ")+" ", " "+strconv.Itoa(fd)+" ")
}

func TestStop(t *testing.T) {
	for name, stop := range map[string]func(int) error{
		"close_range": Stop,
		"listed":      func(first int) error { return stopListed(first, "/proc/self/fd") },
	} {
		t.Run(name, func(t *testing.T) {
			fd := leak(t)
			if !childSees(t, fd) {
				t.Fatalf("control: a child is not given leaked descriptor %d", fd)
			}
			if err := stop(3); err != nil {
				t.Fatal(err)
			}
			if childSees(t, fd) {
				t.Errorf("descriptor %d still reaches a child after Stop", fd)
			}
			// Still usable here.
			if _, err := syscall.Write(fd, []byte("x")); err != nil {
				t.Errorf("descriptor %d unusable after Stop: %v", fd, err)
			}
			// What a program is handed still reaches it.
			cmd := exec.Command("sh", "-c", "echo handed >&3")
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			cmd.ExtraFiles = []*os.File{w}
			if err := cmd.Run(); err != nil {
				t.Fatal(err)
			}
			w.Close()
			buf := make([]byte, 16)
			n, _ := r.Read(buf)
			r.Close()
			if string(buf[:n]) != "handed\n" {
				t.Errorf("ExtraFiles after Stop: got %q", buf[:n])
			}
		})
	}
}
