// Package inotifytest makes the kernel's inotify queue overflow, for the
// tests of what watches a directory through package inotify.
package inotifytest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Overflow makes and removes a file in dir, a watched directory, until the
// kernel's queue of events (fs.inotify.max_queued_events) has overflowed,
// if nothing reads it meanwhile; it skips the test where that queue is
// unknown or too long to fill quickly.
func Overflow(t testing.TB, dir string) {
	t.Helper()
	b, err := os.ReadFile("/proc/sys/fs/inotify/max_queued_events")
	if err != nil {
		t.Skip(err)
	}
	queue, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if queue <= 0 || queue > 1<<17 {
		t.Skipf("a queue of %d events is too long to overflow here", queue)
	}
	// Another name each time, so that each is an event of its own for a
	// watch of creations alone (consecutive events alike are merged).
	for i := range queue + 1 {
		f := filepath.Join(dir, ".inotifytest-"+strconv.Itoa(i))
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
}
