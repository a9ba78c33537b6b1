//go:build unix

package held

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestUnheld: a directory held by this process or by another live one is
// held; one whose holder was killed, or never held, is not (past the grace);
// a young one is left alone.
func TestUnheld(t *testing.T) {
	lab := t.TempDir()
	mk := func(name string) string {
		d := filepath.Join(lab, name)
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		return d
	}
	old := time.Now().Add(-2 * Grace)

	mine := mk("mine")
	h, err := Hold(mine)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()

	// Another process holds one (flock(1) on the directory), then is killed.
	other := mk("other")
	// --close: the lock stays with flock, not with its sleep.
	holder := exec.Command("flock", "--shared", "--close", other, "sleep", "60")
	holder.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := holder.Start(); err != nil {
		t.Skip("flock(1):", err)
	}
	defer syscall.Kill(-holder.Process.Pid, syscall.SIGKILL)
	for i := 0; Unheld(other, old) && i < 200; i++ {
		time.Sleep(10 * time.Millisecond) // until it holds
	}

	never := mk("never")
	cases := []struct {
		name     string
		dir      string
		modified time.Time
		want     bool
	}{
		{"held by us", mine, old, false},
		{"held by another process", other, old, false},
		{"never held", never, old, true},
		{"never held, young", never, time.Now(), false},
		{"gone", filepath.Join(lab, "gone"), old, false},
	}
	for _, c := range cases {
		if got := Unheld(c.dir, c.modified); got != c.want {
			t.Errorf("%s: Unheld = %v, want %v", c.name, got, c.want)
		}
	}
	holder.Process.Kill()
	holder.Wait()
	if !Unheld(other, old) {
		t.Errorf("held after its holder (pid %s) was killed", strconv.Itoa(holder.Process.Pid))
	}
	h.Close()
	if !Unheld(mine, old) {
		t.Error("held after Close")
	}
}
