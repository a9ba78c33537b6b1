package benchfloor

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// peerArg0 is the argv[0] that makes this executable a Peer.
const peerArg0 = "benchfloor-peer"

// peerFD is the peer's end of its socket.
const peerFD = 3

func init() {
	if len(os.Args) == 1 && os.Args[0] == peerArg0 {
		os.Exit(peerMain())
	}
}

// peerMain serves requests on peerFD with blocking reads and writes, so that
// the thread that sleeps is the one that works: one byte in, `true` in a cgroup
// of its own, one byte out ('e' when it failed).
func peerMain() int {
	var b [1]byte
	for {
		if n, err := unix.Read(peerFD, b[:]); n != 1 || err != nil {
			return 0
		}
		if _, err := (Spawn{InCgroup: true}).time(); err != nil {
			b[0] = 'e'
		}
		if _, err := unix.Write(peerFD, b[:]); err != nil {
			return 0
		}
	}
}

type peer struct {
	cmd  *exec.Cmd
	sock *os.File
}

func startPeer(inNamespaces bool) (*Peer, error) {
	if _, err := (Spawn{InCgroup: true}).time(); err != nil {
		return nil, err // no cgroup to make here: the peer could not either
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	mine, theirs := os.NewFile(uintptr(fds[0]), "peer"), os.NewFile(uintptr(fds[1]), "peer")
	defer theirs.Close()
	cmd := &exec.Cmd{Path: exe, Args: []string{peerArg0}, ExtraFiles: []*os.File{theirs}, Stderr: os.Stderr}
	if inNamespaces {
		uid, gid := os.Getuid(), os.Getgid()
		cmd.SysProcAttr = &syscall.SysProcAttr{
			Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID,
			UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
			GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
		}
	}
	if err := cmd.Start(); err != nil {
		mine.Close()
		return nil, err
	}
	return &Peer{peer{cmd: cmd, sock: mine}}, nil
}

func (p *peer) time() (time.Duration, error) {
	b := []byte{'c'}
	start := time.Now()
	if _, err := p.sock.Write(b); err != nil {
		return 0, err
	}
	if _, err := p.sock.Read(b); err != nil {
		return 0, err
	}
	d := time.Since(start)
	if b[0] == 'e' {
		return d, errors.New("the peer could not start true in a cgroup")
	}
	return d, nil
}

func (p *peer) close() error {
	p.sock.Close()
	return p.cmd.Wait()
}
