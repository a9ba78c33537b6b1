package sandbox

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/shellgate/shellgate/internal/lane"
)

// The kernel's per-user counts (user.max_inotify_instances, 128 on most
// machines; user.max_user_namespaces …) are charged to the host's user in
// every user namespace above the one that makes the object: a session's
// commands, the host's root or user, could take them all, and every process
// of that user on the host (systemd, an editor's file watcher, another
// project's shellgate, whose sandbox needs a user namespace) would be
// refused. A session takes at most half of each: its own namespace's limits
// say so, and a command that tries for more stops there.
func TestSessionTakesHalfTheUsersCounts(t *testing.T) {
	lane.Live(t)
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("needs python3")
	}
	l := newLab(t)
	s := start(t, l.spec())
	if s.Report().Layers[LayerSecrets] == "" {
		t.Skip("no user namespace here")
	}
	host := map[string]int{}
	for _, name := range userCounts {
		b, err := os.ReadFile(filepath.Join("/proc/sys/user", name))
		if err != nil {
			t.Skipf("no %s here: %v", name, err)
		}
		host[name], _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	got, _ := run(t, s, l.root, "cd /proc/sys/user && grep . "+strings.Join(userCounts, " "))
	for _, line := range strings.Split(strings.TrimSpace(got), "\n") {
		name, v, _ := strings.Cut(line, ":")
		n, _ := strconv.Atoi(v)
		if want := max(host[name]/2, 1); n > want {
			t.Errorf("in the session, user.%s is %d, want at most %d (half the host's %d)", name, n, want, host[name])
		}
	}
	must(t, os.WriteFile(filepath.Join(l.root, "inot.py"), []byte(`import ctypes
libc = ctypes.CDLL(None, use_errno=True)
fds = []
for i in range(100000):
    fd = libc.inotify_init1(0)
    if fd < 0:
        break
    fds.append(fd)
print(len(fds))
`), 0o644))
	out, _ := run(t, s, l.root, "python3 inot.py")
	n, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil {
		t.Fatalf("inot.py: %q", out)
	}
	if n > host["max_inotify_instances"]/2 {
		t.Errorf("a command made %d inotify instances, of the host user's %d", n, host["max_inotify_instances"])
	}
}
