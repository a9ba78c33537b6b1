package unixgate

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"go.uber.org/goleak"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/shellgate/shellgate/internal/notify"
	"github.com/shellgate/shellgate/internal/seccomp"
	"golang.org/x/sys/unix"
)

// The test binary plays three parts, chosen by roleEnv: the test (the
// host), a session (a user and network namespace of its own, whose locked
// thread is guarded and forks the attacker) and the attacker.
const roleEnv = "UNIXGATE_TEST_ROLE"

func TestMain(m *testing.M) {
	switch os.Getenv(roleEnv) {
	case "session":
		os.Exit(session())
	case "attacker":
		os.Exit(attacker(os.Getenv("LAB")))
	case "caller":
		os.Exit(callMany())
	}
	// A benchmark guards threads of this process for good: their
	// supervisors serve until the process ends.
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("github.com/shellgate/shellgate/internal/notify.receive"))
}

// session guards a locked thread, says so, waits for the host to bind its
// sockets, then runs the attacker from that thread.
func session() int {
	runtime.LockOSThread()
	unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
	how, err := Guard(0, "")
	fmt.Println("guard:", how, err)
	if err != nil {
		return 1
	}
	bufio.NewReader(os.Stdin).ReadString('\n')
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), roleEnv+"=attacker")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Println("attacker:", err)
		return 1
	}
	return 0
}

// A victim is a host socket bound after the session started, which records
// every connection and datagram that reaches it.
type victim struct {
	fd   int
	hits atomic.Int32
	done sync.WaitGroup
}

func bindVictim(t *testing.T, path string, typ int) *victim {
	fd, err := unix.Socket(unix.AF_UNIX, typ|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Bind(fd, &unix.SockaddrUnix{Name: path}); err != nil {
		t.Fatal(err)
	}
	v := &victim{fd: fd}
	if typ != unix.SOCK_DGRAM {
		unix.Listen(fd, 64)
	}
	v.done.Add(1)
	go func() {
		defer v.done.Done()
		for {
			if !serveOne(fd, typ) {
				return
			}
			v.hits.Add(1)
		}
	}()
	return v
}

// serveOne takes one datagram, or one connection and what it sends; false
// when the socket is shut.
func serveOne(fd, typ int) bool {
	buf := make([]byte, 64)
	if typ == unix.SOCK_DGRAM {
		n, _, err := unix.Recvfrom(fd, buf, 0)
		return err == nil && n > 0
	}
	c, _, err := unix.Accept(fd)
	if err != nil {
		return false
	}
	unix.Read(c, buf)
	unix.Close(c)
	return true
}

func (v *victim) close() int {
	unix.Shutdown(v.fd, unix.SHUT_RDWR)
	unix.Close(v.fd)
	v.done.Wait()
	return int(v.hits.Load())
}

// Host sockets bound after the session started are out of the session's
// reach by every spelling of their path and every call that sends to one,
// while the session's own servers, stream, datagram and seqpacket, answer
// by any path, also while a symlink is swapped between the two.
func TestHostSocketsUnreachable(t *testing.T) {
	lab, err := os.MkdirTemp("/var/tmp", "unixgate-test-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(lab)
	for _, d := range []string{"host", "in", "att"} {
		os.Mkdir(filepath.Join(lab, d), 0o755)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), roleEnv+"=session", "LAB="+lab)
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
	}
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Skip("no user and network namespace here:", err)
	}
	out := bufio.NewScanner(stdout)
	if !out.Scan() || out.Text() != "guard: supervisor <nil>" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the session's guard: %q", out.Text())
	}
	victims := map[string]*victim{}
	for name, typ := range map[string]int{"st.sock": unix.SOCK_STREAM, "dg.sock": unix.SOCK_DGRAM, "sp.sock": unix.SOCK_SEQPACKET} {
		victims[name] = bindVictim(t, filepath.Join(lab, "host", name), typ)
	}
	stdin.Write([]byte("go\n"))
	results := map[string]string{}
	for out.Scan() {
		t.Log(out.Text())
		if name, res, ok := strings.Cut(out.Text(), ": "); ok {
			results[name] = res
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("session: %v", err)
	}
	for name, v := range victims {
		if n := v.close(); n != 0 {
			t.Errorf("host socket %s was reached %d times from the session", name, n)
		}
	}
	for _, a := range attacks {
		if got := results[a.name]; got != "refused" {
			t.Errorf("%s: %s, want refused", a.name, got)
		}
	}
	for _, name := range []string{"own stream", "own datagram sendto", "own datagram sendmsg", "own seqpacket", "own stream by symlink", "own datagram sendmmsg", "own stream rights", "own stream under signals"} {
		if got := results[name]; got != "ok" {
			t.Errorf("%s: %s, want ok", name, got)
		}
	}
	if got := results["race"]; !strings.HasPrefix(got, "ok ") {
		t.Errorf("race: %s", got)
	}
}

// Guard is Plan carried out for the calling thread alone, as the tests
// need it: it installs the
// filter and serves it from this process's other threads.
func Guard(landlockABI int, noSupervisor string) (string, error) {
	how, supervise, err := Plan(landlockABI, noSupervisor)
	if !supervise {
		return how, err
	}
	listener, err := seccomp.InstallNotify(seccomp.UnixSends)
	if err != nil {
		return "", Unsupervised(landlockABI, err)
	}
	// A goroutine never runs on a locked thread, and Go makes new threads
	// from a clean one: the filter stays on the caller.
	go notify.Serve(listener, Handle)
	return how, nil
}

// An attack tries to reach a host socket from the session; it returns the
// error it met, nil when it got through.
type attack struct {
	name string
	try  func(lab string) error
}

var attacks = []attack{
	{"connect", func(lab string) error { return dial(unix.SOCK_STREAM, lab+"/host/st.sock") }},
	{"connect by symlink", func(lab string) error {
		os.Symlink(lab+"/host/st.sock", lab+"/att/link")
		return dial(unix.SOCK_STREAM, lab+"/att/link")
	}},
	{"connect by /proc/self/fd", func(lab string) error {
		dir, err := unix.Open(lab+"/host", unix.O_PATH, 0)
		if err != nil {
			return err
		}
		defer unix.Close(dir)
		return dial(unix.SOCK_STREAM, "/proc/self/fd/"+strconv.Itoa(dir)+"/st.sock")
	}},
	{"connect relative after chdir", func(lab string) error {
		wd, _ := os.Getwd()
		defer os.Chdir(wd)
		os.Chdir(lab + "/host")
		return dial(unix.SOCK_STREAM, "st.sock")
	}},
	{"connect by hard link", func(lab string) error {
		if err := os.Link(lab+"/host/st.sock", lab+"/att/hard.sock"); err != nil {
			return fmt.Errorf("setup: %w", err)
		}
		return dial(unix.SOCK_STREAM, lab+"/att/hard.sock")
	}},
	{"seqpacket connect", func(lab string) error { return dial(unix.SOCK_SEQPACKET, lab+"/host/sp.sock") }},
	{"datagram connect", func(lab string) error { return dial(unix.SOCK_DGRAM, lab+"/host/dg.sock") }},
	{"datagram sendto", func(lab string) error {
		return unsent(func(fd int) error {
			return unix.Sendto(fd, []byte("x"), 0, &unix.SockaddrUnix{Name: lab + "/host/dg.sock"})
		})
	}},
	{"datagram sendmsg", func(lab string) error {
		return unsent(func(fd int) error {
			_, err := unix.SendmsgN(fd, []byte("x"), nil, &unix.SockaddrUnix{Name: lab + "/host/dg.sock"}, 0)
			return err
		})
	}},
	{"datagram sendmmsg", func(lab string) error {
		return unsent(func(fd int) error { return sendmmsg(fd, lab+"/host/dg.sock") })
	}},
}

// dial connects a socket of typ to path and sends a byte.
func dial(typ int, path string) error {
	fd, err := unix.Socket(unix.AF_UNIX, typ, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := unix.Connect(fd, &unix.SockaddrUnix{Name: path}); err != nil {
		return err
	}
	_, err = unix.Write(fd, []byte("x"))
	return err
}

// unsent runs send on an unconnected datagram socket.
func unsent(send func(fd int) error) error {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return send(fd)
}

// sendmmsg sends one datagram to path with sendmmsg(2).
func sendmmsg(fd int, path string) error {
	var sa unix.RawSockaddrUnix
	sa.Family = unix.AF_UNIX
	for i := range path {
		sa.Path[i] = int8(path[i])
	}
	data := []byte("x")
	iov := unix.Iovec{Base: &data[0]}
	iov.SetLen(1)
	var msgs [1]struct {
		hdr unix.Msghdr
		len uint32
		_   uint32
	}
	msgs[0].hdr = unix.Msghdr{Name: (*byte)(unsafe.Pointer(&sa)), Namelen: uint32(2 + len(path) + 1), Iov: &iov, Iovlen: 1}
	n, _, errno := unix.Syscall6(unix.SYS_SENDMMSG, uintptr(fd), uintptr(unsafe.Pointer(&msgs[0])), 1, 0, 0, 0)
	runtime.KeepAlive(data)
	if errno != 0 {
		return errno
	}
	if n != 1 || msgs[0].len != 1 {
		return fmt.Errorf("sendmmsg sent %d, msg_len %d", n, msgs[0].len)
	}
	return nil
}

// attacker runs in the session: it tries every attack, then uses servers
// of its own.
func attacker(lab string) int {
	for _, a := range attacks {
		res := "refused"
		if err := a.try(lab); err == nil {
			res = "got through"
		} else if err != unix.EACCES {
			res = err.Error()
		}
		fmt.Printf("%s: %s\n", a.name, res)
	}
	report := func(name string, err error) {
		if err != nil {
			fmt.Printf("%s: %v\n", name, err)
		} else {
			fmt.Printf("%s: ok\n", name)
		}
	}
	in := lab + "/in/"
	stream, dgram, seq := ownServer(in+"st.sock", unix.SOCK_STREAM), ownServer(in+"dg.sock", unix.SOCK_DGRAM), ownServer(in+"sp.sock", unix.SOCK_SEQPACKET)
	os.Symlink(in+"st.sock", lab+"/att/own")
	report("own stream", stream.expect(func() error { return dial(unix.SOCK_STREAM, in+"st.sock") }))
	report("own stream by symlink", stream.expect(func() error { return dial(unix.SOCK_STREAM, lab+"/att/own") }))
	report("own seqpacket", seq.expect(func() error { return dial(unix.SOCK_SEQPACKET, in+"sp.sock") }))
	report("own datagram sendto", dgram.expect(func() error {
		return unsent(func(fd int) error { return unix.Sendto(fd, []byte("x"), 0, &unix.SockaddrUnix{Name: in + "dg.sock"}) })
	}))
	report("own datagram sendmsg", dgram.expect(func() error {
		return unsent(func(fd int) error {
			_, err := unix.SendmsgN(fd, []byte("x"), nil, &unix.SockaddrUnix{Name: in + "dg.sock"}, 0)
			return err
		})
	}))
	report("own datagram sendmmsg", dgram.expect(func() error { return unsent(func(fd int) error { return sendmmsg(fd, in+"dg.sock") }) }))
	report("own stream rights", stream.expect(func() error {
		fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		if err := unix.Connect(fd, &unix.SockaddrUnix{Name: in + "st.sock"}); err != nil {
			return err
		}
		return unix.Sendmsg(fd, []byte("x"), unix.UnixRights(0), nil, 0)
	}))
	fmt.Printf("race: %s\n", race(lab))
	report("own stream under signals", underSignals(in+"seq.sock"))
	return 0
}

// underSignals sends numbered records over a stream with sendmsg while
// signals rain on the sender, and checks that every record arrives once, in
// order: a call the supervisor performed must not be restarted after a
// signal and performed again.
func underSignals(path string) error {
	ln, err := net.Listen("unix", path)
	if err != nil {
		return err
	}
	defer ln.Close()
	const records = 10000
	got := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- err
			return
		}
		defer c.Close()
		var rec [8]byte
		for i := uint64(0); i < records; i++ {
			if _, err := io.ReadFull(c, rec[:]); err != nil {
				got <- fmt.Errorf("record %d: %w", i, err)
				return
			}
			if n := binary.LittleEndian.Uint64(rec[:]); n != i {
				got <- fmt.Errorf("record %d reads %d", i, n)
				return
			}
		}
		got <- nil
	}()
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := unix.Connect(fd, &unix.SockaddrUnix{Name: path}); err != nil {
		return err
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
				unix.Kill(os.Getpid(), unix.SIGURG)
			}
		}
	}()
	for i := uint64(0); i < records; i++ {
		rec := binary.LittleEndian.AppendUint64(nil, i)
		if n, err := unix.SendmsgN(fd, rec, nil, nil, 0); err != nil || n != len(rec) {
			return fmt.Errorf("sendmsg %d: %d %v", i, n, err)
		}
	}
	return <-got
}

// race swaps a symlink between the session's server and the host's while
// connecting through it: the host's must never answer.
func race(lab string) string {
	link, tmp := lab+"/att/race", lab+"/att/race.tmp"
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			target := lab + "/in/st.sock"
			if i%2 == 1 {
				target = lab + "/host/st.sock"
			}
			os.Remove(tmp)
			os.Symlink(target, tmp)
			os.Rename(tmp, link)
		}
	}()
	ok, refused := 0, 0
	for i := 0; i < 400; i++ {
		switch err := dial(unix.SOCK_STREAM, link); err {
		case nil:
			ok++
		case unix.EACCES:
			refused++
		}
	}
	close(stop)
	wg.Wait()
	return fmt.Sprintf("ok %d, refused %d", ok, refused)
}

// A server of the session's own counts what reaches it.
type server struct{ hits chan struct{} }

func ownServer(path string, typ int) *server {
	s := &server{hits: make(chan struct{}, 1024)}
	fd, err := unix.Socket(unix.AF_UNIX, typ, 0)
	if err == nil {
		err = unix.Bind(fd, &unix.SockaddrUnix{Name: path})
	}
	if err != nil {
		fmt.Println("serve:", err)
		return s
	}
	if typ != unix.SOCK_DGRAM {
		unix.Listen(fd, 512)
	}
	go func() {
		for serveOne(fd, typ) {
			s.hits <- struct{}{}
		}
	}()
	return s
}

// expect runs try and waits for the server to see it.
func (s *server) expect(try func() error) error {
	for len(s.hits) > 0 {
		<-s.hits
	}
	if err := try(); err != nil {
		return err
	}
	select {
	case <-s.hits:
		return nil
	case <-time.After(10 * time.Second):
		return fmt.Errorf("the server saw nothing")
	}
}
