package runner

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shellgate/shellgate/internal/lane"
)

// fileTree is a TreeLauncher whose trees are the command and the processes
// whose PIDs the command wrote to file: they stand for what a cgroup holds
// and neither the group nor the marker finds.
type fileTree struct {
	plainLauncher
	file string
}

func (f fileTree) Tree(pid int) []int {
	all := []int{pid}
	b, _ := os.ReadFile(f.file)
	for _, field := range strings.Fields(string(b)) {
		if p, err := strconv.Atoi(field); err == nil {
			all = append(all, p)
		}
	}
	var live []int
	for _, p := range all {
		if alive(p) {
			live = append(live, p)
		}
	}
	return live
}

func (f fileTree) KillTree(pid int, sig syscall.Signal) {
	for _, p := range f.Tree(pid) {
		syscall.Kill(p, sig)
	}
}

// A TreeLauncher's tree ends with its command on a timeout and at Close, and
// is left running after a normal exit.
func TestTreeLauncher(t *testing.T) {
	lane.Live(t)
	const escape = `setsid -f env -i /bin/sh -c 'echo $$ > %s; exec sleep 60' >/dev/null 2>&1; `
	for _, c := range []struct {
		name, then string
		timeout    time.Duration
		killed     bool
	}{
		{"timeout", "sleep 60", 300 * time.Millisecond, true},
		{"normal exit", "true", 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "pids")
			s := NewSupervisor()
			s.KillGrace = 100 * time.Millisecond
			defer s.Close()
			tree := fileTree{file: file}
			defer tree.KillTree(0, syscall.SIGKILL) // should the test fail
			s.SetLauncher(tree)
			cmd := strings.Replace(escape, "%s", file, 1) + "while [ ! -s " + file + " ]; do sleep 0.01; done; " + c.then
			res, err := s.Run(context.Background(), Spec{Argv: []string{"/bin/sh", "-c", cmd}, Timeout: c.timeout})
			if err != nil {
				t.Fatal(err)
			}
			escaped := waitFile(t, file)
			if c.killed {
				requireGone(t, "after the timeout", escaped...)
				return
			}
			if res.ExitCode == nil || *res.ExitCode != 0 || !alive(escaped[0]) {
				t.Fatalf("exit %+v; escaped process alive: %v", res, alive(escaped[0]))
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			requireGone(t, "after Close", escaped...)
		})
	}
}
