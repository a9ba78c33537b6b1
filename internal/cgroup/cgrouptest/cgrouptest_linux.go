// Package cgrouptest runs cgroup tests on the host's hierarchy and, where
// that is v1, once more on a cgroup2 hierarchy of the test's own, so that the
// v2 code runs on a v1 machine too.
package cgrouptest

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/shellgate/shellgate/internal/cgroup"
	"golang.org/x/sys/unix"
)

// ForEachHierarchy runs test on the cgroups at /sys/fs/cgroup, v1 or v2,
// and, where those are v1, once more on a cgroup2 hierarchy mounted for the
// test, so that the v2 code runs on a v1 machine too. ours tells test which
// one it runs on: on ours, the session must get its cgroup.
func ForEachHierarchy(t *testing.T, test func(t *testing.T, ours bool)) {
	t.Run("host", func(t *testing.T) { test(t, false) })
	t.Run("cgroup2", func(t *testing.T) {
		if cgroup.IsV2(cgroup.Root) {
			t.Skip("the host's cgroups are v2: tested above")
		}
		MountCgroup2(t)
		test(t, true)
	})
}

// MountCgroup2 mounts the cgroup2 hierarchy on a temp dir and points
// cgroup.Root at it for the test, skipping, with the reason, where it cannot.
// It is the one hierarchy /sys/fs/cgroup/unified may show too: at the end the
// test fails if a cgroup of this process is left in it, which is then
// removed, and the mount goes.
func MountCgroup2(t *testing.T) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("mounting cgroup2 needs root: the cgroup v2 code is not tested here")
	}
	own, err := cgroup.Own()
	if err != nil {
		t.Fatal(err)
	}
	path, ok := own[""]
	if !ok {
		t.Skip("this process is in no cgroup2 hierarchy: the cgroup v2 code is not tested here")
	}
	mnt := t.TempDir()
	if err := unix.Mount("none", mnt, "cgroup2", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		t.Skipf("cannot mount cgroup2 (%v): the cgroup v2 code is not tested here", err)
	}
	old := cgroup.Root
	cgroup.Root = mnt
	t.Cleanup(func() {
		cgroup.Root = old
		removeLeftCgroups(t, filepath.Join(mnt, path))
		// Detached at the latest now: t.TempDir's RemoveAll, which runs
		// next, must not rmdir the cgroups of the hierarchy.
		if err := unix.Unmount(mnt, 0); err != nil {
			t.Errorf("unmounting the test's cgroup2: %v", err)
			unix.Unmount(mnt, unix.MNT_DETACH)
		}
	})
}

// removeLeftCgroups fails the test for each cgroup of this test process left
// in parent, and removes it, killing what it holds.
func removeLeftCgroups(t *testing.T, parent string) {
	t.Helper()
	left, _ := filepath.Glob(filepath.Join(parent, fmt.Sprintf("shellgate-%d-*", os.Getpid())))
	for _, dir := range left {
		t.Errorf("cgroup left behind: %s", dir)
		cmds, _ := filepath.Glob(filepath.Join(dir, "cmd-*"))
		nested, _ := filepath.Glob(filepath.Join(dir, "cmds", "cmd-*"))
		g := cgroup.At(dir)
		for _, d := range append(append(cmds, nested...), dir, filepath.Join(dir, "helper")) {
			g.KillAll(d, 0, syscall.SIGKILL)
		}
		g.Remove()
	}
}

// SessionParent is the cgroup under which sessions make theirs, and whether it
// is v2; it skips where there is none.
func SessionParent(t *testing.T) (string, bool) {
	t.Helper()
	own, err := cgroup.Own()
	if err != nil {
		t.Fatal(err)
	}
	if cgroup.IsV2(cgroup.Root) {
		return filepath.Join(cgroup.Root, own[""]), true
	}
	p, ok := own["pids"]
	if !ok {
		t.Skip("no pids cgroup controller here")
	}
	return filepath.Join(cgroup.Root, "pids", p), false
}
