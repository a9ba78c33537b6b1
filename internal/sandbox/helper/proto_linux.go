package helper

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"syscall"
	"unicode/utf8"

	"golang.org/x/sys/unix"
)

// The session helper and shellgate talk over two Unix stream sockets, one
// each way (Pair), in frames: a 4-byte big-endian length, then that much
// JSON. File descriptors (a command's stdout and stderr) and credentials (the
// PID of a command just started, which the kernel translates into
// shellgate's PID namespace) travel as ancillary data on the length bytes.

// An EnvEntry is entry I of a spawn's env, where it differs from the last
// spawn's (Message.EnvPatch).
type EnvEntry struct {
	I  int    `json:"i"`
	KV string `json:"kv"`
}

// PatchEnv is env (the last spawn's) with patch applied, a new slice; ok
// false when an entry is not within it.
func PatchEnv(env []string, patch []EnvEntry) (patched []string, ok bool) {
	patched = slices.Clone(env)
	for _, e := range patch {
		if e.I < 0 || e.I >= len(patched) {
			return nil, false
		}
		patched[e.I] = e.KV
	}
	return patched, true
}

// Message is every frame, in either direction; Op says which fields count.
type Message struct {
	Op string `json:"op"`

	// setup (shellgate → helper): the session's spec, and the user it runs as.
	Spec *Spec `json:"spec,omitempty"`
	// Steps build the session's view (Plan), made where the host is seen.
	Steps []Step `json:"steps,omitempty"`
	UID   int    `json:"uid,omitempty"`
	GID   int    `json:"gid,omitempty"`
	// Slack: the timer slack (ns) commands are given, shellgate's own; 0:
	// the helper's.
	Slack int `json:"slack,omitempty"`
	// UserCounts: the limits the session's user namespace is given, by
	// name under /proc/sys/user (sandbox's sessionUserCounts).
	UserCounts map[string]int `json:"user_counts,omitempty"`
	// LauncherTasks: the last fd sent is the tasks file of the commands'
	// v1 cgroup, for the launcher's thread to join as the set-up ends
	// (launcher.home), the helper having been born in the session's cgroup;
	// "launcher-cgroup" does the same for a helper moved there later.
	LauncherTasks bool `json:"launcher_tasks,omitempty"`
	// LayersLock: the last fd sent (after the tasks file) is the lock by
	// which the session holds its set of cache layers
	// (cachestore.ClaimLayers), which the helper keeps open until it exits:
	// a shellgate that dies first (its helper then ends the session, its
	// mounts still there) does not free the set meanwhile.
	LayersLock bool `json:"layers_lock,omitempty"`

	// ready (helper → shellgate): what was applied; with the listening
	// sockets of the host ports as ancillary fds, Ports[i] the port of the i-th.
	Layers  map[string]string `json:"layers,omitempty"`
	Missing []string          `json:"missing,omitempty"`
	Ports   []int             `json:"ports,omitempty"`
	// Egress: the last Egress of those sockets listen on Spec.EgressPort.
	Egress int `json:"egress,omitempty"`
	// LauncherError: why the launcher's thread could not join the
	// commands' cgroup sent with the setup (LauncherTasks).
	LauncherError string `json:"launcher_error,omitempty"`

	// spawn (shellgate → helper), with stdin, stdout and stderr as ancillary
	// fds, those that are set.
	ID   uint64   `json:"id,omitempty"`
	Argv Words    `json:"argv,omitempty"`
	Env  []string `json:"env,omitempty"`
	// SameEnv: Env is the last spawn's, not sent again (a session's
	// commands mostly share theirs: ~2 KB of JSON each way a command),
	// but for the entries of EnvPatch: each command's own run marker
	// (runner.MarkerVar) differs from the last one's, and nothing else.
	SameEnv  bool       `json:"same_env,omitempty"`
	EnvPatch []EnvEntry `json:"env_patch,omitempty"`
	Dir      string     `json:"dir,omitempty"`
	Stdin    bool       `json:"stdin,omitempty"` // an fd was sent for it
	Stdout   bool       `json:"stdout,omitempty"`
	Stderr   bool       `json:"stderr,omitempty"`
	Extra    int        `json:"extra,omitempty"` // more fds after those, for fds 3, 4, …
	// Terminal: the one fd sent is a pseudo-terminal's slave, to be the
	// command's stdin, stdout, stderr and controlling terminal.
	Terminal bool `json:"terminal,omitempty"`
	// Cgroup: the last fds sent are those of the command's own cgroup, of
	// this kind (cgroup.V1, cgroup.V2).
	Cgroup string `json:"cgroup,omitempty"`

	// started (helper → shellgate), with the command's PID as credentials; or
	// the errno that stopped it.
	// Placed: the command was born in its cgroup.
	Errno  int    `json:"errno,omitempty"`
	Error  string `json:"error,omitempty"`
	Placed bool   `json:"placed,omitempty"`

	// exit (helper → shellgate): the wait status of command ID, and the
	// protected paths that appeared while it ran, read-only only since, or
	// moved to the quarantine ("path → where"). Also with started: what was
	// quarantined since the last command.
	Status uint32 `json:"status,omitempty"`
	// Idle (exit): the session was left with nothing for its end to do
	// (helper.idle) once the command whose spawn request had this ID, the
	// last that started, had ended; 0: it was not.
	Idle uint64 `json:"idle,omitempty"`
	// Empty (closed): no process of the session is left but the helper.
	Empty bool `json:"empty,omitempty"`

	// pty (shellgate → helper, and back with the master and slave as
	// ancillary fds): a pseudo-terminal of the session's own devpts, of
	// Cols×Rows cells.
	Cols      int      `json:"cols,omitempty"`
	Rows      int      `json:"rows,omitempty"`
	Protected []string `json:"protected,omitempty"`
	// Chosen (started, exit): those of Protected that stay where they are by
	// choice, not because moving them aside failed (mounter.chosen).
	Chosen []string `json:"chosen,omitempty"`
	// Keep (spawn): paths made read-only where they are before the command
	// starts (Session.KeepReadOnly).
	Keep []string `json:"keep,omitempty"`
	// Unkept (started): those of Keep that could not be made read-only, each
	// "path: why".
	Unkept []string `json:"unkept,omitempty"`
	// Job (detach): the PID, in the session, of a command whose call has
	// returned while it runs on: a job, which no call's end covers.
	Job         int      `json:"job,omitempty"`
	Quarantined []string `json:"quarantined,omitempty"`
	// Stopped (exit): the protected paths made again after their move for
	// which the helper ended every process of the session, this command
	// among them (helper.stopIfAgain). Told (stopped): the paths of a
	// "stopped" message (in Quarantined) are told by the exits of the
	// commands it ended, whose calls were in flight.
	Stopped []string `json:"stopped,omitempty"`
	Told    bool     `json:"told,omitempty"`
	// Removed: what was undone in .git (symlinks git on the host would
	// write through, index entries and flags; see gitstate.Tracker).
	Removed []string `json:"removed,omitempty"`
	// GitKnown (started, exit): what the session's git tracker knows now
	// (gitstate.Tracker.Known, then ""), when it learned something since
	// the last reply that said it.
	GitKnown []string `json:"git_known,omitempty"`
}

const maxFrame = 64 << 20 // far above any command line and environment

// Transport is a connected Unix stream socket, as Conn uses it: shellgate's
// end is a net.UnixConn, the helper's the control socket it was started with
// (fileTransport), without package net.
type Transport interface {
	io.Reader
	io.Writer
	io.Closer
	// WriteMsg writes b with oob (fds or credentials) as ancillary data.
	WriteMsg(b, oob []byte) (n int, err error)
	// ReadMsg reads into b, and ancillary data into oob; fds received are
	// close-on-exec.
	ReadMsg(b, oob []byte) (n, oobn int, err error)
}

// Words are a command's words, sent as JSON strings where each is UTF-8 and
// as byte strings (base64) where one is not: JSON would make each byte that
// is not U+FFFD, and bash takes any byte ($'\xff' or a raw one alike).
type Words []string

// MarshalJSON writes w as a list of strings, or {"raw": [bytes…]}.
func (w Words) MarshalJSON() ([]byte, error) {
	raw := false
	for _, s := range w {
		raw = raw || !utf8.ValidString(s)
	}
	if !raw {
		return json.Marshal([]string(w))
	}
	bs := make([][]byte, len(w))
	for i, s := range w {
		bs[i] = []byte(s)
	}
	return json.Marshal(struct {
		Raw [][]byte `json:"raw"`
	}{bs})
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (w *Words) UnmarshalJSON(b []byte) error {
	if len(b) == 0 || b[0] != '{' {
		return json.Unmarshal(b, (*[]string)(w))
	}
	var r struct {
		Raw [][]byte `json:"raw"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return err
	}
	*w = make(Words, len(r.Raw))
	for i, s := range r.Raw {
		(*w)[i] = string(s)
	}
	return nil
}

// Conn sends and receives frames; sends are serialised.
type Conn struct {
	c  Transport
	mu sync.Mutex
}

// NewConn frames messages over t.
func NewConn(t Transport) *Conn { return &Conn{c: t} }

// Close closes the socket; a recv waiting on it returns.
func (c *Conn) Close() error { return c.c.Close() }

// Send writes m with oob (fds or credentials) on its first bytes. The
// frame goes in one call where the socket takes it whole: a length sent
// alone wakes the reader, which finds no body yet and waits to be woken
// again.
func (c *Conn) Send(m *Message, oob []byte) error {
	body, err := json.Marshal(m)
	if err != nil {
		return err
	}
	frame := make([]byte, 4, 4+len(body))
	binary.BigEndian.PutUint32(frame, uint32(len(body)))
	frame = append(frame, body...)
	c.mu.Lock()
	defer c.mu.Unlock()
	n, err := c.c.WriteMsg(frame, oob)
	if err == nil && n < len(frame) {
		_, err = c.c.Write(frame[n:])
	}
	return err
}

// Recv reads one frame and the ancillary data that came with it. It is called
// from one goroutine only.
func (c *Conn) Recv(oob []byte) (*Message, []byte, error) {
	var hdr [4]byte
	n, oobn, err := c.c.ReadMsg(hdr[:], oob)
	if err != nil {
		return nil, nil, err
	}
	if n == 0 {
		return nil, nil, io.EOF
	}
	if n < len(hdr) {
		if _, err := io.ReadFull(c.c, hdr[n:]); err != nil {
			return nil, nil, err
		}
	}
	size := binary.BigEndian.Uint32(hdr[:])
	if size > maxFrame {
		return nil, nil, fmt.Errorf("sandbox: frame of %d bytes", size)
	}
	body := make([]byte, size)
	if _, err := io.ReadFull(c.c, body); err != nil {
		return nil, nil, err
	}
	m := new(Message)
	if err := json.Unmarshal(body, m); err != nil {
		return nil, nil, fmt.Errorf("sandbox: bad frame: %w", err)
	}
	return m, oob[:oobn], nil
}

// FDs returns the file descriptors in ancillary data.
func FDs(oob []byte) []int {
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil {
		return nil
	}
	var fds []int
	for i := range msgs {
		if got, err := syscall.ParseUnixRights(&msgs[i]); err == nil {
			fds = append(fds, got...)
		}
	}
	return fds
}

// Creds returns the PID in ancillary credentials.
func Creds(oob []byte) (int, error) {
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil {
		return 0, err
	}
	for i := range msgs {
		if cred, err := syscall.ParseUnixCredentials(&msgs[i]); err == nil {
			return int(cred.Pid), nil
		}
	}
	return 0, errors.New("sandbox: no credentials with the reply")
}

// Pair makes the control sockets: down carries frames from shellgate to the
// helper, up from the helper to shellgate; of each, end 0 is shellgate's and
// end 1 the helper's. Two sockets, not one: each side's runtime poller
// watches the end it reads (for input and output alike: Go registers both),
// and a socket's reader, as it consumes a frame, wakes every watcher of the
// writer's end to say there is room again. On one socket each frame read
// woke the other side's poller for nothing: the helper's read of a spawn
// frame woke shellgate, shellgate's reads of started and exit woke the
// helper, about two wakes of a sleeping process a command (perf's
// sched_waking by unix_write_space, 200 ms gaps). Written outside the poller
// (Split), an end that is only written is watched by no one.
func Pair() (down, up [2]int, err error) {
	if down, err = unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0); err != nil {
		return down, up, err
	}
	if up, err = unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0); err != nil {
		unix.Close(down[0])
		unix.Close(down[1])
		return down, up, err
	}
	// Each only one way: a frame written the wrong way fails rather than
	// waits unread.
	unix.Shutdown(down[0], unix.SHUT_RD)
	unix.Shutdown(up[1], unix.SHUT_RD)
	return down, up, nil
}

// Split is a Transport that reads through in and writes to out, the end of a
// socket of its own that is only written (Pair): in blocking mode, outside the
// runtime's poller, so that the peer's reads wake no one here. A write waits
// only while the peer has left a socket's buffer of frames unread. Close
// closes both.
// Split takes out over; set blocking before os.NewFile sees it, which would
// otherwise hand it to the poller.
func Split(in Transport, out int) (Transport, error) {
	if err := unix.SetNonblock(out, false); err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(out), "control-out")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &split{Transport: in, out: f, rc: rc}, nil
}

type split struct {
	Transport // reads
	out       *os.File
	rc        syscall.RawConn
}

func (s *split) Write(b []byte) (int, error) { return s.WriteMsg(b, nil) }

// WriteMsg writes b with oob; MSG_NOSIGNAL: a peer gone is an error, not a
// signal.
func (s *split) WriteMsg(b, oob []byte) (n int, err error) {
	if werr := s.rc.Write(func(fd uintptr) bool {
		for {
			n, err = unix.SendmsgN(int(fd), b, oob, nil, unix.MSG_NOSIGNAL)
			if err != unix.EINTR {
				return true
			}
		}
	}); werr != nil {
		return 0, werr
	}
	return n, err
}

func (s *split) Close() error {
	err := s.Transport.Close()
	if cerr := s.out.Close(); err == nil {
		err = cerr
	}
	return err
}

// warmJSON builds encoding/json's coders of the frames' types (a Message,
// its Spec and Steps) by a round trip of a small one. The helper starts
// while shellgate plans the session's view, and its setup message may be a
// while coming: built before it comes, they are not built (~0.2 ms, half the
// first decode of the setup) after it. Built when it has come, they would be
// what its decode builds anyway.
func warmJSON() {
	b, err := json.Marshal(&Message{Spec: &Spec{Writable: []string{"/"}, HostPorts: []int{1}}, Steps: []Step{{Op: OpBind, Data: []byte{0}}}, Layers: map[string]string{"": ""}, Argv: []string{""}})
	if err == nil {
		json.Unmarshal(b, new(Message))
	}
}

// fileTransport is the helper's end of the control socket: the runtime's
// poller waits for it, as it would for a net.UnixConn's.
type fileTransport struct {
	f  *os.File
	rc syscall.RawConn
}

// newFileTransport takes fd, a connected Unix stream socket, into the
// poller.
func newFileTransport(fd int) (*fileTransport, error) {
	if err := unix.SetNonblock(fd, true); err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), "control")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &fileTransport{f: f, rc: rc}, nil
}

// pending reports whether a frame has come and waits to be read.
func (t *fileTransport) pending() bool {
	var b [1]byte
	n := 0
	t.rc.Control(func(fd uintptr) {
		n, _, _ = unix.Recvfrom(int(fd), b[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
	})
	return n > 0
}

func (t *fileTransport) Read(b []byte) (int, error)  { return t.f.Read(b) }
func (t *fileTransport) Write(b []byte) (int, error) { return t.f.Write(b) }
func (t *fileTransport) Close() error                { return t.f.Close() }

func (t *fileTransport) WriteMsg(b, oob []byte) (n int, err error) {
	if werr := t.rc.Write(func(fd uintptr) bool {
		for {
			n, err = unix.SendmsgN(int(fd), b, oob, nil, 0)
			if err != unix.EINTR {
				return err != unix.EAGAIN
			}
		}
	}); werr != nil {
		return 0, werr
	}
	return n, err
}

func (t *fileTransport) ReadMsg(b, oob []byte) (n, oobn int, err error) {
	if rerr := t.rc.Read(func(fd uintptr) bool {
		for {
			n, oobn, _, _, err = unix.Recvmsg(int(fd), b, oob, unix.MSG_CMSG_CLOEXEC)
			if err != unix.EINTR {
				return err != unix.EAGAIN
			}
		}
	}); rerr != nil {
		return 0, 0, rerr
	}
	return n, oobn, err
}
