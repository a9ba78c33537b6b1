package realpath

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
		if got := Resolve(tt.in); got != tt.want {
			t.Errorf("Resolve(%q) = %q, want %q", tt.in, got, tt.want)
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

// FuzzResolve: whatever the input, the result is absolute and clean, and
// resolving it again changes nothing.
func FuzzResolve(f *testing.F) {
	for _, s := range []string{"/dev/fd/../../../etc", "/proc/self/fd/1/..", "/proc/self/cwd/x", "/proc/1/root/", "//a/./b/../c", "/dev/stdout", "/tmp/../..", "/proc/thread-self/task/1/fd/3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if strings.IndexByte(p, 0) >= 0 || len(p) > 512 {
			return
		}
		r := Resolve("/" + p)
		if !strings.HasPrefix(r, "/") || path.Clean(r) != r {
			t.Fatalf("Resolve(%q) = %q: not absolute and clean", "/"+p, r)
		}
		if again := Resolve(r); again != r {
			t.Fatalf("Resolve(%q) = %q, but that resolves to %q", "/"+p, r, again)
		}
	})
}

func TestResolve(t *testing.T) {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	out := filepath.Join(dir, "out")
	root := filepath.Join(dir, "root")
	os.MkdirAll(filepath.Join(out, "x"), 0o755)
	os.MkdirAll(filepath.Join(root, "sub"), 0o755)
	os.Symlink(out, filepath.Join(root, "esc"))
	os.Symlink("../sub", filepath.Join(root, "sub", "rel"))
	os.Symlink("loop", filepath.Join(root, "loop"))
	tests := map[string]string{
		root + "/sub":           root + "/sub",
		root + "/esc/new/file":  out + "/new/file",
		root + "/esc/../victim": dir + "/victim", // ".." after a link leaves from its target
		root + "/new/../sub":    root + "/sub",
		root + "/sub/rel/./rel": root + "/sub",
		root + "/loop/x":        root + "/loop/x",
		"/":                     "/",
		root + "//sub///":       root + "/sub",
	}
	for in, want := range tests {
		if got := Resolve(in); got != want {
			t.Errorf("Resolve(%q) = %q, want %q", in, got, want)
		}
	}
}

// ResolveAll gives what Resolve gives for each path: links in a shared
// directory, in a path's last component, to a relative target, missing
// directories, loops, "..", and paths that are not clean.
func TestResolveAll(t *testing.T) {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	home := filepath.Join(dir, "home")
	out := filepath.Join(dir, "out")
	os.MkdirAll(filepath.Join(home, ".config", "gh"), 0o755)
	os.MkdirAll(filepath.Join(out, "keys"), 0o755)
	os.Symlink(out, filepath.Join(home, ".ssh"))                          // a secret that is a link out
	os.Symlink("../out/keys", filepath.Join(dir, "keys"))                 // relative, climbing
	os.Symlink(filepath.Join(dir, "keys"), filepath.Join(home, ".gnupg")) // a link to a link
	os.Symlink("loop", filepath.Join(home, "loop"))
	os.Symlink(home, filepath.Join(dir, "h")) // the home reached through a link
	var paths []string
	for _, h := range []string{home, filepath.Join(dir, "h"), filepath.Join(dir, "missing")} {
		for _, rel := range []string{".ssh", ".ssh/id_rsa", ".gnupg", ".gnupg/x", ".config/gh", ".config/gh/hosts.yml",
			".aws/credentials", "loop/x", ".config/../.ssh/k", "./.config//gh/", ".docker/config.json"} {
			paths = append(paths, h+"/"+rel)
		}
	}
	paths = append(paths, "/", "relative/path", "/proc/self/cwd", "/proc/self/fd/1", dir+"/keys/k")
	got := ResolveAll(paths)
	for i, p := range paths {
		if want := Resolve(p); got[i] != want {
			t.Errorf("ResolveAll: %q resolves to %q, Resolve to %q", p, got[i], want)
		}
	}
}
