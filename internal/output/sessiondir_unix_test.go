//go:build unix

package output

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestSweepSessionDirs: an empty session directory whose owner is gone is
// removed once past the grace of a new one; one still held never is, however
// old; one holding a spill file stays for that file's retention.
func TestSweepSessionDirs(t *testing.T) {
	t.Parallel()
	spill := t.TempDir()
	made := func(age time.Duration, alive bool, file bool) string {
		d := NewSessionDir(spill)
		if err := d.Make(); err != nil {
			t.Fatal(err)
		}
		if alive {
			t.Cleanup(d.Close)
		} else {
			d.hold.Close() // what the kernel does when the owner is killed
		}
		if file {
			f, err := createSpill(d.Path, "stdout")
			if err != nil {
				t.Fatal(err)
			}
			f.Close()
		}
		when := time.Now().Add(-age)
		if err := os.Chtimes(d.Path, when, when); err != nil {
			t.Fatal(err)
		}
		return d.Path
	}
	cases := []struct {
		name string
		path string
		gone bool
	}{
		{"held", made(2*time.Minute, true, false), false},
		{"held for two days", made(48*time.Hour, true, false), false},
		{"owner killed", made(2*time.Minute, false, false), true},
		{"owner killed two days ago", made(48*time.Hour, false, false), true},
		{"owner killed just now", made(0, false, false), false},
		{"owner killed, a spill file kept", made(2*time.Minute, false, true), false},
	}
	if err := Sweep(spill, 24*time.Hour); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		if _, err := os.Stat(c.path); os.IsNotExist(err) != c.gone {
			t.Errorf("%s: gone = %v, want %v", c.name, os.IsNotExist(err), c.gone)
		}
	}
}

// TestSessionDirInForeignSpillDir: the shared default spill directory planted
// by another user (who could swap our session directory for a link to one of
// theirs) is refused before anything is made in it, and so is every spill.
func TestSessionDirInForeignSpillDir(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to plant a directory as another user")
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	shared := filepath.Join(tmp, "shellgate-spill-"+strconv.Itoa(os.Getuid()))
	if err := os.Mkdir(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(shared, 0o777)
	if err := os.Chown(shared, 12345, 12345); err != nil {
		t.Fatal(err)
	}
	d := NewSessionDir(DefaultSpillDir())
	if err := d.Make(); err == nil || !strings.Contains(err.Error(), "owned by uid 12345") {
		t.Errorf("Make in a planted spill dir = %v, want an ownership error", err)
	}
	if f, err := createSpill(d.Path, "stdout"); err == nil {
		f.Close()
		t.Errorf("a spill file was made in the planted spill dir: %s", f.Name())
	}
	d.Close()
	if entries, _ := os.ReadDir(shared); len(entries) != 0 {
		t.Errorf("made in the planted spill dir: %v", entries)
	}
}
