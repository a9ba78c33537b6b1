package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// cgroup is a control group of the session's own, where shellgate may make one:
// its process limit binds every user, root included, and its memory limit
// covers the whole session.
type cgroup struct {
	dirs []string // one per hierarchy (v2: one)
}

// newCgroup puts pid in a new cgroup under our own, limited to procs tasks and,
// when memory > 0, to that many bytes.
func newCgroup(pid, procs int, memory int64) (*cgroup, error) {
	name := fmt.Sprintf("shellgate-%d-%d", os.Getpid(), time.Now().UnixNano())
	own, err := ownCgroups()
	if err != nil {
		return nil, err
	}
	g := &cgroup{}
	if path, ok := own[""]; ok && isV2("/sys/fs/cgroup") {
		dir := filepath.Join("/sys/fs/cgroup", path, name)
		if err := g.make(dir, map[string]string{"pids.max": strconv.Itoa(procs)}, memory, "memory.max", pid, "cgroup.procs"); err == nil {
			return g, nil
		}
	}
	path, ok := own["pids"]
	if !ok {
		return nil, errors.New("no pids cgroup controller")
	}
	if err := g.make(filepath.Join("/sys/fs/cgroup/pids", path, name), map[string]string{"pids.max": strconv.Itoa(procs)}, 0, "", pid, "cgroup.procs"); err != nil {
		return nil, err
	}
	if memory > 0 {
		mpath, ok := own["memory"]
		if !ok {
			g.remove()
			return nil, errors.New("no memory cgroup controller")
		}
		if err := g.make(filepath.Join("/sys/fs/cgroup/memory", mpath, name), nil, memory, "memory.limit_in_bytes", pid, "cgroup.procs"); err != nil {
			g.remove()
			return nil, err
		}
	}
	return g, nil
}

// make creates dir, writes the limits and moves pid in.
func (g *cgroup) make(dir string, limits map[string]string, memory int64, memFile string, pid int, procsFile string) error {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return fmt.Errorf("cgroup: %w", err)
	}
	g.dirs = append(g.dirs, dir)
	if memory > 0 {
		if limits == nil {
			limits = map[string]string{}
		}
		limits[memFile] = strconv.FormatInt(memory, 10)
	}
	for file, v := range limits {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(v), 0); err != nil {
			g.remove()
			return fmt.Errorf("cgroup %s: %w", file, err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, procsFile), []byte(strconv.Itoa(pid)), 0); err != nil {
		g.remove()
		return fmt.Errorf("cgroup: %w", err)
	}
	return nil
}

// remove deletes the cgroups once their processes are gone, which Session.Close
// has waited for; a zombie being reaped may hold one for a moment.
func (g *cgroup) remove() error {
	var errs []error
	for _, dir := range g.dirs {
		var err error
		for range 50 {
			if err = os.Remove(dir); err == nil || os.IsNotExist(err) {
				err = nil
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		errs = append(errs, err)
	}
	g.dirs = nil
	return errors.Join(errs...)
}

// ownCgroups reads /proc/self/cgroup: controller → path ("" for v2).
func ownCgroups() (map[string]string, error) {
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[1] == "" {
			out[""] = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			out[c] = parts[2]
		}
	}
	return out, sc.Err()
}

// isV2 reports whether dir is a cgroup2 mount with the pids controller on.
func isV2(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
	return err == nil && strings.Contains(" "+string(b)+" ", " pids")
}
