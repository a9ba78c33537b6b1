package hostscan

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// RootPrivate finds what others may not read, a directory whole, and
// nothing readable.
func TestRootPrivate(t *testing.T) {
	dir := t.TempDir()
	for _, e := range []struct {
		path string
		mode os.FileMode
	}{{"etc", 0o755}, {"etc/shadow", 0o640}, {"etc/passwd", 0o644}, {"etc/ssl", 0o755}, {"etc/ssl/private", 0o700}} {
		full := filepath.Join(dir, e.path)
		var err error
		if e.mode&0o100 != 0 {
			err = os.Mkdir(full, e.mode)
		} else {
			err = os.WriteFile(full, nil, e.mode)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "etc/ssl/private/key.pem"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	got := RootPrivate([]string{filepath.Join(dir, "etc")}, 4, 100)
	want := []string{filepath.Join(dir, "etc/shadow"), filepath.Join(dir, "etc/ssl/private")}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("RootPrivate = %q, want %q", got, want)
	}
}
