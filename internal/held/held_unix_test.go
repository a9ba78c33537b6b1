//go:build unix

package held

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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

	// Another process holds one, then is killed. The holder is this test
	// binary holding through Hold alone: a flock(1) holder forks its command
	// with the lock's file still open, so killing flock left the lock with
	// the child for a moment (CI saw "held after its holder was killed").
	other := mk("other")
	holder := exec.Command(os.Args[0], "-test.run=^TestHolderProcess$")
	holder.Env = append(os.Environ(), "HELD_TEST_HOLD="+other)
	ready, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer holder.Process.Kill()
	line := make([]byte, 5)
	if _, err := io.ReadFull(ready, line); err != nil || string(line) != "held\n" {
		t.Fatalf("holder did not report holding: %q, %v", line, err)
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
	holder.Wait() // its files, and so its lock, are closed before it can be waited for
	if !Unheld(other, old) {
		t.Errorf("held after its holder (pid %s) was killed", strconv.Itoa(holder.Process.Pid))
	}
	h.Close()
	if !Unheld(mine, old) {
		t.Error("held after Close")
	}
}

// TestHolderProcess is TestUnheld's other process: it holds the directory
// named in HELD_TEST_HOLD, says so, and waits to be killed.
func TestHolderProcess(t *testing.T) {
	dir := os.Getenv("HELD_TEST_HOLD")
	if dir == "" {
		t.Skip("run by TestUnheld")
	}
	h, err := Hold(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close() // and kept reachable: a collected file would close the lock
	os.Stdout.WriteString("held\n")
	time.Sleep(time.Minute)
}
