package keeper

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/shellgate/shellgate/internal/checkpoint"
)

// Silence bounds how long a client waits for a line from its keeper: the
// keeper says it is busy twice as often while it works, so a silent one is
// stalled (stopped, or wedged), and is killed so that the store's lock it may
// hold is let go.
const Silence = 2 * time.Second

const busyEvery = Silence / 4

// Client is a connection to a root's keeper.
type Client struct {
	mu   sync.Mutex // one exchange at a time
	conn *net.UnixConn
	r    *bufio.Reader
	pid  int // the keeper, from the socket's credentials
	// welcomed: the keeper's answer to the greeting has been read.
	welcomed bool
}

// Dial connects to the keeper of o's store and checks that it is one of this
// build and options (one that is not is told to quit, and Dial fails). It
// fails fast when no keeper listens.
func Dial(o checkpoint.Options) (*Client, error) {
	sock, err := Socket(o)
	if err != nil {
		return nil, err
	}
	me, err := selfBuild()
	if err != nil {
		return nil, fmt.Errorf("keeper: %w", err)
	}
	conn, err := net.DialTimeout("unix", sock, Silence)
	if err != nil {
		return nil, err
	}
	uc := conn.(*net.UnixConn)
	cred, err := peerCred(uc)
	if err != nil || int(cred.Uid) != os.Getuid() {
		uc.Close()
		return nil, fmt.Errorf("keeper: %s is not served by this user (%v)", sock, err)
	}
	c := &Client{conn: uc, r: bufio.NewReader(uc), pid: int(cred.Pid)}
	// The welcome is read with the first answer: one round trip fewer. A
	// keeper that refuses reads nothing after the greeting.
	if err := c.send(hello{Protocol: Protocol, Build: me, Options: optionsKey(o)}); err != nil {
		return nil, err
	}
	return c, nil
}

// PID is the keeper's process id.
func (c *Client) PID() int { return c.pid }

// Close ends the connection.
func (c *Client) Close() {
	if c != nil {
		c.conn.Close()
	}
}

// Snapshot asks the keeper for the checkpoint before a command (see
// checkpoint.Store.Snapshot).
func (c *Client) Snapshot(label, command, session string) (int, error) {
	return c.SnapshotLeaving(nil, label, command, session)
}

// SnapshotLeaving is Snapshot leaving out what l says (see
// checkpoint.Store.SnapshotLeaving).
func (c *Client) SnapshotLeaving(l *checkpoint.Leave, label, command, session string) (int, error) {
	var r reply
	if err := c.exchange(request{Op: "snapshot", Label: label, Command: command, Session: session, Leave: l}, &r); err != nil {
		return 0, err
	}
	if r.Err != "" {
		return 0, errors.New(r.Err)
	}
	return r.ID, nil
}

// Finish asks the keeper for the checkpoint after command id (see
// checkpoint.Store.Finish).
func (c *Client) Finish(id int) (checkpoint.Summary, error) {
	return c.FinishLeaving(nil, id)
}

// FinishLeaving is Finish leaving out what l says.
func (c *Client) FinishLeaving(l *checkpoint.Leave, id int) (checkpoint.Summary, error) {
	var r reply
	if err := c.exchange(request{Op: "finish", ID: id, Leave: l}, &r); err != nil {
		return checkpoint.Summary{}, err
	}
	if r.Err != "" {
		return checkpoint.Summary{}, errors.New(r.Err)
	}
	if r.Summary == nil {
		return checkpoint.Summary{}, errors.New("keeper: no summary in its answer")
	}
	return *r.Summary, nil
}

// exchange sends v and reads the answer into out, skipping busy lines; a
// keeper silent for Silence is killed (it may hold the store's lock) and the
// connection closed.
func (c *Client) exchange(v any, out any) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	sent := c.write(v) // a keeper that refused may have closed already: its reason first
	if !c.welcomed {
		var w welcome
		if err := c.read(&w); err != nil {
			return err
		}
		if !w.OK {
			c.conn.Close()
			return fmt.Errorf("keeper: refused: %s", w.Why)
		}
		c.welcomed = true
	}
	if sent != nil {
		return c.fail(sent)
	}
	return c.read(out)
}

// send writes v as a line, closing the connection if it cannot.
func (c *Client) send(v any) error {
	if err := c.write(v); err != nil {
		return c.fail(err)
	}
	return nil
}

func (c *Client) write(v any) error {
	b, _ := json.Marshal(v)
	c.conn.SetWriteDeadline(time.Now().Add(Silence))
	_, err := c.conn.Write(append(b, '\n'))
	return err
}

// read reads the next line that is not a busy one into out.
func (c *Client) read(out any) error {
	for {
		c.conn.SetReadDeadline(time.Now().Add(Silence))
		line, err := c.r.ReadBytes('\n')
		if err != nil {
			return c.fail(err)
		}
		var busy reply
		if json.Unmarshal(line, &busy) == nil && busy.Busy {
			continue
		}
		if err := json.Unmarshal(line, out); err != nil {
			return c.fail(err)
		}
		return nil
	}
}

func (c *Client) fail(err error) error {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() && c.pid > 0 {
		// Stalled: it must not keep the store's lock from the in-process
		// checkpoint that follows.
		syscall.Kill(c.pid, syscall.SIGKILL)
	}
	c.conn.Close()
	return fmt.Errorf("keeper: %w", err)
}

func peerCred(c *net.UnixConn) (*syscall.Ucred, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return nil, err
	}
	var cred *syscall.Ucred
	var cerr error
	err = raw.Control(func(fd uintptr) {
		cred, cerr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	})
	if err == nil {
		err = cerr
	}
	return cred, err
}

// Start starts a keeper for a: argv (the shellgate executable and its
// subcommand) with a's JSON as last argument, in a session of its own, its
// stdio /dev/null. It does not wait for it to listen.
func Start(argv []string, a Args) error {
	if len(argv) == 0 {
		return errors.New("keeper: no command to start")
	}
	a.Options.Dir = resolveDir(a.Options.Dir) // not the keeper's guess
	b, err := json.Marshal(a)
	if err != nil {
		return err
	}
	cmd := exec.Command(argv[0], append(argv[1:], string(b))...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Dir = "/"
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("keeper: %w", err)
	}
	go cmd.Wait() // reaped if it ends while this process lives
	return nil
}
