// Package cgroup gives a sandbox session a control group of its own (v1 or
// v2), limited in processes and memory, and each of its commands a group
// inside it that the command is born in, so that killing the command's group
// ends everything it started, wherever it went.
package cgroup

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Group is a control group of the session's own, where shellgate may make one:
// its process limit binds every user, root included, and its memory limit
// covers the whole session.
type Group struct {
	dirs []string // one per hierarchy (v2: one); dirs[0] has the pids controller
	v2   bool
	// unified: on v1, a cgroup of the session's in the cgroup2 hierarchy the
	// machine mounts beside them (Root/unified, "hybrid"), where its commands'
	// cgroups are made instead (see Command); "" where there is none.
	unified string
	// Missing: controller → why the cgroup lacks it ("pids", "memory"). On v2
	// the cgroup may lack them and still hold the session's processes, and
	// give each command a cgroup of its own (makeV2).
	Missing map[string]string
}

// Root is where the cgroup hierarchies are: a cgroup2 mount, or a
// directory of v1 hierarchies, one per controller. Tests point it at a cgroup2
// of their own to run the v2 code on a v1 machine.
var Root = "/sys/fs/cgroup"

// New puts pid in a new cgroup under our own, limited to procs tasks and,
// when memory > 0, to that many bytes.
func New(pid, procs int, memory int64) (*Group, error) {
	g, err := Make(procs, memory)
	if err != nil {
		return nil, err
	}
	if err := g.Join(pid); err != nil {
		g.Remove()
		return nil, err
	}
	return g, nil
}

// Make makes a new cgroup under our own, limited to procs tasks and, when
// memory > 0, to that many bytes, with nothing in it yet: a process is born
// in it (BirthFD, cgroup2) or joins it (Join).
func Make(procs int, memory int64) (*Group, error) {
	name := fmt.Sprintf("shellgate-%d-%d", os.Getpid(), time.Now().UnixNano())
	own, err := Own()
	if err != nil {
		return nil, err
	}
	if IsV2(Root) {
		path, ok := own[""]
		if !ok {
			return nil, errors.New("not in a cgroup2 hierarchy")
		}
		g := &Group{}
		if err := g.makeV2(filepath.Join(Root, path, name), procs, memory); err != nil {
			return nil, err
		}
		return g, nil
	}
	g := &Group{}
	path, ok := own["pids"]
	if !ok {
		return nil, errors.New("no pids cgroup controller")
	}
	if err := g.make(filepath.Join(Root, "pids", path, name), map[string]string{"pids.max": strconv.Itoa(procs)}); err != nil {
		return nil, err
	}
	if memory > 0 {
		mpath, ok := own["memory"]
		if !ok {
			g.Remove()
			return nil, errors.New("no memory cgroup controller")
		}
		if err := g.make(filepath.Join(Root, "memory", mpath, name), map[string]string{"memory.limit_in_bytes": strconv.FormatInt(memory, 10)}); err != nil {
			g.Remove()
			return nil, err
		}
	}
	if path, ok := own[""]; ok {
		g.makeUnified(filepath.Join(Root, "unified"), path, name)
	}
	return g, nil
}

// BirthFD opens the group's directory for a process to be born in by
// clone3(CLONE_INTO_CGROUP) (syscall.SysProcAttr.UseCgroupFD): on cgroup2
// only, where a migration into the group — which waits for an RCU grace
// period once the machine has been idle, 10–28 ms measured — is then never
// needed. ok is false on v1, where Join must move the process.
func (g *Group) BirthFD() (fd int, ok bool) {
	if !g.v2 {
		return -1, false
	}
	fd, err := unix.Open(g.dirs[0], unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	return fd, err == nil
}

// Join moves pid into the group, in every hierarchy.
func (g *Group) Join(pid int) error {
	for _, dir := range g.dirs {
		if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
			return fmt.Errorf("cgroup: %w", err)
		}
	}
	return nil
}

// makeUnified makes, on a hybrid machine, the cgroup2 directory the
// session's commands get their cgroups in: born there by clone3, a command
// costs the helper no migration of its thread, and a migration waits for an
// RCU grace period when the machine has been idle (8–15 ms measured on a
// v1 machine after 200 ms idle; 0.02 ms after a busy moment). Its controllers
// stay in v1: a command born in a cgroup2 cgroup keeps the v1 cgroups of its
// parent, the session's, with their limits. Best effort: without it commands
// get v1 cgroups as before.
func (g *Group) makeUnified(mount, path, name string) {
	if !IsV2(mount) {
		return
	}
	dir := filepath.Join(mount, path, name)
	sweepStale(filepath.Dir(dir))
	if os.Mkdir(dir, 0o755) == nil {
		g.unified = dir
	}
}

// At is the group of an existing cgroup directory dir, under Root: one to
// remove or to give commands groups in.
func At(dir string) *Group { return &Group{dirs: []string{dir}, v2: IsV2(Root)} }

// Dir is the group's directory (the pids controller's, on v1).
func (g *Group) Dir() string { return g.dirs[0] }

// Unified reports whether the group is on cgroup2.
func (g *Group) Unified() bool { return g.v2 }

// makeV2 makes the session's cgroup dir on cgroup2 and sets the limits its
// controllers allow.
//
// Its controllers are those its parent, shellgate's own cgroup, enables in its
// cgroup.subtree_control, which shellgate leaves alone: while processes live in
// a cgroup (shellgate does, and often others: a terminal's scope, a service),
// the kernel refuses to enable memory there (EBUSY), and enabling pids alone
// makes it a thread root, below which a cgroup holds processes only as a
// threaded one, which has no cgroup.kill. So where a cgroup is shellgate's
// but its children get no controllers (a user's scope under systemd), the
// limits they would hold are reported missing — the process limit falls back
// to RLIMIT_NPROC — and the cgroup still does what needs no controller: it
// holds the session, and each command gets one of its own, killed through
// cgroup.kill.
func (g *Group) makeV2(dir string, procs int, memory int64) error {
	sweepStale(filepath.Dir(dir))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return fmt.Errorf("cgroup: %w", err)
	}
	g.dirs, g.v2 = []string{dir}, true
	// limit writes a limit where its controller is.
	limit := func(file, value, controller string) error {
		f, err := os.OpenFile(filepath.Join(dir, file), os.O_WRONLY, 0)
		if errors.Is(err, fs.ErrNotExist) {
			g.Lack(controller, fmt.Sprintf("the %s controller is not enabled in %s", controller, filepath.Join(filepath.Dir(dir), "cgroup.subtree_control")))
			return nil
		}
		if err == nil {
			_, err = f.WriteString(value)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		return nil
	}
	err := limit("pids.max", strconv.Itoa(procs), "pids")
	if err == nil && memory > 0 {
		err = limit("memory.max", strconv.FormatInt(memory, 10), "memory")
	}
	if err != nil {
		g.Remove()
		return fmt.Errorf("cgroup: %w", err)
	}
	return nil
}

// Lack records that the group has no controller, and why.
func (g *Group) Lack(controller, why string) {
	if g.Missing == nil {
		g.Missing = map[string]string{}
	}
	g.Missing[controller] = why
}

// sweepStale removes the empty cgroups that sessions of shellgates now dead
// left in parent — one killed with SIGKILL never removes its own. Only empty
// ones go (rmdir fails on the others), so nothing is killed here.
func sweepStale(parent string) {
	dirs, _ := filepath.Glob(filepath.Join(parent, "shellgate-*-*"))
	for _, dir := range dirs {
		owner, err := strconv.Atoi(strings.Split(filepath.Base(dir), "-")[1])
		if err != nil || owner == os.Getpid() {
			continue
		}
		if _, err := os.Stat("/proc/" + strconv.Itoa(owner)); err == nil {
			continue // its shellgate is alive (or the PID was reused: next time)
		}
		cmds, _ := filepath.Glob(filepath.Join(dir, "cmd-*"))
		for _, cmd := range cmds {
			os.Remove(cmd)
		}
		os.Remove(dir)
	}
}

// make creates dir in a v1 hierarchy and writes the limits there.
func (g *Group) make(dir string, limits map[string]string) error {
	sweepStale(filepath.Dir(dir))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return fmt.Errorf("cgroup: %w", err)
	}
	g.dirs = append(g.dirs, dir)
	for file, v := range limits {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(v), 0); err != nil {
			g.Remove()
			return fmt.Errorf("cgroup %s: %w", file, err)
		}
	}
	return nil
}

// Remove deletes the cgroups, the commands' first, once their processes are
// gone, which Session.Close has waited for; a zombie being reaped may hold one
// for a moment.
func (g *Group) Remove() error {
	var errs []error
	var cmds, dirs []string
	if len(g.dirs) > 0 {
		cmds, _ = filepath.Glob(filepath.Join(g.dirs[0], "cmd-*"))
	}
	if g.unified != "" {
		more, _ := filepath.Glob(filepath.Join(g.unified, "cmd-*"))
		cmds, dirs = append(cmds, more...), []string{g.unified}
	}
	for _, dir := range append(append(cmds, g.dirs...), dirs...) {
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
	g.dirs, g.unified = nil, ""
	return errors.Join(errs...)
}

// Own reads /proc/self/cgroup: controller → path ("" for v2).
func Own() (map[string]string, error) {
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

// IsV2 reports whether dir is a cgroup2 mount.
func IsV2(dir string) bool {
	var st unix.Statfs_t
	return unix.Statfs(dir, &st) == nil && st.Type == unix.CGROUP2_SUPER_MAGIC
}

// Each command of a session gets a cgroup of its own inside the session's
// (dirs[0]), so that a timeout, a cancellation or a job kill ends everything
// the command started, wherever it went: a descendant that leaves the process
// group (setsid) and clears its environment (env -i) cannot leave its cgroup.
// The command is born in it, so it has no moment to fork outside:
//
//   - v2: the helper starts it with clone3(CLONE_INTO_CGROUP) on a descriptor
//     of the cgroup's directory.
//   - v1 with the cgroup2 hierarchy mounted beside it (hybrid): as on v2, in
//     a cgroup of the session's there (makeUnified); the limits stay v1's.
//   - v1 alone: cgroups hold threads, so the helper moves the one thread that
//     forks into the command's cgroup, forks, and moves it back into the
//     session's.
//
// The descriptors are opened here, by shellgate: the kernel checks the
// opener's credentials, not the helper's. Where that fails (a kernel without
// clone3) the helper starts the command as before and shellgate moves it in
// once it knows its PID, which leaves the command a few microseconds to fork
// outside. Without a session cgroup there is none per command either, and such
// a descendant lives until the session ends (Report: procs "rlimit", and
// Missing says why).

// Kinds of command groups, as a spawn message names them.
const (
	V1 = "v1" // fds: the command's tasks file, the session's tasks file
	V2 = "v2" // fd: the command's cgroup directory
)

// FDs is how many descriptors a command group of kind is sent as.
func FDs(kind string) int {
	switch kind {
	case V1:
		return 2
	case V2:
		return 1
	}
	return 0
}

// Command makes the cgroup of command id and opens what the helper needs to
// start the command in it; the caller closes the files once they are sent.
func (g *Group) Command(id uint64) (dir, kind string, files []*os.File, err error) {
	parent := g.dirs[0]
	if g.unified != "" {
		parent = g.unified
	}
	dir = filepath.Join(parent, fmt.Sprintf("cmd-%d", id))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", "", nil, err
	}
	open := func(path string, flag int) {
		if err == nil {
			// Opened as a plain descriptor: os.OpenFile would try (and
			// fail) to add a cgroup file to the runtime's poller, five
			// calls more a command.
			var fd int
			if fd, err = unix.Open(path, flag|unix.O_CLOEXEC, 0); err == nil {
				files = append(files, os.NewFile(uintptr(fd), path))
			} else {
				err = &os.PathError{Op: "open", Path: path, Err: err}
			}
		}
	}
	if g.v2 || g.unified != "" {
		kind = V2
		open(dir, os.O_RDONLY|syscall.O_DIRECTORY)
	} else {
		kind = V1
		open(filepath.Join(dir, "tasks"), os.O_WRONLY)
		open(filepath.Join(g.dirs[0], "tasks"), os.O_WRONLY)
	}
	if err != nil {
		CloseFiles(files)
		os.Remove(dir)
		return "", "", nil, err
	}
	return dir, kind, files, nil
}

func CloseFiles(fs []*os.File) {
	for _, f := range fs {
		f.Close()
	}
}

// Fork runs fork so that the command starts in the cgroup that fds
// (from Command) name, and reports whether it did; see above. It runs on the
// launcher's thread, and fit is false when that thread could not leave the
// command's cgroup again and must not start another command.
func Fork(kind string, fds []int, sys *syscall.SysProcAttr, fork func(*syscall.SysProcAttr) (int, error)) (pid int, placed, fit bool, err error) {
	switch {
	case kind == V2 && len(fds) == 1:
		into := *sys
		into.UseCgroupFD, into.CgroupFD = true, fds[0]
		pid, err = fork(&into)
		switch {
		case err == nil:
			return pid, true, true, nil
		case !errors.Is(err, unix.ENOSYS) && !errors.Is(err, unix.EOPNOTSUPP) && !errors.Is(err, unix.EBUSY) &&
			!errors.Is(err, unix.EPERM) && !errors.Is(err, unix.EACCES) && !errors.Is(err, unix.EINVAL):
			return pid, false, true, err // the program cannot start: no second try
		}
		// No clone3, or the cgroup refused the command: a plain fork, and
		// shellgate moves it in.
	case kind == V1 && len(fds) == 2:
		tid := []byte(strconv.Itoa(unix.Gettid()))
		if _, err := unix.Write(fds[0], tid); err != nil {
			pid, err := fork(sys)
			return pid, false, true, err
		}
		pid, err := fork(sys)
		_, werr := unix.Write(fds[1], tid) // back in the session's cgroup
		return pid, err == nil, werr == nil, err
	}
	pid, err = fork(sys)
	return pid, false, true, err
}

// Tree lists the live processes of the command cgroup dir, as PIDs of
// shellgate's namespace (the kernel translates them for the reader), without
// zombies and without except. A cgroup that is gone has none.
func Tree(dir string, except int) []int {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		pid, err := strconv.Atoi(f)
		if err != nil || pid <= 1 || pid == except || zombie(pid) {
			continue
		}
		pids = append(pids, pid)
	}
	return pids
}

// zombie reports whether pid has exited (or is gone) and awaits its reaper.
func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || i+2 >= len(b) || b[i+2] == 'Z' || b[i+2] == 'X'
}

// KillAll signals the processes of command cgroup dir; on v2 SIGKILL goes
// through cgroup.kill (Linux 5.14+), which also catches a process forked
// meanwhile.
func (g *Group) KillAll(dir string, except int, sig syscall.Signal) {
	if (g.v2 || g.unified != "" && filepath.Dir(dir) == g.unified) && sig == syscall.SIGKILL {
		if os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0) == nil {
			return
		}
	}
	for _, pid := range Tree(dir, except) {
		syscall.Kill(pid, sig)
	}
}
