package shellgate_test

import (
	"bufio"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkNamespaceExitFloor: the floor under the sandbox's part of exit on
// EOF. A shell in new user, mount and PID namespaces, as the sandbox's helper
// runs in, with 50 bind mounts (about as many as the helper's view) or none,
// beside a plain shell: each waits on its stdin, and the time from closing it
// to the shell being reaped is its exit, namespace teardown included.
// Medians. No shellgate code runs: what it shows is the kernel's cost.
func BenchmarkNamespaceExitFloor(b *testing.B) {
	ns := &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
	}
	all := *ns // what the helper has without network access
	all.Cloneflags |= syscall.CLONE_NEWIPC | syscall.CLONE_NEWNET
	const mounts = `mount --make-rprivate / && for i in $(seq 50); do mount --bind /usr /mnt || exit 3; done; `
	kinds := []struct {
		name   string
		attr   *syscall.SysProcAttr
		script string
	}{
		{"plain", nil, ""},
		{"ns", ns, ""},
		{"ns-50-mounts", ns, mounts},
		{"ns-ipc-net-50-mounts", &all, mounts},
	}
	exit := func(attr *syscall.SysProcAttr, script string) time.Duration {
		cmd := exec.Command("sh", "-c", script+"echo ready; read x")
		cmd.SysProcAttr = attr
		stdin, _ := cmd.StdinPipe()
		stdout, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			b.Skipf("cannot start %q here: %v", script, err)
		}
		if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || strings.TrimSpace(line) != "ready" {
			cmd.Process.Kill()
			cmd.Wait()
			b.Skipf("%q did not get ready here: %v", script, err)
		}
		start := time.Now()
		stdin.Close()
		cmd.Wait()
		return time.Since(start)
	}
	times := make([][]float64, len(kinds))
	for b.Loop() {
		for i, k := range kinds {
			times[i] = append(times[i], float64(exit(k.attr, k.script))/1e6)
		}
	}
	for i, k := range kinds {
		slices.Sort(times[i])
		b.ReportMetric(times[i][len(times[i])/2], k.name+"-exit-ms")
	}
	b.ReportMetric(0, "ns/op")
}
