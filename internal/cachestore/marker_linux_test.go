package cachestore

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// markerOwner is the user that TestRemoveMarker, run as root, removes the
// markers as: one who owns them and is not root, as shellgate beside a
// session (the user's), whom their mode 0 refuses.
const markerOwner = 65534

// RemoveMarker removes a volatile overlay's marker as the kernel leaves it
// (incompat/volatile/dirty, each of mode 0, in work/work, of mode 0), as its
// owner who is not root; is content where there is none; and removes a link
// put in its place without following it. The work dir stays.
func TestRemoveMarker(t *testing.T) {
	if layer := os.Getenv("CACHESTORE_TEST_MARKER"); layer != "" { // markerOwner's
		if err := RemoveMarker(layer); err != nil {
			os.Stderr.WriteString(err.Error())
			os.Exit(1)
		}
		os.Exit(0)
	}
	base := labDir(t)
	kernels := func(layer string) {
		mkdirs(t, layer, "work/work/incompat/volatile")
		writeFile(t, filepath.Join(layer, "work/work/incompat/volatile/dirty"))
		for _, d := range []string{"work/work/incompat/volatile/dirty", "work/work/incompat/volatile", "work/work/incompat", "work/work"} {
			chmod(t, filepath.Join(layer, d), 0)
		}
	}
	tests := []struct {
		name    string
		make    func(layer string)
		outside bool // a directory the marker's place links to
	}{
		{"the kernel's", kernels, false},
		{"an empty volatile", func(layer string) { mkdirs(t, layer, "work/work/incompat/volatile") }, false},
		{"none", func(layer string) { mkdirs(t, layer, "work/work") }, false},
		{"no work dir", func(layer string) { mkdirs(t, layer, "") }, false},
		{"a link", func(layer string) {
			mkdirs(t, layer, "work/work")
			if err := os.Symlink(filepath.Join(base, "outside"), filepath.Join(layer, VolatileMarker)); err != nil {
				t.Fatal(err)
			}
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			layer := filepath.Join(base, tt.name)
			mkdirs(t, base, "outside/volatile")
			tt.make(layer)
			removeMarkerAsOwner(t, layer)
			if _, err := os.Lstat(filepath.Join(layer, VolatileMarker)); !os.IsNotExist(err) {
				t.Errorf("the marker is left: %v", err)
			}
			if _, err := os.Stat(filepath.Join(layer, "work")); err != nil && tt.name != "no work dir" {
				t.Errorf("the work dir went: %v", err)
			}
			if _, err := os.Stat(filepath.Join(base, "outside/volatile")); err != nil {
				t.Errorf("the link was followed: %v", err)
			}
		})
	}
}

// removeMarkerAsOwner removes layer's marker as its owner who is not root:
// this test's user, or markerOwner where that is root.
func removeMarkerAsOwner(t *testing.T, layer string) {
	t.Helper()
	if os.Getuid() != 0 {
		if err := RemoveMarker(layer); err != nil {
			t.Fatal(err)
		}
		return
	}
	filepath.Walk(filepath.Dir(layer), func(p string, _ os.FileInfo, _ error) error {
		return os.Lchown(p, markerOwner, markerOwner)
	})
	// This test binary, where markerOwner can run it.
	bin := filepath.Join(filepath.Dir(filepath.Dir(layer)), "cachestore.test")
	if _, err := os.Stat(bin); err != nil {
		self, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		copyFile(t, self, bin)
	}
	cmd := exec.Command(bin, "-test.run", "^TestRemoveMarker$")
	cmd.Env = append(os.Environ(), "CACHESTORE_TEST_MARKER="+layer)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: markerOwner, Gid: markerOwner}}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("RemoveMarker as its owner: %v: %s", err, out)
	}
}

// labDir is a directory markerOwner can reach (t.TempDir's parents are of
// mode 0700), removed after the test.
func labDir(t *testing.T) string {
	dir, err := os.MkdirTemp("/var/tmp", "cachestore-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeAll(context.Background(), dir) })
	chmod(t, dir, 0o755)
	lab := filepath.Join(dir, "lab")
	mkdirs(t, lab, "")
	return lab
}

func mkdirs(t *testing.T, dir, rel string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, rel), 0o700); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
}

func chmod(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
