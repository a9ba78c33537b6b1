package idmap

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"

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
func stopped() (*os.File, error) {
	runtime.LockOSThread() // the tracer: this thread
	defer runtime.UnlockOSThread()
	pid, err := syscall.ForkExec("/proc/self/exe", []string{holderArg0}, &syscall.ProcAttr{
		Env: []string{"GOMAXPROCS=1"},
		Sys: &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER, UidMappings: idMaps, GidMappings: idMaps, Ptrace: true},
	})
	if err != nil {
		return nil, err
	}
	ns, err := os.Open(fmt.Sprintf("/proc/%d/ns/user", pid))
	unix.Kill(pid, unix.SIGKILL)
	for { // a stop may be reported before the end
		var ws unix.WaitStatus
		if got, werr := unix.Wait4(pid, &ws, unix.WALL, nil); werr != unix.EINTR && (werr != nil || got == pid && (ws.Exited() || ws.Signaled())) {
			break
		}
	}
	return ns, err
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
// otherwise an error says why.
func Others(dir string) (*os.File, error) {
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
	return os.NewFile(uintptr(fd), dir), nil
}

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

// Works reports whether Others(dir) can work here; asked once per process.
func Works(dir string) bool {
	if ok, found := works.Load(dir); found {
		return ok.(bool)
	}
	t, err := Others(dir)
	if err == nil {
		t.Close()
	}
	works.Store(dir, err == nil)
	return err == nil
}

var works sync.Map
