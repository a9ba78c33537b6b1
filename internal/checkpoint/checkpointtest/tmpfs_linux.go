package checkpointtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// tmpfsEnv marks the test binary run again by OnSmallTmpfs; its value is
// the lab.
const tmpfsEnv = "SHELLGATE_TEST_SMALL_TMPFS"

// OnSmallTmpfs runs body with fs, a 40 MB tmpfs mounted in a mount
// namespace of the test's own (the test binary run again under unshare,
// running the test named name alone), so that a command can fill the disk
// the project and the store are on. Skipped where no such mount can be had.
func OnSmallTmpfs(t *testing.T, name string, body func(t *testing.T, lab, fs string)) {
	t.Helper()
	if lab := os.Getenv(tmpfsEnv); lab != "" {
		fs := filepath.Join(lab, "fs")
		os.Mkdir(fs, 0o755)
		if err := syscall.Mount("tmpfs", fs, "tmpfs", 0, "size=40m"); err != nil {
			t.Skip("mount:", err)
		}
		defer syscall.Unmount(fs, syscall.MNT_DETACH)
		body(t, lab, fs)
		return
	}
	lab := LabDir(t)
	cmd := exec.Command("unshare", "-m", "--propagation", "private", os.Args[0], "-test.run", "^"+name+"$", "-test.v")
	cmd.Env = append(os.Environ(), tmpfsEnv+"="+lab)
	out, err := cmd.CombinedOutput()
	if strings.Contains(string(out), "--- SKIP") || err != nil && !strings.Contains(string(out), "--- FAIL") {
		t.Skipf("no mount namespace with a tmpfs here: %v\n%s", err, out)
	}
	if err != nil || !strings.Contains(string(out), "--- PASS: "+name) {
		t.Fatalf("%v\n%s", err, out)
	}
}
