package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/shellgate/shellgate/internal/cgroup"

	"golang.org/x/sys/unix"
)

// v1PidsCgroup is this process's cgroup in the v1 pids hierarchy, where a
// session's process limit is on this machine, and whether there is one this
// process may make cgroups in (as root).
func v1PidsCgroup() (string, bool) {
	own, err := cgroup.Own()
	if err != nil || cgroup.IsV2(cgroup.Root) || own["pids"] == "" || os.Getuid() != 0 {
		return "", false
	}
	return filepath.Join(cgroup.Root, "pids", own["pids"]), true
}

// Every start of shellgate initialises its own packages, whatever the
// subcommand: what they build there, a check or a hook pays on every call
// (issue 22), beside the floor of what it links (hello-linked in
// BenchmarkCLI). So their start stays small: a table is a composite literal
// the compiler lays out (policy's catalogues), or is looked up where it is
// (policy.known asks each list), or is built on first use where only some
// commands read it (home's lists). Measured by GODEBUG=inittrace=1 on this
// test binary, which initialises the same packages; its figures are the
// same on every Linux build (other systems fold names, which copies lists).
// Before the catalogues were literals: 855 allocations, 131 KB.
func TestOwnInitIsSmall(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var bytes, allocs int
	var pkgs []string
	for line := range strings.Lines(string(out)) {
		// init PKG @0.5 ms, 0.01 ms clock, 104 bytes, 2 allocs
		f := strings.Fields(line)
		if len(f) != 11 || f[0] != "init" || !strings.HasPrefix(f[1], "github.com/shellgate/shellgate") {
			continue
		}
		b, err1 := strconv.Atoi(f[7])
		a, err2 := strconv.Atoi(f[9])
		if err1 != nil || err2 != nil {
			t.Fatalf("unexpected inittrace line %q", line)
		}
		bytes, allocs = bytes+b, allocs+a
		pkgs = append(pkgs, fmt.Sprintf("%s %d B %d", strings.TrimPrefix(f[1], "github.com/shellgate/shellgate/"), b, a))
	}
	if len(pkgs) < 10 {
		t.Fatalf("found %d of shellgate's packages in the trace:\n%s", len(pkgs), out)
	}
	if allocs > 650 || bytes > 115<<10 {
		t.Errorf("shellgate's packages allocate %d times, %d bytes as the process starts (bound 650, 115 KiB):\n%s",
			allocs, bytes, strings.Join(pkgs, "\n"))
	}
}

// dropFromCache writes the file at path to disk and drops its pages from
// the page cache: its next start reads it back as after a reboot.
func dropFromCache(tb testing.TB, path string) {
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		tb.Fatal(err)
	}
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		tb.Fatal(err)
	}
}
