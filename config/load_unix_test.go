//go:build unix

package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shellgate/shellgate/config"
)

// A configuration file that is not a regular file — a FIFO nobody writes to, a
// symlink to /dev/zero — is refused with an error naming it, at once: reading it
// used to hang every start in the project (and the hook with it) while memory grew.
func TestLoadRefusesSpecialFiles(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(t *testing.T, path string)
	}{
		{"fifo", func(t *testing.T, path string) {
			if err := syscall.Mkfifo(path, 0o644); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
		}},
		{"symlink to /dev/zero", func(t *testing.T, path string) {
			if _, err := os.Stat("/dev/zero"); err != nil {
				t.Skip("no /dev/zero")
			}
			if err := os.Symlink("/dev/zero", path); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		for _, where := range []string{"project", "--config", "user"} {
			t.Run(tc.name+" as "+where, func(t *testing.T) {
				l := newLab(t)
				o := l.opts()
				var path string
				switch where {
				case "project":
					path = filepath.Join(l.root, config.ProjectFileName)
				case "--config":
					path = filepath.Join(l.root, "other.toml")
					o.ConfigFile = path
				case "user":
					path = l.user
				}
				tc.make(t, path)
				done := make(chan error, 1)
				go func() {
					_, _, err := config.Load(o)
					done <- err
				}()
				var err error
				select {
				case err = <-done:
				case <-time.After(20 * time.Second): // a hang, not a speed limit
					t.Fatalf("Load(%s %s) did not return", where, tc.name)
				}
				if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "not a regular file") {
					t.Errorf("Load error = %v; want one naming %s as not a regular file", err, path)
				}
			})
		}
	}
}
