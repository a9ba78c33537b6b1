//go:build unix

package output

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestDefaultSpillDir(t *testing.T) {
	dir := DefaultSpillDir()
	if filepath.Dir(dir) != filepath.Clean(os.TempDir()) || filepath.Base(dir) != "shellgate-spill-"+strconv.Itoa(os.Getuid()) {
		t.Errorf("DefaultSpillDir() = %q", dir)
	}
}

func TestCheckPrivateDir(t *testing.T) {
	t.Parallel()
	base := t.TempDir()

	loose := filepath.Join(base, "loose")
	os.Mkdir(loose, 0o755)
	os.Chmod(loose, 0o755) // whatever the umask
	if err := checkPrivateDir(loose); err != nil {
		t.Fatal(err)
	}
	if info, _ := os.Stat(loose); info.Mode().Perm() != 0o700 {
		t.Errorf("loose dir left with mode %v, want 0700", info.Mode().Perm())
	}

	target := filepath.Join(base, "target")
	os.Mkdir(target, 0o700)
	link := filepath.Join(base, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := checkPrivateDir(link); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("checkPrivateDir(symlink) = %v, want a not-a-directory error", err)
	}

	if os.Getuid() == 0 {
		foreign := filepath.Join(base, "foreign")
		os.Mkdir(foreign, 0o700)
		if err := os.Chown(foreign, 12345, 12345); err != nil {
			t.Fatal(err)
		}
		if err := checkPrivateDir(foreign); err == nil || !strings.Contains(err.Error(), "owned by uid 12345") {
			t.Errorf("checkPrivateDir(foreign) = %v, want an ownership error", err)
		}
	}
}
