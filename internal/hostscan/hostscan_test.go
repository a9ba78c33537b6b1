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

// ClosedWay finds the highest directory on the way to a path that others may
// not enter, beneath dir, and nothing beneath a directory it skips.
func TestClosedWay(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "open/shut/inner/proj"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"open/shut", "open/shut/inner"} {
		if err := os.Chmod(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for path, want := range map[string]string{
		filepath.Join(dir, "open/shut/inner/proj"): filepath.Join(dir, "open/shut"),
		filepath.Join(dir, "open/shut"):            "", // itself bound, not gone through
		filepath.Join(dir, "open/x"):               "",
		"/elsewhere/proj":                          "",
		"":                                         "",
	} {
		if got := ClosedWay(dir, path, []string{"/var/tmp"}); got != want {
			t.Errorf("ClosedWay(%q) = %q, want %q", path, got, want)
		}
	}
	if got := ClosedWay("/var", "/var/tmp/a/b", []string{"/var/tmp"}); got != "" {
		t.Errorf("beneath the view's own /var/tmp: %q", got)
	}
}
