package helperstart

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"syscall"
)

// Capabilities the helper keeps (linux/capability.h). Neither os/exec nor
// golang.org/x/sys/unix is imported here: both are initialised late in a
// shellgate binary, and this package's start must come early (see Prestart).
const (
	capDACOverride = 1
	capSetPCap     = 8
	capNetAdmin    = 12
	capSysAdmin    = 21
	capSysResource = 24
)

// A Proc is a started helper.
type Proc struct {
	Process *os.Process
	// Control is shellgate's end of the control socket, a Unix stream socket
	// with SO_PASSCRED set; the caller owns it.
	Control *os.File
	// Network: the helper shares the host's network namespace.
	Network bool
	// Dead is closed when the helper has exited and been reaped.
	Dead chan struct{}

	mu      sync.Mutex
	waitErr error
	stderr  bytes.Buffer // the first 4 KiB the helper printed
}

// Start starts a helper in new user, mount, PID and IPC namespaces, and a new
// network namespace unless network. The thread that starts it stays locked
// until the helper exits, because the parent-death signal follows the thread,
// not the process: the helper dies with shellgate, and the kernel then kills
// the whole session.
func Start(network bool) (*Proc, error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("sandbox: control socket: %w", err)
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "sandbox-control"), os.NewFile(uintptr(fds[1]), "sandbox-control")
	defer theirs.Close()
	if err := syscall.SetsockoptInt(fds[0], syscall.SOL_SOCKET, syscall.SO_PASSCRED, 1); err != nil {
		ours.Close()
		return nil, fmt.Errorf("sandbox: control socket: %w", err)
	}
	null, err := os.Open(os.DevNull)
	if err != nil {
		ours.Close()
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	defer null.Close()
	errR, errW, err := os.Pipe()
	if err != nil {
		ours.Close()
		return nil, fmt.Errorf("sandbox: helper's stderr: %w", err)
	}
	uid, gid := os.Getuid(), os.Getgid()
	flags := uintptr(syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWIPC)
	if !network {
		flags |= syscall.CLONE_NEWNET
	}
	attr := &os.ProcAttr{
		// Nothing of shellgate's own environment reaches the session. One
		// processor keeps the helper's threads few, under the process limit.
		Env:   []string{"GOMAXPROCS=1"},
		Dir:   "/",
		Files: []*os.File{null, null, errW, theirs}, // theirs is CtlFD
		Sys: &syscall.SysProcAttr{
			Cloneflags:  flags,
			UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
			GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
			// Caps survive the exec of a non-root user only as ambient ones.
			AmbientCaps: []uintptr{capSysAdmin, capNetAdmin, capSetPCap, capSysResource, capDACOverride},
			Pdeathsig:   syscall.SIGKILL,
			Setpgid:     true,
		},
	}
	p := &Proc{Control: ours, Network: network, Dead: make(chan struct{})}
	startErr := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
		var err error
		p.Process, err = os.StartProcess("/proc/self/exe", []string{Arg0}, attr)
		errW.Close()
		if err != nil {
			errR.Close()
			startErr <- err
			return
		}
		startErr <- nil
		copied := make(chan struct{})
		go func() {
			p.keepStderr(errR)
			close(copied)
		}()
		state, err := p.Process.Wait()
		if err == nil && !state.Success() {
			err = errors.New(state.String()) // "exit status 2", as os/exec says it
		}
		<-copied // the session's processes may hold the pipe: they are gone now
		p.mu.Lock()
		p.waitErr = err
		p.mu.Unlock()
		close(p.Dead)
	}()
	if err := <-startErr; err != nil {
		ours.Close()
		return nil, fmt.Errorf("sandbox: cannot create the session's namespaces: %w", err)
	}
	return p, nil
}

// Exited returns how the helper ended (nil while it runs, and for exit status
// 0) and the start of what it printed.
func (p *Proc) Exited() (waitErr error, stderr []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.waitErr, bytes.Clone(p.stderr.Bytes())
}

// Kill ends the helper and waits until it is reaped, with every process of
// its session, which the kernel kills with it.
func (p *Proc) Kill() {
	p.Process.Signal(syscall.SIGKILL)
	<-p.Dead
}

// keepStderr reads what the helper prints until it ends, keeping the start
// for error messages.
func (p *Proc) keepStderr(r *os.File) {
	defer r.Close()
	buf := make([]byte, 4096)
	for {
		n, err := r.Read(buf)
		p.mu.Lock()
		if p.stderr.Len() < len(buf) {
			p.stderr.Write(buf[:min(n, len(buf)-p.stderr.Len())])
		}
		p.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// The helper started ahead of need, if any.
var early struct {
	mu      sync.Mutex
	started chan struct{} // closed when the start has ended
	proc    *Proc         // nil: none, or its start failed
}

// Prestart starts a helper for a Take to come, and returns once it runs (a
// failed start is left to the caller's own, which reports it). At most one is
// started ahead; a later call does nothing.
func Prestart(network bool) {
	early.mu.Lock()
	defer early.mu.Unlock()
	if early.started != nil {
		return
	}
	early.started = make(chan struct{})
	early.proc, _ = Start(network)
	close(early.started)
}

// Take returns the prestarted helper if there is one with that network
// setting, waiting for its start to end; one with the other setting is
// discarded. It returns nil when there is none to take.
func Take(network bool) *Proc {
	early.mu.Lock()
	started := early.started
	early.mu.Unlock()
	if started == nil {
		return nil
	}
	<-started
	early.mu.Lock()
	p := early.proc
	early.proc = nil
	early.mu.Unlock()
	if p != nil && p.Network != network {
		p.Control.Close()
		p.Kill()
		return nil
	}
	return p
}

// Discard ends a prestarted helper nobody took, and waits until it is gone.
func Discard() {
	if p := Take(false); p != nil {
		p.Control.Close()
		p.Kill()
	}
}
