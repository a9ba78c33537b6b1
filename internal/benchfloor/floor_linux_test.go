package benchfloor

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// Each kind of exit is made as described, or Time says why not: a mount
// that fails fails the shell before it is ready.
func TestExitKinds(t *testing.T) {
	for _, k := range Kinds {
		t.Run(k.Name, func(t *testing.T) {
			d, err := k.Exit.Time(t.TempDir())
			var perm *os.SyscallError
			if errors.As(err, &perm) || errors.Is(err, os.ErrPermission) {
				t.Skipf("no namespaces here: %v", err)
			}
			if err != nil || d <= 0 {
				t.Fatalf("%v, %v", d, err)
			}
		})
	}
}

// Mounts are made only in a mount namespace of the shell's own, never on
// the host.
func TestExitMountsOnlyInItsNamespace(t *testing.T) {
	dir := t.TempDir()
	for _, e := range []Exit{{Binds: 1}, {Overlays: 1}} {
		if _, err := e.Time(dir); err == nil {
			t.Errorf("%+v: mounted without a namespace", e)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) > 0 {
		t.Errorf("layers made for a refused floor: %v", entries)
	}
}

// A spawn in a cgroup of its own starts, and leaves no cgroup behind.
func TestSpawnInCgroup(t *testing.T) {
	own, _, err := ownCgroup()
	if err != nil {
		t.Skip(err)
	}
	if _, err := (Spawn{InCgroup: true}).Time(); err != nil {
		t.Skipf("no cgroup of our own here: %v", err)
	}
	if d, err := (Spawn{}).Time(); err != nil || d <= 0 {
		t.Errorf("plain spawn: %v, %v", d, err)
	}
	left, _ := filepath.Glob(filepath.Join(own, "benchfloor-*"))
	if len(left) > 0 {
		t.Errorf("cgroups left: %v", left)
	}
}

// A Peer answers each request once its `true` has run in a cgroup of its own,
// leaves no cgroup behind, and ends with Close; one in namespaces lives in
// user, mount and PID namespaces other than this process's.
func TestPeer(t *testing.T) {
	own, _, err := ownCgroup()
	if err != nil {
		t.Skip(err)
	}
	for _, inNamespaces := range []bool{false, true} {
		p, err := StartPeer(inNamespaces)
		if err != nil {
			t.Skipf("no peer here (namespaces %v): %v", inNamespaces, err)
		}
		for range 3 {
			if d, err := p.Time(); err != nil || d <= 0 {
				t.Errorf("namespaces %v: round trip: %v, %v", inNamespaces, d, err)
			}
		}
		for _, ns := range []string{"user", "mnt", "pid"} {
			mine, _ := os.Readlink("/proc/self/ns/" + ns)
			its, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/%s", p.cmd.Process.Pid, ns))
			if err != nil {
				t.Fatal(err)
			}
			if (its != mine) != inNamespaces {
				t.Errorf("namespaces %v: the peer's %s namespace is %s, this process's %s", inNamespaces, ns, its, mine)
			}
		}
		if err := p.Close(); err != nil {
			t.Errorf("namespaces %v: Close: %v", inNamespaces, err)
		}
		if st := p.cmd.ProcessState; st == nil || !st.Exited() {
			t.Errorf("namespaces %v: the peer has not exited: %v", inNamespaces, st)
		}
		if _, err := p.Time(); err == nil {
			t.Errorf("namespaces %v: a closed peer answered", inNamespaces)
		}
	}
	left, _ := filepath.Glob(filepath.Join(own, "benchfloor-*"))
	if len(left) > 0 {
		t.Errorf("cgroups left: %v", left)
	}
}

// A floor's `true` is born in its cgroup as the sandbox's commands are: in
// cgroup2 wherever cgroup2 is mounted, beside v1 too (a hybrid machine), by
// clone3, and not by moving the forking thread into a v1 cgroup, a migration
// that waits for an RCU grace period after idle (5–11 ms a spawn after 200 ms
// here) and that the sandbox does not make there.
func TestSpawnInCgroupAsTheSandbox(t *testing.T) {
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Skip(err)
	}
	var mount string
	for _, m := range []string{"/sys/fs/cgroup", "/sys/fs/cgroup/unified"} {
		var st unix.Statfs_t
		if unix.Statfs(m, &st) == nil && st.Type == unix.CGROUP2_SUPER_MAGIC {
			mount = m
			break
		}
	}
	var path string
	for _, line := range strings.Split(string(data), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			path = p
		}
	}
	if mount == "" || path == "" {
		t.Skip("no cgroup2 here: the floor moves a thread in v1, as the sandbox does")
	}
	dir, v2, err := ownCgroup()
	if err != nil || !v2 || dir != filepath.Join(mount, path) {
		t.Errorf("ownCgroup = %q, v2 %v, %v; want %q on cgroup2", dir, v2, err, filepath.Join(mount, path))
	}
}
