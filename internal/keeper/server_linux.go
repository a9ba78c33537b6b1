package keeper

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/shellgate/shellgate/internal/checkpoint"
)

// watchEvery is how often a keeper whose watch of what it ends on could not
// be set up (or failed) looks whether it should end.
const watchEvery = time.Second

// Serve is the keeper of a.Options' store until it should end (see the
// package doc); it returns nil when another keeper already serves the store.
func Serve(a Args) error {
	if a.Idle <= 0 {
		return errors.New("keeper: no idle time")
	}
	sock, err := Socket(a.Options)
	if err != nil {
		return err
	}
	dir := filepath.Dir(sock)
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	me, err := build(exe)
	if err != nil {
		return err
	}
	// Its live heap is mostly the scan cache, kept from one request to the
	// next; collecting at 100 % growth had it spend ~2 ms of a command's ~5
	// in the collector (warm-keeper benchmark, 10 000 files). The soft limit
	// bounds what the laxer pacing costs in memory.
	debug.SetGCPercent(400)
	debug.SetMemoryLimit(512 << 20)
	// One keeper a store: the lock is held until this process is gone. A
	// second one started meanwhile ends here, before it opens the store.
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	lock, err := os.OpenFile(filepath.Join(dir, LockName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return nil
	}
	s, err := checkpoint.Open(a.Options)
	if err != nil {
		return err
	}
	defer s.Close()
	// The bounds' upkeep (a stat of every loose object every 64 commands,
	// the scan cache file encoded whole) waits until a command's answer is
	// out, off the path of the commands (upkeep below).
	s.DeferUpkeep()
	lock.Truncate(0)
	lock.WriteString(strconv.Itoa(os.Getpid()) + "\n") // for Running
	// The socket takes its name once it listens: bound under another name
	// first, so that a client never finds it bound and not yet listening
	// (ECONNREFUSED, and the run checkpoints in-process). The rename
	// replaces a dead keeper's. (A name no longer than the socket's: a unix
	// socket's path has a bound.)
	bound := filepath.Join(filepath.Dir(sock), "ks.new")
	os.Remove(bound)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: bound, Net: "unix"})
	if err != nil {
		return err
	}
	ln.SetUnlinkOnClose(false) // removed below only while it is still this one's
	if err := os.Rename(bound, sock); err != nil {
		ln.Close()
		os.Remove(bound)
		return err
	}
	sockInfo, err := os.Lstat(sock)
	if err != nil {
		ln.Close()
		return err
	}
	rootInfo, err := os.Stat(a.Options.Root)
	if err != nil {
		ln.Close()
		return err
	}
	k := &keeper{s: s, build: me, options: optionsKey(a.Options), quit: make(chan string, 1), idle: make(chan struct{}, 1),
		tidy: make(chan struct{}, 1), open: map[*net.UnixConn]bool{}}
	tidied, stopTidy := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(tidied)
		k.upkeep(stopTidy)
	}()
	k.touch()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer signal.Stop(sigs)
	go k.accept(ln)
	// Walk the root now, under the store's lock as a request would, so that
	// the next run's checkpoint reads only what changed since.
	k.conns.Add(1)
	go func() {
		defer k.conns.Done()
		s.Prime()
		k.kick()
	}()
	// Asleep until something happens: a request's end re-arms the idle
	// deadline, and the watch of what it ends on wakes it to look. Without
	// that watch (out of inotify instances) it looks every watchEvery.
	var wake <-chan struct{}
	var tick <-chan time.Time
	if ends, err := watchEnds(a.Options.Root, dir, exe); err == nil {
		defer ends.close()
		wake = ends.wake
	} else {
		t := time.NewTicker(watchEvery)
		defer t.Stop()
		tick = t.C
	}
	deadline := time.NewTimer(a.Idle)
	defer deadline.Stop()
	// A look first: what happened before the watch was set up woke nothing.
	for look := true; ; {
		if look {
			if k.idleFor() >= a.Idle ||
				!same(a.Options.Root, rootInfo, os.Stat) ||
				!same(sock, sockInfo, os.Lstat) ||
				!exists(filepath.Join(dir, "git", "HEAD")) ||
				!sameBuild(exe, me) {
				break
			}
		}
		// While a client is connected idleFor is 0: a full Idle from now,
		// and its connection's end re-arms it from then.
		deadline.Reset(a.Idle - k.idleFor())
		look = true
		select {
		case <-sigs:
		case <-k.quit:
		case _, ok := <-wake:
			if !ok { // the watch failed: look every watchEvery from now
				wake = nil
				t := time.NewTicker(watchEvery)
				defer t.Stop()
				tick = t.C
			}
			continue
		case <-tick:
			continue
		case <-k.idle: // nothing to look at: only the deadline moves
			look = false
			continue
		case <-deadline.C:
			continue
		}
		break // a signal, or told to quit
	}
	ln.Close()
	if same(sock, sockInfo, os.Lstat) {
		os.Remove(sock)
	}
	// A request under way is answered; a client waiting between its two
	// requests finds the connection closed and checkpoints in-process.
	k.mu.Lock()
	k.closing = true
	for c := range k.open {
		c.SetReadDeadline(time.Now())
	}
	k.mu.Unlock()
	k.conns.Wait()
	close(stopTidy)
	<-tidied
	s.Upkeep() // what the last answers left
	return nil
}

func same(p string, was os.FileInfo, stat func(string) (os.FileInfo, error)) bool {
	fi, err := stat(p)
	return err == nil && os.SameFile(fi, was)
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func sameBuild(exe, was string) bool {
	b, err := build(exe)
	return err == nil && b == was
}

type keeper struct {
	s       *checkpoint.Store
	build   string
	options string
	quit    chan string
	idle    chan struct{} // a connection ended: the idle deadline is re-armed
	tidy    chan struct{} // an answer is out: the store's upkeep may be due
	last    atomic.Int64  // unix nanoseconds of the last request's end
	active  atomic.Int32  // connections open
	conns   sync.WaitGroup

	mu      sync.Mutex
	open    map[*net.UnixConn]bool
	closing bool
}

func (k *keeper) touch() { k.last.Store(time.Now().UnixNano()) }

// kick has the store's upkeep done (see upkeep).
func (k *keeper) kick() {
	select {
	case k.tidy <- struct{}{}:
	default: // one pending does it all
	}
}

// upkeep does the store's upkeep (checkpoint.Store.Upkeep) when kicked:
// after the answer to a checkpoint after a command, when a connection ends
// (a client gone between its requests), and once the first walk is done —
// never between a request and its answer.
func (k *keeper) upkeep(stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		case <-k.tidy:
			k.s.Upkeep()
		}
	}
}

// idleFor is how long no client was connected.
func (k *keeper) idleFor() time.Duration {
	if k.active.Load() > 0 {
		return 0
	}
	return time.Since(time.Unix(0, k.last.Load()))
}

func (k *keeper) accept(ln *net.UnixListener) {
	for {
		c, err := ln.AcceptUnix()
		if err != nil {
			return
		}
		k.mu.Lock()
		if k.closing {
			k.mu.Unlock()
			c.Close()
			return
		}
		k.open[c] = true
		k.conns.Add(1)
		k.active.Add(1)
		k.mu.Unlock()
		go func() {
			defer k.conns.Done()
			defer func() {
				c.Close()
				k.mu.Lock()
				delete(k.open, c)
				k.mu.Unlock()
				k.touch()
				k.active.Add(-1)
				k.kick()
				select {
				case k.idle <- struct{}{}:
				default:
				}
			}()
			k.serve(c)
		}()
	}
}

// serve answers one client: its hello, then its requests, one at a time.
func (k *keeper) serve(c *net.UnixConn) {
	cred, err := peerCred(c)
	if err != nil || int(cred.Uid) != os.Getuid() {
		return
	}
	r := bufio.NewReader(c)
	var h hello
	if readLine(r, &h) != nil {
		return
	}
	w := welcome{OK: true}
	switch {
	case h.Protocol != Protocol:
		w = welcome{Why: fmt.Sprintf("protocol %d, not %d", h.Protocol, Protocol)}
	case h.Build != k.build:
		w = welcome{Why: "another build of shellgate"}
	case h.Options != k.options:
		w = welcome{Why: "other checkpoint options"}
	}
	if !w.OK {
		select {
		case k.quit <- w.Why:
		default:
		}
	}
	var mu sync.Mutex // the busy lines and the answer
	send := func(v any) error {
		b, _ := json.Marshal(v)
		mu.Lock()
		defer mu.Unlock()
		c.SetWriteDeadline(time.Now().Add(Silence))
		_, err := c.Write(append(b, '\n'))
		return err
	}
	if send(w) != nil || !w.OK {
		return
	}
	for {
		var q request
		if readLine(r, &q) != nil {
			return
		}
		stop := make(chan struct{})
		go func() {
			t := time.NewTicker(busyEvery)
			defer t.Stop()
			for {
				select {
				case <-stop:
					return
				case <-t.C:
					send(reply{Busy: true})
				}
			}
		}()
		rep := k.do(q)
		close(stop)
		err := send(rep)
		if q.Op == "finish" {
			k.kick()
		}
		if err != nil {
			return
		}
	}
}

func (k *keeper) do(q request) reply {
	switch q.Op {
	case "snapshot":
		id, err := k.s.SnapshotLeaving(q.Leave, q.Label, q.Command, q.Session)
		if err != nil {
			return reply{Err: err.Error()}
		}
		return reply{ID: id}
	case "finish":
		sum, err := k.s.FinishLeaving(q.Leave, q.ID)
		if err != nil {
			return reply{Err: err.Error()}
		}
		return reply{Summary: &sum}
	}
	return reply{Err: fmt.Sprintf("keeper: unknown request %q", q.Op)}
}

// readLine reads one JSON line into v (no deadline: a client between its two
// requests waits for its command).
func readLine(r *bufio.Reader, v any) error {
	line, err := r.ReadBytes('\n')
	if err != nil {
		return err
	}
	return json.Unmarshal(line, v)
}

// Running says whether a keeper serves the store of o, and its pid, without
// asking it (shellgate doctor): its lock is held while it lives.
func Running(o checkpoint.Options) (pid int, ok bool) {
	dir, err := checkpoint.StoreDir(o)
	if err != nil {
		return 0, false
	}
	return RunningAt(dir)
}

// RunningAt is Running for a project's store directory dir (a test harness
// that knows where the store is, not the root's exact path).
func RunningAt(dir string) (pid int, ok bool) {
	f, err := os.Open(filepath.Join(dir, LockName))
	if err != nil {
		return 0, false
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err == nil {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return 0, false
	}
	b, _ := os.ReadFile(f.Name())
	pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	return pid, true
}
