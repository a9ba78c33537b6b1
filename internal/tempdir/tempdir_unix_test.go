//go:build unix

package tempdir

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestNew: New removes the temp dirs of owners that are gone and keeps those
// still held, even by a process whose PID (in the name) this process cannot
// see, as from another PID namespace; Remove removes its own.
func TestNew(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	old := time.Now().Add(-2 * time.Minute)
	left := func(name string) string {
		d := filepath.Join(tmp, name)
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(d, "f"), []byte("x"), 0o600)
		if err := os.Chtimes(d, old, old); err != nil {
			t.Fatal(err)
		}
		return d
	}
	killed := left("shellgate-tmp-999998-killed")
	elsewhere := left("shellgate-tmp-999999-elsewhere") // no such PID here, yet held
	holder := exec.Command("flock", "--shared", "--close", elsewhere, "sleep", "60")
	holder.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := holder.Start(); err != nil {
		t.Skip("flock(1):", err)
	}
	defer func() { syscall.Kill(-holder.Process.Pid, syscall.SIGKILL); holder.Wait() }()
	for i := 0; i < 200; i++ { // until it holds
		if f, _ := os.Open(elsewhere); f != nil {
			err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
			f.Close()
			if err != nil {
				break
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	os.Chtimes(elsewhere, old, old)

	dir, err := New()
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 || !strings.HasPrefix(filepath.Base(dir), "shellgate-tmp-") {
		t.Errorf("New() = %s: %v %v", dir, fi, err)
	}
	if _, err := os.Stat(killed); !os.IsNotExist(err) {
		t.Errorf("a killed owner's temp dir is left: %v", err)
	}
	if _, err := os.Stat(filepath.Join(elsewhere, "f")); err != nil {
		t.Errorf("a temp dir still held was removed: %v", err)
	}
	// Another New, as a second Gate would, leaves the first's.
	second, err := New()
	if err != nil {
		t.Fatal(err)
	}
	os.Chtimes(dir, old, old)
	third, err := New()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Errorf("a live Gate's temp dir was removed by another's New: %v", err)
	}
	for _, d := range []string{dir, second, third} {
		if err := Remove(d); err != nil {
			t.Error(err)
		}
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("Remove left %s: %v", d, err)
		}
	}
}
