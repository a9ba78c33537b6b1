package runner

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
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

func (f fileTree) Tree(pid int) []int { return treeIn(pid, f.file) }

// treeIn is pid and the processes whose PIDs file holds, those alive.
func treeIn(pid int, file string) []int {
	all := []int{pid}
	b, _ := os.ReadFile(file)
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

// dirTrees is a TreeLauncher and Lister whose tree of command pid is pid and
// the PIDs the command wrote to dir/pid, counting the looks: at each of its
// trees, and at every process it holds (Processes).
type dirTrees struct {
	plainLauncher
	dir              string
	trees, processes *atomic.Int64
}

func (d dirTrees) Tree(pid int) []int {
	d.trees.Add(1)
	return treeIn(pid, filepath.Join(d.dir, strconv.Itoa(pid)))
}

func (d dirTrees) KillTree(pid int, sig syscall.Signal) {
	for _, p := range d.Tree(pid) {
		syscall.Kill(p, sig)
	}
}

func (d dirTrees) Processes() ([]int, bool) {
	d.processes.Add(1)
	return pids(), true
}

// A job left in the command's group is found among the command's tree, not
// among every process the launcher holds (a sandbox session's, every job
// earlier calls left among them); and the trees of earlier calls are not
// each read again at every call that leaves one.
func TestTreeLauncherLooksInTheTree(t *testing.T) {
	lane.Live(t)
	d := dirTrees{dir: t.TempDir(), trees: new(atomic.Int64), processes: new(atomic.Int64)}
	s := NewSupervisor()
	s.KillGrace = 100 * time.Millisecond
	defer s.Close()
	s.SetLauncher(d)
	const runs = 12
	var jobs []int
	for range runs {
		res, err := s.Run(context.Background(), Spec{Argv: []string{"/bin/sh", "-c", `sleep 60 & echo $! > ` + d.dir + `/$$`}})
		if err != nil {
			t.Fatal(err)
		}
		job, _ := strconv.Atoi(strings.TrimSpace(string(must(os.ReadFile(filepath.Join(d.dir, strconv.Itoa(res.PID)))))))
		if !slices.Equal(res.BackgroundPIDs, []int{job}) {
			t.Fatalf("BackgroundPIDs %v, want the job %d", res.BackgroundPIDs, job)
		}
		jobs = append(jobs, job)
	}
	if n := d.processes.Load(); n != 0 {
		t.Errorf("every process the launcher holds was listed %d times", n)
	}
	// One look at each call's tree, and the earlier ones only when they
	// have doubled (at 8): 12 + 8, where each call reading every earlier
	// one read 12 + 66.
	if n := d.trees.Load(); n > runs+8 {
		t.Errorf("%d looks at trees for %d calls", n, runs)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	requireGone(t, "after Close", jobs...)
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
