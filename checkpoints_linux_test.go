package shellgate_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/shellgate/shellgate/internal/lane"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/internal/sandbox"
)

// A Gate whose sandbox session watches the root for nested repositories and
// whose checkpoints watch it for what changed holds one inotify instance for
// the process, not one per watcher (a user has 128), and lets go of its
// watches when it closes.
func TestCheckpointsShareInotify(t *testing.T) {
	lane.Live(t)
	requireSandbox(t)
	l := newCPLab(t, sandbox.On, nil)
	s := l.g.NewSession(shellgate.SessionConfig{ID: "inotify"})
	env := s.Run(context.Background(), shellgate.Request{Command: "echo changed > notes.txt && mkdir -p sub/dir"})
	if env.Data.Changed == nil || env.Data.Changed.Modified != 1 {
		t.Fatalf("the command's checkpoints: %s", env.Text)
	}
	fds := inotifyFDs(t)
	if len(fds) != 1 {
		t.Fatalf("%d inotify instances in the process with a sandbox session and checkpoints, want 1", len(fds))
	}
	// Both watch: the checkpoints every directory of the root and its .git,
	// the walk for nested repositories the root's (and more).
	if n := watchesOf(t, fds[0]); n < 2 {
		t.Errorf("the instance holds %d watches", n)
	}
	s.Close()
	l.g.Close()
	if n := watchesOf(t, fds[0]); n != 0 {
		t.Errorf("%d watches left after the Gate closed", n)
	}
}

// inotifyFDs are the process's inotify instances.
func inotifyFDs(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	must(t, err)
	var fds []string
	for _, e := range entries {
		if l, _ := os.Readlink("/proc/self/fd/" + e.Name()); l == "anon_inode:inotify" {
			fds = append(fds, e.Name())
		}
	}
	return fds
}

// watchesOf counts the watches of the inotify instance fd.
func watchesOf(t *testing.T, fd string) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/fdinfo/" + fd)
	must(t, err)
	return strings.Count(string(b), "inotify wd:")
}
