package unixgate

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// BenchmarkCalls times the calls the filter hands to the supervisor, on a
// thread guarded by it and on one that is not: a TCP connect (another
// family: performed as is), a connect to a unix socket (checked first; here
// every unix socket of the host's network namespace is listed, in a session
// only the session's), and sendmsg on a connected datagram socket (no
// address, still handed over), each made by a process of its own, whose
// start is in the figure. Compare guarded and plain of one call with
// -test.benchtime=Nx.
func BenchmarkCalls(b *testing.B) {
	dir, err := os.MkdirTemp("/var/tmp", "unixgate-bench-")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(dir)
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer tcp.Close()
	sock, err := net.Listen("unix", filepath.Join(dir, "s.sock"))
	if err != nil {
		b.Fatal(err)
	}
	defer sock.Close()
	for _, ln := range []net.Listener{tcp, sock} {
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
	}
	port := strconv.Itoa(tcp.Addr().(*net.TCPAddr).Port)
	for _, name := range []string{"tcp-connect", "unix-connect", "sendmsg"} {
		for _, guarded := range []bool{false, true} {
			mode := "plain"
			if guarded {
				mode = "guarded"
			}
			b.Run(name+"/"+mode, func(b *testing.B) {
				done := make(chan error)
				go func() {
					// The thread is guarded for good: it ends with this
					// goroutine, which never unlocks it.
					runtime.LockOSThread()
					if guarded {
						unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
						if _, err := Guard(0, ""); err != nil {
							done <- err
							return
						}
					}
					cmd := exec.Command(os.Args[0])
					cmd.Env = append(os.Environ(), roleEnv+"=caller", "CALL="+name, "N="+strconv.Itoa(b.N), "PORT="+port, "SOCK="+filepath.Join(dir, "s.sock"))
					cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
					b.ResetTimer()
					done <- cmd.Run()
				}()
				if err := <-done; err != nil {
					b.Fatal(err)
				}
			})
		}
	}
}

// callMany makes the benchmark's calls, in a process of its own: the
// supervisor's callers are commands, never its own threads.
func callMany() int {
	n, _ := strconv.Atoi(os.Getenv("N"))
	port, _ := strconv.Atoi(os.Getenv("PORT"))
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	call := map[string]func() error{
		"tcp-connect": func() error {
			fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
			if err != nil {
				return err
			}
			defer unix.Close(fd)
			return unix.Connect(fd, &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}})
		},
		"unix-connect": func() error {
			fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
			if err != nil {
				return err
			}
			defer unix.Close(fd)
			return unix.Connect(fd, &unix.SockaddrUnix{Name: os.Getenv("SOCK")})
		},
		"sendmsg": func() error {
			if _, err := unix.SendmsgN(pair[0], make([]byte, 64), nil, nil, 0); err != nil {
				return err
			}
			_, _, err := unix.Recvfrom(pair[1], make([]byte, 64), 0)
			return err
		},
	}[os.Getenv("CALL")]
	for i := 0; i < n; i++ {
		if err := call(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return 0
}
