package analysis

import (
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

func TestResolveProcAndFd(t *testing.T) {
	base := t.TempDir()
	for _, l := range [][2]string{{"up", "/dev/fd/../../.."}, {"root", "/proc/self/root"}, {"loop", "loop"}} {
		if err := os.Symlink(l[1], filepath.Join(base, l[0])); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct{ in, want string }{
		{"/dev/fd/../../../etc/passwd", "/etc/passwd"},
		{"/dev/fd/../../../proc/sysrq-trigger", "/proc/sysrq-trigger"},
		{base + "/up" + base + "/x", base + "/x"},
		{"/proc/self/root/etc", "/proc/" + selfPID(t) + "/root/etc"}, // never followed: not the command's view
		{base + "/root/etc", "/proc/" + selfPID(t) + "/root/etc"},
		{"/proc/self/cwd/../x", "/proc/" + selfPID(t) + "/x"},
		{"/proc/1/fd/0/..", "/proc/1/fd"},
		{base + "/loop/x", base + "/loop/x"},
	} {
		if got := ResolvePath(tt.in); got != tt.want {
			t.Errorf("ResolvePath(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func selfPID(t *testing.T) string {
	p, err := os.Readlink("/proc/self")
	if err != nil {
		t.Skip("no /proc")
	}
	return p
}

// FuzzResolvePath: whatever the input, the result is absolute and clean, and
// resolving it again changes nothing.
func FuzzResolvePath(f *testing.F) {
	for _, s := range []string{"/dev/fd/../../../etc", "/proc/self/fd/1/..", "/proc/self/cwd/x", "/proc/1/root/", "//a/./b/../c", "/dev/stdout", "/tmp/../..", "/proc/thread-self/task/1/fd/3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if strings.IndexByte(p, 0) >= 0 || len(p) > 512 {
			return
		}
		r := ResolvePath("/" + p)
		if !strings.HasPrefix(r, "/") || path.Clean(r) != r {
			t.Fatalf("ResolvePath(%q) = %q: not absolute and clean", "/"+p, r)
		}
		if again := ResolvePath(r); again != r {
			t.Fatalf("ResolvePath(%q) = %q, but that resolves to %q", "/"+p, r, again)
		}
	})
}
