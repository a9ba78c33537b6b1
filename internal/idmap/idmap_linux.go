package idmap

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// nobody is the id every file of a tree shows as its owner and group.
const nobody = 65534

// holderArg0 makes this executable a process that only holds a user namespace
// (its 0 mapped to nobody) until its stdin closes: an idmapped mount takes
// its mapping from a user namespace's descriptor.
const holderArg0 = "shellgate-idmap-holder"

func init() {
	if len(os.Args) == 1 && os.Args[0] == holderArg0 {
		io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}
}

// mapping is the user namespace of the mapping, made once per process (a
// namespace lives on as long as a descriptor of it is open).
var mapping = sync.OnceValues(newMapping)

func newMapping() (*os.File, error) {
	if ns, err := stopped(); err == nil {
		return ns, nil
	}
	return held()
}

// idMaps are the namespace's: its 0 is nobody.
var idMaps = []syscall.SysProcIDMap{{ContainerID: 0, HostID: nobody, Size: 1}}

// stopped makes the namespace with a child that stops, traced, at its exec,
// before any of the program runs: the namespace is opened from it, and it
// is killed. A holder that runs (held) is this executable started again,
// every package initialised, and a run waited for it to end: ~3 ms of CPU
// for each session start as root. Where tracing is refused (Yama's
// ptrace_scope 3, a container's seccomp profile) the error says so. Should
// the child run after all (its tracer thread gone), it is a holder with no
// stdin, which exits at once.
//
// The child is a vfork (CLONE_VM|CLONE_VFORK), which Go makes of no child
// in a new user namespace: it would wait in the parent's memory for its ID
// maps. This one needs none before its exec, so it waits for nothing, and
// the maps are written once it is stopped there. A fork would copy the
// run's page tables, holding its memory map's lock (which stalls every
// page fault of the run meanwhile), and each page the run then wrote until
// the exec would be copied again.
func stopped() (*os.File, error) {
	runtime.LockOSThread() // the tracer: this thread
	defer runtime.UnlockOSThread()
	pid, err := syscall.ForkExec("/proc/self/exe", []string{holderArg0}, &syscall.ProcAttr{
		Env: []string{"GOMAXPROCS=1"},
		Sys: &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_VM | syscall.CLONE_VFORK, Ptrace: true},
	})
	if err != nil {
		return nil, err
	}
	defer func() {
		unix.Kill(pid, unix.SIGKILL)
		for { // a stop may be reported before the end
			var ws unix.WaitStatus
			if got, werr := unix.Wait4(pid, &ws, unix.WALL, nil); werr != unix.EINTR && (werr != nil || got == pid && (ws.Exited() || ws.Signaled())) {
				break
			}
		}
	}()
	m := fmt.Sprintf("%d %d %d\n", idMaps[0].ContainerID, idMaps[0].HostID, idMaps[0].Size)
	for _, f := range []string{"uid_map", "gid_map"} {
		if err := os.WriteFile(fmt.Sprintf("/proc/%d/%s", pid, f), []byte(m), 0); err != nil {
			return nil, err
		}
	}
	return os.Open(fmt.Sprintf("/proc/%d/ns/user", pid))
}

// held makes the namespace with a holder that runs until its stdin closes.
func held() (*os.File, error) {
	cmd := &exec.Cmd{Path: "/proc/self/exe", Args: []string{holderArg0}, Env: []string{"GOMAXPROCS=1"},
		SysProcAttr: &syscall.SysProcAttr{
			Cloneflags:  syscall.CLONE_NEWUSER,
			UidMappings: idMaps,
			GidMappings: idMaps,
		}}
	hold, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	defer cmd.Wait()
	defer hold.Close()
	return os.Open(fmt.Sprintf("/proc/%d/ns/user", cmd.Process.Pid))
}

// Others returns a detached copy of dir and of every mount beneath it,
// read-only, without set-user-ID or devices, where every file's owner and
// group show as nobody: move it into a mount namespace with move_mount(2).
// It needs CAP_SYS_ADMIN over dir's filesystems (the host's root) and a
// filesystem that supports idmapped mounts (Linux 5.12; ext4, xfs, btrfs …);
// otherwise an error says why. The tree Works made for dir moments ago is
// given, if it is there (see Works).
func Others(dir string) (*os.File, error) {
	if t := probeOf(dir).take(); t != nil {
		return t, nil
	}
	return others(dir)
}

// others makes the tree Others returns.
func others(dir string) (*os.File, error) {
	ns, err := mapping()
	if err != nil {
		return nil, fmt.Errorf("idmap: a user namespace for the mapping: %w", err)
	}
	fd, err := unix.OpenTree(unix.AT_FDCWD, dir, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE)
	if err != nil {
		return nil, fmt.Errorf("idmap: %s: %w", dir, err)
	}
	attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_IDMAP | unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV, Userns_fd: uint64(ns.Fd())}
	if err := unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &attr); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("idmap: %s: %w", dir, err)
	}
	made.Add(1)
	return os.NewFile(uintptr(fd), dir), nil
}

// made counts the trees others made, for tests.
var made atomic.Int64

// Trees is Others of each of dirs, or an error and none.
func Trees(dirs []string) ([]*os.File, error) {
	var trees []*os.File
	for _, d := range dirs {
		t, err := Others(d)
		if err != nil {
			for _, t := range trees {
				t.Close()
			}
			return nil, err
		}
		trees = append(trees, t)
	}
	return trees, nil
}

// Works reports whether Others(dir) can work here; asked once per process
// for each directory, and while one caller asks, the others wait for its
// answer rather than ask too (a session's start asks beside the helper's
// start, and its host facts ask again). The tree made to find out is kept,
// for spareFor, as the next Others(dir): closing a detached tree frees its
// mounts, which waits for an RCU grace period (milliseconds on this
// kernel once the machine has been idle, on the path of a one-shot run's
// set-up), where a tree moved into a session's view frees nothing at its
// close.
func Works(dir string) bool {
	p := probeOf(dir)
	p.once.Do(func() {
		t, err := others(dir)
		p.ok = err == nil
		if err == nil {
			p.keep(t)
		}
	})
	return p.ok
}

// spareFor is how long a tree Works made waits to be taken by Others, after
// which it is closed: a copy of a directory's mounts made longer ago could
// miss one made since.
var spareFor = 2 * time.Second

// A probe is Works's answer for a directory, and the tree it made to find
// out until Others takes it.
type probe struct {
	once sync.Once
	ok   bool

	mu    sync.Mutex
	spare *os.File
	drop  *time.Timer // closes the spare once spareFor has passed
}

var probes sync.Map // directory → *probe

func probeOf(dir string) *probe {
	p, _ := probes.LoadOrStore(dir, new(probe))
	return p.(*probe)
}

// keep keeps t as the spare, until it is taken or spareFor has passed.
func (p *probe) keep(t *os.File) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.spare = t
	p.drop = time.AfterFunc(spareFor, func() {
		if t := p.take(); t != nil {
			t.Close()
		}
	})
}

// take returns the spare, if there is one, and forgets it.
func (p *probe) take() *os.File {
	p.mu.Lock()
	defer p.mu.Unlock()
	t := p.spare
	p.spare = nil
	if p.drop != nil {
		p.drop.Stop()
		p.drop = nil
	}
	return t
}
