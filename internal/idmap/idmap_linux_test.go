package idmap

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// Through a tree, every file is nobody's and nothing can be written; the
// directory itself is as it was.
func TestOthers(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("idmapped mounts of the host's files need its root")
	}
	dir, err := os.MkdirTemp("/var/tmp", "idmap-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.WriteFile(filepath.Join(dir, "secret"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	tree, err := Others(dir)
	if err != nil {
		t.Skipf("no idmapped mounts here: %v", err)
	}
	defer tree.Close()
	if !Works(dir) {
		t.Error("Works says no where Others worked")
	}
	var st unix.Stat_t
	if err := unix.Fstatat(int(tree.Fd()), "secret", &st, 0); err != nil {
		t.Fatal(err)
	}
	if st.Uid != nobody || st.Gid != nobody {
		t.Errorf("through the tree: owner %d:%d, want nobody's", st.Uid, st.Gid)
	}
	if _, err := unix.Openat(int(tree.Fd()), "secret", unix.O_WRONLY|unix.O_CLOEXEC, 0); !errors.Is(err, unix.EROFS) {
		t.Errorf("opened for writing through the tree: %v", err)
	}
	if err := unix.Stat(filepath.Join(dir, "secret"), &st); err != nil || st.Uid != 0 {
		t.Errorf("the directory itself: owner %d, %v", st.Uid, err)
	}
	if _, err := Others(filepath.Join(dir, "missing")); err == nil {
		t.Error("a tree of a missing directory")
	}
}
