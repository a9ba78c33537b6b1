// Package audit keeps shellgate's audit log: one JSON object per line for every
// request, what was asked and what came of it, never the output itself.
//
// A Log appends to a file opened with O_APPEND, one write(2) per line, so that
// several Gates and several shellgate processes can share one file without
// tearing lines, and fsyncs every line. When the file would grow past
// Options.MaxBytes it is rotated: audit.jsonl becomes audit.jsonl.1, .1 becomes .2,
// and so on up to Options.Keep files. Commands are passed through Redact before
// they are written.
package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"
)

// Defaults for Options left zero.
const (
	DefaultMaxBytes = 10 << 20 // rotate at 10 MiB
	DefaultKeep     = 3        // keep audit.jsonl.1 … .3
	// MinMaxBytes: a smaller log would rotate at every line.
	MinMaxBytes = 1 << 10
	MaxKeep     = 100
	// MaxCommand caps the command text of one entry, in bytes; Entry.CommandBytes
	// keeps the original length.
	MaxCommand = 4 << 10
)

// Events of Entry.Event.
const (
	// EventDecision is written when a command passed the policy (and approval) and
	// is about to start: a command still running when shellgate dies (kill -9)
	// leaves this line, and no result line with its Call.
	EventDecision = "decision"
	// EventResult is what came of a request: one per request, run or not.
	EventResult = "result"
	// EventHook is a hook's decision for an agent's own shell (Agent names it):
	// nothing runs through shellgate.
	EventHook = "hook"
	// EventAppeared is written when the watch of the root saw a git
	// repository or a protected entry appear below its top level (Appeared
	// lists them), after a command or when the Gate closed.
	EventAppeared = "appeared"
	// EventQuarantined is written as a session starts for what an earlier
	// session in the root moved into the quarantine that no envelope told
	// (shellgate was killed, or closed while a job ran): Moved lists them.
	EventQuarantined = "quarantined"
	// EventStopped is written when the sandbox ended every process of a
	// session because one of them made protected paths again after their
	// move aside (Moved lists them, relative to the root), when it did.
	EventStopped = "stopped"
	// EventEgress is one connection through the egress proxy (Egress), with
	// the call of the command that made it.
	EventEgress = "egress"
	// EventRefused stands for Count refused requests (Rules: how many each
	// rule refused) that were not written one by one: past a burst,
	// refusals are summarized, so that a flood of them cannot rotate the
	// earlier lines out of the log. Command, Rule and Session are the
	// last one's; Time the first one's.
	EventRefused = "refused"
	// EventGap follows a line cut short (a write that filled the disk, a
	// writer killed mid-line): that line is incomplete and not JSON; the
	// gap line ends it, so that the next entry is whole.
	EventGap = "gap"
)

// Entry is one line of the log. The JSON names are stable: tools read them.
type Entry struct {
	Event     string    `json:"event"`          // EventDecision, EventResult or EventHook
	Call      string    `json:"call,omitempty"` // links a request's decision and result lines
	Time      time.Time `json:"time"`           // when the request arrived, UTC
	Session   string    `json:"session"`        // the session it belongs to, if any
	PID       int       `json:"pid"`            // shellgate's process
	Root      string    `json:"root"`
	Directory string    `json:"directory"` // relative to the root
	// Command is redacted (Redact) and capped at MaxCommand bytes by Write, which
	// sets CommandBytes to the length of the command as given.
	Command      string `json:"command"`
	CommandBytes int    `json:"command_bytes"`
	// Description is the caller's description of the command, redacted and
	// capped as the command is.
	Description string `json:"description,omitempty"`
	// Agent is the agent whose hook decided (EventHook).
	Agent    string `json:"agent,omitempty"`
	Decision string `json:"decision"` // allow, ask, deny; "" when the request was invalid
	Rule     string `json:"rule"`
	Approved string `json:"approved"` // "once" or "session" for an approved ask
	// ReliedOnSandbox: the policy allowed it only because the sandbox contains it.
	ReliedOnSandbox bool `json:"relied_on_sandbox"`
	// Sandboxed is the envelope's context.sandbox: the layers applied, or "off";
	// null when nothing ran.
	Sandboxed   any    `json:"sandboxed"`
	Status      string `json:"status"` // success, partial, error
	Error       string `json:"error"`  // the error code, when status is error
	ExitCode    *int   `json:"exit_code"`
	Signal      string `json:"signal"`
	TimedOut    bool   `json:"timed_out"`
	Cancelled   bool   `json:"cancelled"`
	DurationMS  int64  `json:"duration_ms"` // the whole request, approval included
	StdoutBytes int64  `json:"stdout_bytes"`
	StderrBytes int64  `json:"stderr_bytes"`
	Truncated   bool   `json:"truncated"`
	// Job is the job a request made or acted on; Action is what a job call did:
	// "input" (Command is the text and keys sent) or "kill".
	Job    string `json:"job,omitempty"`
	Action string `json:"action,omitempty"`
	// Egress is one connection through the allow-listing proxy (Action
	// "egress", Decision allow or deny).
	Egress *Egress `json:"egress,omitempty"`
	// Appeared: what appeared in the root (EventAppeared), relative to it;
	// "repository DIR" for a git repository.
	Appeared []string `json:"appeared,omitempty"`
	// Moved: what went into the quarantine untold (EventQuarantined), "path →
	// where", relative to the root; what was made again (EventStopped).
	Moved []string `json:"moved,omitempty"`
	// Count and Rules summarize refused requests (EventRefused).
	Count int            `json:"count,omitempty"`
	Rules map[string]int `json:"rules,omitempty"`
}

// Egress is a connection a command asked the egress proxy for.
type Egress struct {
	Proto         string `json:"proto"` // http, connect, socks5
	Domain        string `json:"domain"`
	Port          int    `json:"port"`
	Reason        string `json:"reason,omitempty"` // why it was refused or failed
	SentBytes     int64  `json:"sent_bytes"`
	ReceivedBytes int64  `json:"received_bytes"`
	// Calls are the calls running in the session when the connection came
	// in, when there were several (with one, Entry.Call and Command name it).
	Calls []string `json:"calls,omitempty"`
}

// Options bound the log's size on disk.
type Options struct {
	MaxBytes int64 // rotate before the file would grow past this; 0 means DefaultMaxBytes
	Keep     int   // rotated files kept; 0 means DefaultKeep
}

// Check fills in the defaults and reports a value out of range.
func (o *Options) Check() error {
	if o.MaxBytes == 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.Keep == 0 {
		o.Keep = DefaultKeep
	}
	switch {
	case o.MaxBytes < MinMaxBytes:
		return fmt.Errorf("audit log max size %d bytes: want at least %d", o.MaxBytes, MinMaxBytes)
	case o.Keep < 1 || o.Keep > MaxKeep:
		return fmt.Errorf("audit log keep %d: want 1 to %d rotated files", o.Keep, MaxKeep)
	}
	return nil
}

// ErrClosed is returned by Write after Close.
var ErrClosed = errors.New("audit log is closed")

// Log appends entries to one file. It is safe for concurrent use, and other
// processes may append to the same file at the same time.
type Log struct {
	path string
	opts Options

	mu       sync.Mutex
	f        *os.File
	closed   bool
	unsynced bool // a line was written to f since its last fsync
	checkEnd bool // f may end in a line cut short: opened, or a write failed

	syncDelay time.Duration // SyncDelay; longer in a test
	dirty     chan struct{} // a line was written and not yet synced
	closing   chan struct{} // closed by Close: the syncer stops waiting
	synced    chan struct{} // closed when the syncer has stopped
}

// SyncDelay bounds how long a written line may stay unsynced: the syncer
// fsyncs at most this often, for every line written meanwhile.
const SyncDelay = 50 * time.Millisecond

// Open opens (creating it, and its directory, if need be) the log at path. The
// directory is made 0700 and the file 0600: commands, even redacted, say a lot
// about a user's work.
func Open(path string, opts Options) (*Log, error) {
	if err := opts.Check(); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("audit log %s: %w", path, err)
	}
	l := &Log{path: abs, opts: opts, syncDelay: SyncDelay}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	if err := l.open(); err != nil {
		return nil, err
	}
	l.dirty, l.closing, l.synced = make(chan struct{}, 1), make(chan struct{}), make(chan struct{})
	go l.syncer()
	return l, nil
}

// syncer fsyncs the file after lines were written, batching those written
// within SyncDelay: a synchronous fsync per line cost ~3 ms per command on an
// ordinary disk. The write itself is synchronous, so a crash of shellgate
// loses nothing; only a crash of the machine within SyncDelay can. Close
// cuts the wait short and syncs itself: a one-shot `shellgate run` must not
// pay SyncDelay on its way out.
func (l *Log) syncer() {
	defer close(l.synced)
	delay := time.NewTimer(time.Hour)
	delay.Stop()
	for {
		select {
		case <-l.closing:
			return
		case <-l.dirty:
		}
		delay.Reset(l.syncDelay)
		select {
		case <-l.closing:
			return
		case <-delay.C:
		}
		l.mu.Lock()
		l.syncLocked()
		l.mu.Unlock()
	}
}

// Sync fsyncs the lines written since the last sync now, without waiting for
// the syncer. Close does too; a caller with other work to do before Close (a
// Gate ending its commands) calls Sync beforehand, so that the two overlap.
func (l *Log) Sync() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.syncLocked()
}

func (l *Log) syncLocked() error {
	if l.f == nil || !l.unsynced {
		return nil
	}
	l.unsynced = false
	return l.f.Sync()
}

// syncNewName is syncDir; a test counts its calls.
var syncNewName = syncDir

func (l *Log) open() error {
	// Most opens find the file there: only a new name needs its directory
	// synced, an fsync that cost 1–5 ms of every one-shot `shellgate run`.
	created := false
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND, 0)
	if errors.Is(err, fs.ErrNotExist) {
		created = true
		f, err = os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	}
	if err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	if fi, err := f.Stat(); err == nil && !fi.Mode().IsRegular() {
		f.Close()
		return fmt.Errorf("audit log %s is not a regular file", l.path)
	} else if err == nil && fi.Mode().Perm()&0o077 != 0 {
		f.Chmod(0o600) // a file the user made: tighten it, as a new one would be
	}
	l.f, l.checkEnd = f, !created
	if created {
		syncNewName(filepath.Dir(l.path)) // the new name survives a crash too (and a rotation's renames)
	}
	return nil
}

// Write appends e as one line and syncs it to disk. It fills in Time (now) and
// PID when they are zero, converts Time to UTC, and redacts and caps Command.
func (l *Log) Write(e Entry) error {
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	e.Time = e.Time.UTC()
	if e.PID == 0 {
		e.PID = os.Getpid()
	}
	e.CommandBytes = len(e.Command)
	e.Command = capText(Redact(keepPart(e.Command)), MaxCommand)
	if e.Description != "" {
		e.Description = capText(Redact(keepPart(e.Description)), MaxCommand)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e); err != nil { // one line: Encode escapes newlines in strings
		return fmt.Errorf("audit log: %w", err)
	}
	return l.append(b.Bytes())
}

// append writes line with one write(2) — with O_APPEND the kernel puts it at the
// end of the file whole, whoever else is appending — and has the syncer fsync
// it soon: a line left in the page cache would be lost if the machine crashed
// or lost power, which is when one most wants to know what the agent last ran.
func (l *Log) append(line []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	size, err := l.current()
	if err != nil {
		return err
	}
	var rotateErr error
	if size > 0 && size+int64(len(line)) > l.opts.MaxBytes {
		if rotateErr = l.rotate(int64(len(line))); l.f == nil {
			return rotateErr
		}
	}
	if l.checkEnd {
		line = l.endTornLine(line)
	}
	if _, err := l.f.Write(line); err != nil {
		l.checkEnd = true // a part of the line may be in the file
		return fmt.Errorf("audit log: %w", err)
	}
	l.checkEnd = false
	l.unsynced = true
	select {
	case l.dirty <- struct{}{}:
	default: // a sync is already due
	}
	return rotateErr
}

// endTornLine returns line, preceded by a newline and a gap entry where the
// file does not end in a newline: its last line was cut short. Another
// writer's append in flight looks the same until its write(2) ends (the
// kernel grows the file a page at a time), so the end must stay still for a
// moment before it counts as cut short.
func (l *Log) endTornLine(line []byte) []byte {
	f, err := os.Open(l.path)
	if err != nil {
		return line
	}
	defer f.Close()
	end := func() (size int64, last byte) {
		b := make([]byte, 1)
		fi, err := f.Stat()
		if err != nil || fi.Size() == 0 {
			return 0, '\n'
		}
		if _, err := f.ReadAt(b, fi.Size()-1); err != nil {
			return 0, '\n'
		}
		return fi.Size(), b[0]
	}
	size, last := end()
	for still := 0; last != '\n' && still < 3; {
		time.Sleep(2 * time.Millisecond)
		s, b := end()
		if s == size && b == last {
			still++
		} else {
			still = 0
		}
		size, last = s, b
	}
	if last == '\n' {
		return line
	}
	gap, err := json.Marshal(Entry{Event: EventGap, Time: time.Now().UTC(), PID: os.Getpid(), Status: "error", Error: "TORN_LINE"})
	if err != nil {
		return line
	}
	return slices.Concat([]byte("\n"), gap, []byte("\n"), line)
}

// current makes sure l.f is the file now at l.path — another process may have
// rotated it away — and returns its size.
func (l *Log) current() (int64, error) {
	if l.f != nil {
		pi, errPath := os.Stat(l.path)
		fi, errFile := l.f.Stat()
		if errPath == nil && errFile == nil && os.SameFile(pi, fi) {
			return fi.Size(), nil
		}
		l.syncLocked() // what the syncer had not synced yet
		l.f.Close()
		l.f = nil
	}
	if err := l.open(); err != nil {
		return 0, err
	}
	fi, err := l.f.Stat()
	if err != nil {
		return 0, fmt.Errorf("audit log: %w", err)
	}
	return fi.Size(), nil
}

// rotate shifts the files along, path → path.1 → path.2 …, dropping the oldest,
// and opens a fresh file at path. A lock file keeps two processes from rotating at
// once, which would rename one's fresh file over the other's full one. A file
// left at path (the rename failed) is appended to: losing lines is worse than a
// big file.
func (l *Log) rotate(need int64) error {
	unlock, lockErr := lock(l.path + ".lock")
	if lockErr == nil {
		defer unlock()
	}
	// Under the lock, look again: another process may have rotated already.
	l.syncLocked()
	l.f.Close()
	l.f = nil
	if pi, err := os.Stat(l.path); errors.Is(err, fs.ErrNotExist) || err == nil && (pi.Size() == 0 || pi.Size()+need <= l.opts.MaxBytes) {
		return l.open()
	}
	var err error
	keep := func(e error) {
		if e != nil && !errors.Is(e, fs.ErrNotExist) && err == nil {
			err = fmt.Errorf("audit log rotation: %w", e)
		}
	}
	for i := l.opts.Keep - 1; i >= 1; i-- {
		keep(os.Rename(l.numbered(i), l.numbered(i+1)))
	}
	keep(os.Rename(l.path, l.numbered(1)))
	if e := l.open(); e != nil {
		return e
	}
	if err == nil && lockErr != nil {
		err = fmt.Errorf("audit log rotation without a lock: %w", lockErr)
	}
	return err
}

func (l *Log) numbered(i int) string { return l.path + "." + strconv.Itoa(i) }

// Close closes the file; later Writes return ErrClosed.
func (l *Log) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	close(l.closing)
	l.mu.Unlock()
	<-l.synced
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.syncLocked()
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.f = nil
	return err
}

// keepPart is the part of s that capText may keep, with as much again after
// it: redaction costs about a microsecond a byte (a 1 MiB command took
// 1–4 s), so only what is kept is redacted, and a secret that starts in it
// is seen whole (a PEM block cut short is redacted to the end).
func keepPart(s string) string {
	if len(s) <= 2*MaxCommand {
		return s
	}
	cut := 2 * MaxCommand
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// capText cuts s to at most max bytes, at a character boundary, marking the cut.
func capText(s string, max int) string {
	if len(s) <= max {
		return s
	}
	const mark = "…"
	cut := max - len(mark)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + mark
}
