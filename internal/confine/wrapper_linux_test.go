package confine

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// wrapped runs argv through the wrapper (this test binary) under cfg.
func wrapped(t *testing.T, cfg Config, argv ...string) (string, int) {
	t.Helper()
	line, err := Argv(cfg, 0, argv...)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(line[0], line[1:]...).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return string(out), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), 0
}

// The wrapper confines what it executes: writes land only in the writable
// paths, a file grows no larger than the limit, a probe reports the layers,
// and a layer the probe saw that no longer applies stops the command.
func TestWrapper(t *testing.T) {
	if _, err := llsys.LandlockGetABIVersion(); err != nil {
		t.Skipf("no Landlock here: %v", err)
	}
	lab, err := os.MkdirTemp("/var/tmp", "confine-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(lab) })
	root, outside := filepath.Join(lab, "root"), filepath.Join(lab, "outside")
	for _, d := range []string{root, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cfg := Config{Writable: []string{root}, Devices: []string{"/dev/null"}, Limits: Rlimits{FileSize: 4096}, NoSupervisor: "a test"}

	probe := cfg
	probe.Probe = true
	out, code := wrapped(t, probe, "/bin/false")
	var r Result
	if err := json.Unmarshal([]byte(out), &r); code != 0 || err != nil {
		t.Fatalf("probe: exit %d, %v: %q", code, err, out)
	}
	if !strings.HasPrefix(r.Layers[LayerFS], "landlock-v") || r.Layers[LayerSeccomp] != "filter" {
		t.Errorf("probe layers: %v (missing %q)", r.Layers, r.Missing)
	}

	tests := []struct {
		name, script string
		ok           bool // exit 0
		want         string
	}{
		{"write in the root", "echo in > " + root + "/a && cat " + root + "/a", true, "in\n"},
		{"write outside", "echo out > " + outside + "/b", false, "Permission denied"},
		{"rename out of the root", "echo x > " + root + "/c && mv " + root + "/c " + outside + "/c", false, "Permission denied"},
		{"past the file size limit", "head -c 8192 /dev/zero > " + root + "/big", false, ""},
		{"the device it may write", "echo x > /dev/null && echo ok", true, "ok\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, code := wrapped(t, cfg, "/bin/sh", "-c", tc.script+" 2>&1")
			if (code == 0) != tc.ok || !strings.Contains(out, tc.want) {
				t.Errorf("exit %d, %q; want ok=%v and %q", code, out, tc.ok, tc.want)
			}
		})
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("written outside: %v", entries)
	}
	if fi, err := os.Stat(filepath.Join(root, "big")); err == nil && fi.Size() > 4096 {
		t.Errorf("a file grew to %d bytes past the 4096 limit", fi.Size())
	}

	strict := cfg
	strict.Expect = []string{LayerFS, "no such layer"}
	if out, code := wrapped(t, strict, "/bin/echo", "ran"); code != 126 || strings.Contains(out, "ran") {
		t.Errorf("a layer expected and missing: exit %d, %q; want 126 and nothing run", code, out)
	}
}

// Bad configuration is an error of the wrapper, never a command run.
func TestWrapperBadConfig(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][2]string{{"{not json", "0"}, {"{}", "x"}, {"{}", "-1"}, {"{}", ""}} {
		out, err := exec.Command(exe, wrapperFlag, args[0], args[1], "--", "/bin/echo", "ran").CombinedOutput()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 126 || strings.Contains(string(out), "ran") {
			t.Errorf("config %q, files %q: %v, %q; want exit 126, nothing run", args[0], args[1], err, out)
		}
	}
}

// The wrapper hands the command the descriptors it was told of and no other
// one left open across exec by the process that started it: written through,
// such a one changes a file outside the writable paths.
func TestWrapperHandsOnlyItsFiles(t *testing.T) {
	lab, err := os.MkdirTemp("/var/tmp", "confine-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(lab) })
	victim := filepath.Join(lab, "agent.log")
	// No O_CLOEXEC, as a careless parent leaves it.
	fd, err := syscall.Open(victim, syscall.O_CREAT|syscall.O_WRONLY|syscall.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	handed, err := os.Create(filepath.Join(lab, "handed"))
	if err != nil {
		t.Fatal(err)
	}
	defer handed.Close()
	n := strconv.Itoa(fd)
	line, err := Argv(Config{Writable: []string{lab}, NoSupervisor: "a test"}, 1,
		"/bin/sh", "-c", "echo pwned >&"+n+"; echo handed >&3; ls /proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(line[0], line[1:]...)
	cmd.ExtraFiles = []*os.File{handed}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if slices.Contains(strings.Fields(string(out)), n) {
		t.Errorf("the command holds descriptor %s: %s", n, out)
	}
	if b, _ := os.ReadFile(victim); len(b) != 0 {
		t.Errorf("written through an inherited descriptor: %q", b)
	}
	if b, _ := os.ReadFile(handed.Name()); string(b) != "handed\n" {
		t.Errorf("the handed descriptor: %q", b)
	}
}
