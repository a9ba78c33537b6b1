// Package cgroup gives a sandbox session a control group of its own (v1 or
// v2), limited in processes and memory, and each of its commands a group
// inside it that the command is born in, so that killing the command's group
// ends everything it started, wherever it went.
package cgroup

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Group is a control group of the session's own, where shellgate may make one:
// its process limit binds every user, root included, and its memory limit
// covers the whole session.
//
// The process limit binds the session's commands, not the helper that starts
// them: a command that reaches it (a fork bomb) must leave the helper able to
// make a thread, or the helper goes down and the kernel ends the session with
// every job in it. So the session's cgroup holds two: Cmds (pids.max), below
// which every command's cgroup is made, and, on cgroup2, where a cgroup with
// controllers for its children may hold no process itself, a leaf of the
// helper's own (HelperLeaf). On v1, where cgroups hold threads, the helper is
// in the session's cgroup itself, and the one thread that forks the commands
// (the launcher) is in Cmds: a command is charged to the cgroup of the thread
// that forks it, wherever it is born (LauncherFile).
type Group struct {
	dirs []string // one per hierarchy (v2: one); dirs[0] has the pids controller
	v2   bool
	// cmds: the cgroup of the commands, below dirs[0], whose pids.max is the
	// process limit where the controller is; "" in a group from At.
	cmds string
	// limited: the cgroup whose pids.max binds the commands (cmds, or on
	// cgroup2 dirs[0] where its children get no pids controller); "" where
	// there is none.
	limited string
	// unified: on v1, a cgroup of the session's in the cgroup2 hierarchy the
	// machine mounts beside them (Root/unified, "hybrid"), where its commands'
	// cgroups are made instead (see Command); "" where there is none.
	unified string
	// Missing: controller → why the cgroup lacks it ("pids", "memory"). On v2
	// the cgroup may lack them and still hold the session's processes, and
	// give each command a cgroup of its own (makeV2).
	Missing map[string]string

	// killed: the command cgroups KillAll killed through cgroup.kill, which
	// Reuse refuses (see there).
	killedMu sync.Mutex
	killed   map[string]bool
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
	// The session's pids cgroup holds the helper, unlimited; its child
	// cmds holds the launcher thread and the commands, limited.
	if err := g.make(filepath.Join(Root, "pids", path, name), nil); err != nil {
		return nil, err
	}
	g.cmds = filepath.Join(g.dirs[0], "cmds")
	if err := os.Mkdir(g.cmds, 0o755); err != nil {
		g.Remove()
		return nil, fmt.Errorf("cgroup: %w", err)
	}
	if err := os.WriteFile(filepath.Join(g.cmds, "pids.max"), []byte(strconv.Itoa(procs)), 0); err != nil {
		g.Remove()
		return nil, fmt.Errorf("cgroup pids.max: %w", err)
	}
	g.limited = g.cmds
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

// BirthFD opens the helper's cgroup for the helper to be born in by
// clone3(CLONE_INTO_CGROUP) (syscall.SysProcAttr.UseCgroupFD): on cgroup2
// only, where a migration into the group — which waits for an RCU grace
// period once the machine has been idle, 10–28 ms measured — is then never
// needed. ok is false on v1, where Join must move the process.
func (g *Group) BirthFD() (fd int, ok bool) {
	if !g.v2 {
		return -1, false
	}
	fd, err := unix.Open(g.HelperLeaf(), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	return fd, err == nil
}

// ForkInto runs fork, which starts the session's helper from the calling
// thread, so that on v1 the helper is born in the group (HelperLeaf, and
// the memory controller's cgroup) with no migration of its process: the
// thread, locked to it by the caller (runtime.LockOSThread), moves itself
// alone into the group, forks — a child is born in the cgroups of the
// thread that forks it — and moves itself back. It writes "0" to each tasks
// file, the writing thread, which the kernel moves without the global lock
// of every thread group (cgroup_threadgroup_rwsem) that moving a process
// (Join) takes for writing, and whose taking waits for an RCU grace period
// once the machine has been idle: 7–15 ms measured here after 300 ms idle,
// on the one-shot run's path, against ~0.4 ms for the thread's two moves
// and back.
//
// born reports whether the helper was born in every cgroup of the group;
// where it was not (a cgroup refused the thread; cgroup2, whose birth is
// BirthFD's), Join must move it. fit is false when the thread could not go
// back to its own cgroups: it must not run anything else, and the caller
// lets it end (returns without runtime.UnlockOSThread).
func (g *Group) ForkInto(fork func() error) (born, fit bool, err error) {
	if g.v2 || len(g.dirs) == 0 {
		return false, true, fork()
	}
	mine, oerr := own("/proc/thread-self/cgroup")
	var back []string // where the thread goes back to, for each cgroup it entered
	in := oerr == nil
	for i, dir := range g.dirs {
		if !in {
			break
		}
		if i == 0 {
			dir = g.HelperLeaf()
		}
		// The hierarchy's directory under Root is its controller's name
		// (Make's "pids", "memory").
		rel, rerr := filepath.Rel(Root, dir)
		ctl, _, _ := strings.Cut(rel, string(filepath.Separator))
		home, ok := mine[ctl]
		if rerr != nil || !ok {
			in = false
			break
		}
		if enterSelf(filepath.Join(dir, "tasks")) != nil {
			in = false
			break
		}
		back = append(back, filepath.Join(Root, ctl, home, "tasks"))
	}
	if in {
		err = fork()
	}
	fit = true
	for _, tasks := range back {
		if enterSelf(tasks) != nil {
			fit = false
		}
	}
	if !in {
		// Born where the thread is (its own cgroups, or some of the
		// group's where it could not leave them), and moved by Join.
		return false, fit, fork()
	}
	return err == nil, fit, err
}

// enterSelf moves the calling thread alone into the v1 cgroup of tasks file
// tasks ("0": the writer, see ForkInto).
func enterSelf(tasks string) error {
	fd, err := unix.Open(tasks, unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	_, err = unix.Write(fd, []byte("0"))
	return err
}

// HelperLeaf is the cgroup the session's helper is in: on cgroup2 a leaf of
// its own beside the commands' (the session's cgroup gives its children
// controllers, so it may hold no process itself); on v1 the session's
// cgroup.
func (g *Group) HelperLeaf() string {
	if g.v2 && g.cmds != "" {
		return filepath.Join(g.dirs[0], "helper")
	}
	return g.dirs[0]
}

// Join moves pid into the group, in every hierarchy: the helper into its
// cgroup (HelperLeaf).
func (g *Group) Join(pid int) error {
	for i, dir := range g.dirs {
		if i == 0 {
			dir = g.HelperLeaf()
		}
		if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
			return fmt.Errorf("cgroup: %w", err)
		}
	}
	return nil
}

// LauncherFile opens, on v1, the tasks file of the commands' cgroup, for the
// helper's launcher thread to write "0" to once it is in the session's
// cgroup: it moves itself alone (a single thread's move takes no lock of
// every thread group, so it waits for no RCU grace period), and every
// command it forks is charged to the commands' cgroup and its limit, not to
// the helper's. nil on cgroup2, where each command is born below Cmds, and
// in a group from At.
func (g *Group) LauncherFile() (*os.File, error) {
	if g.v2 || g.cmds == "" {
		return nil, nil
	}
	return os.OpenFile(filepath.Join(g.cmds, "tasks"), os.O_WRONLY, 0)
}

// Unlimit is the way back where the launcher thread could not join Cmds:
// the limit then binds the session's cgroup as a whole, the helper's
// threads included, as it did before Cmds.
func (g *Group) Unlimit(procs int) error {
	if g.v2 || g.cmds == "" {
		return nil
	}
	if err := os.WriteFile(filepath.Join(g.dirs[0], "pids.max"), []byte(strconv.Itoa(procs)), 0); err != nil {
		return fmt.Errorf("cgroup pids.max: %w", err)
	}
	g.limited = g.dirs[0]
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

// Cmds is the cgroup the commands' cgroups are made in (on a hybrid machine,
// the v1 one that holds the launcher thread): the process limit's.
func (g *Group) Cmds() string { return cmp.Or(g.cmds, g.dirs[0]) }

// LimitHits counts the forks the process limit refused so far in the
// commands' cgroups: the "max" of pids.events, which on v1 counts the forks
// of the cgroup's own tasks (the launcher's commands, on a hybrid machine)
// and on cgroup2 those the limit refused anywhere below it; on v1 alone,
// where each command's cgroup is a pids one below Cmds, trees adds theirs.
// ok is false where there is no limit to watch.
func (g *Group) LimitHits(trees []string) (n int64, ok bool) {
	if g.limited == "" {
		return 0, false
	}
	n, ok = pidsMax(g.limited)
	if !g.v2 && g.unified == "" {
		for _, t := range trees {
			m, _ := pidsMax(t)
			n += m
		}
	}
	return n, ok
}

// AtLimit reports whether the commands hold their process limit now, or
// nearly (within a sixteenth of it: a bomb's processes come and go): what a
// refused fork left behind, unlike one whose command has since ended or
// given the processes back. current is how many processes and threads are
// charged to the limit, the exited ones not yet reaped among them.
func (g *Group) AtLimit() (current int64, at bool) {
	if g.limited == "" {
		return 0, false
	}
	read := func(file string) (int64, bool) {
		b, err := os.ReadFile(filepath.Join(g.limited, file))
		if err != nil {
			return 0, false
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		return n, err == nil
	}
	current, ok := read("pids.current")
	limit, ok2 := read("pids.max") // "max": no limit here
	return current, ok && ok2 && current >= limit-limit/16
}

// pidsMax reads the "max" count of dir's pids.events.
func pidsMax(dir string) (int64, bool) {
	b, err := os.ReadFile(filepath.Join(dir, "pids.events"))
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "max "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// Tasks counts the threads in command cgroup dir. An exited one its parent
// has not reaped yet is not listed, though the pids limit still counts it.
func Tasks(dir string) int {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.threads"))
	if err != nil {
		if b, err = os.ReadFile(filepath.Join(dir, "tasks")); err != nil {
			return 0
		}
	}
	return bytes.Count(b, []byte("\n"))
}

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
//
// The session's cgroup holds two, made before anything is in it: helper, the
// helper's leaf, and cmds, the commands' cgroup, given the pids controller by
// the session's cgroup.subtree_control (allowed: the session's cgroup holds
// no process) and the process limit. Where that cannot be, the limit is the
// session's cgroup's, the helper's threads counted with the commands.
func (g *Group) makeV2(dir string, procs int, memory int64) error {
	sweepStale(filepath.Dir(dir))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return fmt.Errorf("cgroup: %w", err)
	}
	g.dirs, g.v2 = []string{dir}, true
	g.cmds = filepath.Join(dir, "cmds")
	for _, d := range []string{g.HelperLeaf(), g.cmds} {
		if err := os.Mkdir(d, 0o755); err != nil {
			g.Remove()
			return fmt.Errorf("cgroup: %w", err)
		}
	}
	at := dir
	if _, err := os.Stat(filepath.Join(dir, "pids.max")); err == nil &&
		os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte("+pids"), 0) == nil {
		at = g.cmds
	}
	// limit writes a limit where its controller is.
	limit := func(dir, file, value, controller string) error {
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
	err := limit(at, "pids.max", strconv.Itoa(procs), "pids")
	if _, lacks := g.Missing["pids"]; err == nil && !lacks {
		g.limited = at
	}
	if err == nil && memory > 0 {
		err = limit(dir, "memory.max", strconv.FormatInt(memory, 10), "memory")
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
		for _, d := range tree(dir) {
			os.Remove(d)
		}
	}
}

// tree lists the cgroups of a session's cgroup dir, children first: the
// commands' (in cmds, or in dir itself in a group from At), cmds, the
// helper's leaf, dir.
func tree(dir string) []string {
	var dirs []string
	for _, pattern := range []string{"cmds/cmd-*", "cmd-*"} {
		more, _ := filepath.Glob(filepath.Join(dir, pattern))
		dirs = append(dirs, more...)
	}
	for _, sub := range []string{"cmds", "helper"} {
		if _, err := os.Stat(filepath.Join(dir, sub)); err == nil {
			dirs = append(dirs, filepath.Join(dir, sub))
		}
	}
	return append(dirs, dir)
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
	var dirs []string
	for _, dir := range g.dirs {
		dirs = append(dirs, tree(dir)...)
	}
	if g.unified != "" {
		dirs = append(dirs, tree(g.unified)...)
	}
	for _, dir := range dirs {
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
	g.dirs, g.unified, g.cmds, g.limited = nil, "", "", ""
	return errors.Join(errs...)
}

// Own reads /proc/self/cgroup: controller → path ("" for v2).
func Own() (map[string]string, error) { return own("/proc/self/cgroup") }

// own reads a cgroup file of /proc (a process's or a thread's).
func own(file string) (map[string]string, error) {
	f, err := os.Open(file)
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
//     session's. It writes "0" (the writing thread), not its thread id: the
//     kernel moves the current thread alone without the global lock of every
//     thread group (cgroup_threadgroup_rwsem), whose taking for writing
//     waits for an RCU grace period, 8-15 ms on an idle machine, twice a
//     command; a thread id takes it, as LauncherFile's move does not.
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
	V1 = "v1" // fds: the command's tasks file, the tasks file of the commands' cgroup (Cmds)
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
	parent := g.Cmds()
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
		open(filepath.Join(g.Cmds(), "tasks"), os.O_WRONLY)
	}
	if err != nil {
		CloseFiles(files)
		os.Remove(dir)
		return "", "", nil, err
	}
	return dir, kind, files, nil
}

// Reuse opens command cgroup dir again, as Command opens a new one, for
// another command once every process of its own has exited: ok is false
// while one lives (cgroup.events says "populated 1"), or where dir is a v1
// cgroup. A cgroup2 command cgroup keeps nothing of its command's but its
// processes — the process limit and its count of refused forks are the
// commands' cgroup's (LimitHits reads Cmds', or on a hybrid machine the v1
// one's), and cgroup.kill is an act, not a state — so once empty it is as
// good as a new one, without a mkdir on the way to the next command's start
// and an rmdir (the kernel then frees its state in a worker) after this
// one's end. Nothing can make it populated again meanwhile: only a process
// in it forks into it, and only a holder of the directory's descriptor
// starts one there (CLONE_INTO_CGROUP). On v1 alone a command's cgroup
// counts its own refused forks (pids.events), which LimitHits adds up: a
// reused one would bring back its last command's.
//
// Nor a cgroup KillAll killed through cgroup.kill: the kernel (6.18 here)
// kills at once every process later born into it by CLONE_INTO_CGROUP (as
// its code reads, the fork compares the cgroup's kill sequence, which the
// kill moved on, with one taken at the fork's start from the forking
// thread's cgroup).
//
// kept, when not nil, holds dir and its cgroup.events open already (Keep):
// they are read, not opened again, and files is kept's directory, still
// kept's to close.
func (g *Group) Reuse(dir string, kept *Kept) (kind string, files []*os.File, ok bool) {
	if !g.v2 && (g.unified == "" || filepath.Dir(dir) != g.unified) {
		return "", nil, false
	}
	g.killedMu.Lock()
	killed := g.killed[dir]
	g.killedMu.Unlock()
	if killed {
		return "", nil, false
	}
	if kept != nil {
		if !kept.unpopulated() {
			return "", nil, false
		}
		return V2, []*os.File{kept.dir}, true
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", nil, false
	}
	if !unpopulated(fd) {
		unix.Close(fd)
		return "", nil, false
	}
	return V2, []*os.File{os.NewFile(uintptr(fd), dir)}, true
}

// Kept is a cgroup2 command cgroup's directory, and its cgroup.events once
// read, held open from one of its commands to the next, so that the look
// at its emptiness once its command has exited (Reuse), which is on the way
// from that exit to the call's result, walks no path: after an idle gap of
// 10 or 200 ms, the look by the cgroup's path took 64-115 us here, through
// what is kept 21-30 us (BenchmarkReuseAfterGap, load 3).
type Kept struct {
	dir    *os.File
	events int // its cgroup.events; -1 until first read
}

// Keep holds dir, the directory of a cgroup2 command cgroup from Command or
// Reuse, for the cgroup's next Reuse; Close lets it go.
func Keep(dir *os.File) *Kept { return &Kept{dir: dir, events: -1} }

// unpopulated is the package's unpopulated through the held descriptors: a
// seq file of the kernel's reads its state anew from offset 0.
func (k *Kept) unpopulated() bool {
	if k.events < 0 {
		fd, err := unix.Openat(int(k.dir.Fd()), "cgroup.events", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return false
		}
		k.events = fd
	}
	var buf [128]byte
	n, err := unix.Pread(k.events, buf[:], 0)
	return err == nil && n > 0 && notPopulated(buf[:n])
}

// Close closes what k holds.
func (k *Kept) Close() {
	if k == nil {
		return
	}
	k.dir.Close()
	if k.events >= 0 {
		unix.Close(k.events)
		k.events = -1
	}
}

// unpopulated reports whether the cgroup2 cgroup of directory fd holds no
// live process (its cgroup.events, read through fd: "populated 0"), the
// kernel's own test before it lets the directory go (rmdir: EBUSY).
func unpopulated(dir int) bool {
	fd, err := unix.Openat(dir, "cgroup.events", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	var buf [128]byte
	n, err := unix.Read(fd, buf[:])
	return err == nil && n > 0 && notPopulated(buf[:n])
}

// notPopulated says whether events, a cgroup.events' content, says
// "populated 0".
func notPopulated(events []byte) bool {
	for line := range strings.Lines(string(events)) {
		if v, ok := strings.CutPrefix(line, "populated "); ok {
			return strings.TrimSpace(v) == "0"
		}
	}
	return false
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
		self := []byte("0") // this thread alone, without the global lock (above)
		if _, err := unix.Write(fds[0], self); err != nil {
			pid, err := fork(sys)
			return pid, false, true, err
		}
		pid, err := fork(sys)
		_, werr := unix.Write(fds[1], self) // back in the session's cgroup
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
		g.killedMu.Lock()
		if g.killed == nil {
			g.killed = map[string]bool{}
		}
		g.killed[dir] = true // before the kill: a Reuse meanwhile refuses it
		g.killedMu.Unlock()
		if os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0) == nil {
			return
		}
	}
	for _, pid := range Tree(dir, except) {
		syscall.Kill(pid, sig)
	}
}
