// Package checkpoint keeps checkpoints of a project root so that what a shell
// command changed there can be seen and taken back.
//
// A Store is a git repository of shellgate's own, outside the project (the
// project's own .git index, refs and config are only read, as files), whose
// objects a checkpoint writes itself (scan.go): every checkpoint is a
// tree with three entries — "work", the root's files, tracked by the project
// or not, less what its .gitignore files ignore (small ignored files such as
// .env are kept); "git", the files of the root's .git directory (objects,
// refs, HEAD, index, stashes, logs); and "modes", the exact permission bits of
// the files whose mode git's 644/755 does not say. Content is deduplicated by
// git's object store; a checkpoint reads only the files whose stat changed
// since the last one, and on Linux only the directories inotify saw change.
// The git binary restores, diffs checkpoints of another process, and packs.
//
// Each command gets a record: the checkpoint before it ran and, once it ended,
// the one after. Restore puts the root back as a checkpoint had it, after
// checkpointing the current state (so an undo can be undone), under a journal
// that the next Open finishes if a crash interrupted it.
package checkpoint

import (
	"bufio"
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Defaults for Options' zero fields.
const (
	DefaultIgnoredMaxSize = 64 << 10           // ignored files up to 64 KiB are kept
	DefaultMaxSize        = 2 << 30            // 2 GiB of store per project
	DefaultMaxAge         = 7 * 24 * time.Hour // a week
	DefaultMaxCount       = 1000               // commands remembered per project
	// DefaultMaxFileSize: a file larger (by its stat size: a sparse file
	// counts at its apparent size) is not read into a checkpoint. Above
	// GitHub's 100 MB limit for a file, so what a project tracks is kept,
	// and a git pack of a repository with a long history up to it; reading
	// and deflating it takes a second or two once, and it is an eighth of
	// DefaultMaxSize, so a few versions of such a file would already prune
	// the older checkpoints.
	DefaultMaxFileSize = 256 << 20
	// DefaultLinkMaxSize: an ignored file over IgnoredMaxSize is kept by a
	// hard link in the store up to this size (links.go).
	DefaultLinkMaxSize = 256 << 20
	// DefaultLinkCopyMaxSize: in the sandbox, a command that opens such a
	// linked file for writing gets a copy of it first up to this size, so
	// that undo puts back what it wrote; a bigger one is written in place,
	// which undo says it cannot put back (links.go). A copy of 16 MiB
	// takes ~10 ms; one of 100 MB took 330 ms at load 10.
	DefaultLinkCopyMaxSize = 16 << 20
)

// DefaultKeepIgnored are ignored files kept whatever their size (up to
// MaxKeptIgnoredSize): environment files, which nothing regenerates.
var DefaultKeepIgnored = []string{".env", ".env.*", "*.env", ".envrc"}

// MaxKeptIgnoredSize bounds what KeepIgnored keeps.
const MaxKeptIgnoredSize = 16 << 20

// Options configure a Store.
type Options struct {
	// Root is the project root, absolute.
	Root string
	// Dir is the directory of all projects' stores (default DefaultDir()); each
	// project's is Dir/<id>, id a hash of Root.
	Dir string
	// IgnoredMaxSize: files .gitignore ignores are kept up to this size
	// (default DefaultIgnoredMaxSize; negative: none). Ignored directories
	// (node_modules/, target/) are never entered.
	IgnoredMaxSize int64
	// KeepIgnored are base-name patterns (path.Match) of ignored files kept
	// up to MaxKeptIgnoredSize whatever IgnoredMaxSize says (nil:
	// DefaultKeepIgnored; empty, non-nil: none).
	KeepIgnored []string
	// MaxFileSize: a file (of the work tree or of .git) whose stat size is
	// larger is not read: the checkpoint records it as not kept (its path
	// and stat), undo leaves it as it is, and changes mark it (default
	// DefaultMaxFileSize).
	MaxFileSize int64
	// LinkMaxSize: an ignored file over IgnoredMaxSize (and not one
	// KeepIgnored names) is kept by a hard link in the store up to this
	// size (default DefaultLinkMaxSize; negative: none, such files are left
	// out).
	LinkMaxSize int64
	// MaxSize, MaxAge, MaxCount bound the store: past any of them the oldest
	// records are pruned (zero fields: the defaults).
	MaxSize  int64
	MaxAge   time.Duration
	MaxCount int
	// Git is the git program (default "git" on PATH).
	Git string
	// Now is the clock (tests); nil: time.Now.
	Now func() time.Time `json:"-"`
}

// DefaultDir is where stores go by default: $XDG_STATE_HOME/shellgate/checkpoints,
// else ~/.local/state/shellgate/checkpoints; ~/Library/Application
// Support/shellgate/checkpoints on macOS; %LocalAppData%\shellgate\checkpoints on
// Windows.
func DefaultDir() (string, error) {
	home, _ := os.UserHomeDir()
	var dir string
	switch runtime.GOOS {
	case "windows":
		dir = os.Getenv("LocalAppData")
		if dir == "" && home != "" {
			dir = filepath.Join(home, "AppData", "Local")
		}
	case "darwin", "ios":
		if home != "" {
			dir = filepath.Join(home, "Library", "Application Support")
		}
	default:
		if x := os.Getenv("XDG_STATE_HOME"); x != "" && filepath.IsAbs(x) {
			dir = x
		} else if home != "" {
			dir = filepath.Join(home, ".local", "state")
		}
	}
	if dir == "" {
		return "", errors.New("no home directory for the checkpoint store; set its directory")
	}
	return filepath.Join(dir, "shellgate", "checkpoints"), nil
}

// within reports whether p is root or lies beneath it, symlinks followed as
// far as the path exists.
func within(root, p string) bool {
	rel, err := filepath.Rel(resolveExisting(root), resolveExisting(p))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// resolveExisting follows the symlinks of the longest part of the absolute
// path p that exists, and takes the rest as written.
func resolveExisting(p string) string {
	p = filepath.Clean(p)
	for rest := ""; ; {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return filepath.Join(p, rest)
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

// ProjectID names a root's store: the first 16 hex digits of its path's SHA-256.
func ProjectID(root string) string {
	h := sha256.Sum256([]byte(filepath.Clean(root)))
	return hex.EncodeToString(h[:8])
}

// Record is one command's checkpoints.
type Record struct {
	ID int `json:"id"`
	// Format is the checkpoint format the record's checkpoints were taken
	// in (see Format); 0: 1, before records said it.
	Format  int       `json:"format,omitempty"`
	Time    time.Time `json:"time"`
	Label   string    `json:"label,omitempty"` // run, exec, job, terminal, undo …
	Command string    `json:"command"`
	Session string    `json:"session,omitempty"`
	Before  string    `json:"before"`          // the checkpoint taken before it ran
	After   string    `json:"after,omitempty"` // the one taken when it ended, if it did in a call
	End     time.Time `json:"end,omitzero"`
	// Destroyed: the command deleted or overwrote work no recent command
	// made (the user's); such records are the last the size and count
	// bounds drop. Decided at the first look at the size, or prune past
	// MaxCount, with the record finished (nil before).
	Destroyed *bool `json:"destroyed,omitempty"`
	// Churn: what it destroyed was all written between commands while a
	// job or terminal ran — a job's churn, or the user's edits then, which
	// the checkpoints cannot tell apart: dropped before the other records
	// of destroyed work, after those of none.
	Churn bool `json:"churn,omitempty"`
}

func (r Record) destroyed() bool { return r.Destroyed != nil && *r.Destroyed }

// keep is the order in which the bounds drop records: 0 first (destroyed
// no one's work), then 1 (only what was written while a job ran), then 2
// (other work, or not decided yet), then 3: a command not ended, a job still running (its
// end would find no record, and while it runs, what is written between
// commands is taken as possibly its own: Churn).
func (r Record) keep() int {
	switch {
	case r.After == "":
		return 3
	case r.Destroyed == nil: // not decided yet: it may have destroyed work
		return 2
	case !r.destroyed():
		return 0
	case r.Churn:
		return 1
	}
	return 2
}

// Format is the newest checkpoint format this build writes and undoes. A
// record of a newer format is refused by Restore (NewerFormatError), so that
// an older build never misreads what a newer one keeps:
//
//   - 2: a file over MaxFileSize is a stub of its stat, not its content (a
//     build that undid it as content would write the stub over the file);
//   - 3: the checkpoint before the command keeps a big ignored file by a
//     hard link in the store, with a stub of its stat in the tree (links.go):
//     a build that knows 2 but not links would undo the stub over the file.
//
// A record is written in the oldest format that says what its checkpoint
// holds (recordFormat), so that a build of format 2 still undoes the
// commands whose checkpoint links nothing.
const Format = 3

// stubFormat is format 2 (see Format).
const stubFormat = 2

// recordFormat is the format of a record whose checkpoint before the
// command has manifest m.
func recordFormat(m manifest) int {
	if len(m.Linked) > 0 {
		return Format
	}
	return stubFormat
}

// NewerFormatError is Restore's refusal of a record a newer shellgate wrote.
type NewerFormatError struct{ ID, Format int }

func (e NewerFormatError) Error() string {
	return fmt.Sprintf("command %d was checkpointed by a newer shellgate (checkpoint format %d; this one undoes up to %d): upgrade shellgate to undo it", e.ID, e.Format, Format)
}

// Store is one project's checkpoints. Its methods are safe for concurrent use,
// and several processes may share a store (a file lock orders them, where the
// system has one).
type Store struct {
	o       Options
	root    string
	dir     string // this project's store
	gitDir  string
	mu      sync.Mutex
	modes   manifest    // the current exact modes (see modes.go)
	records []Record    // loaded under the lock
	logStat os.FileInfo // the record file as load last read it or this process wrote it

	cache     scanCache   // what the last checkpoint saw (scancache.go)
	cacheStat os.FileInfo // the cache file as this process last read or wrote it
	unsaved   int         // files read since the cache file was written
	recent    []snapState // the last checkpoints taken in this process, newest last
	fanouts   sync.Map    // object directories made
	watch     *dirWatch   // what changed in the root since the last checkpoint (Linux)
	noWatch   bool        // none could be had
	pack      *packJob    // git packing in the background (pack.go)

	deferUpkeep bool      // DeferUpkeep (prune.go)
	due         upkeepDue // what Upkeep is to do

	// shared: the inodes of the files the last checkpoint kept under more
	// than one name (its HardLinks)
	shared map[uint64]bool

	leave     *Leave // what checkpoints leave out (leave.go)
	leftOut   string // the key of the Leave the last checkpoint (s.cache) was taken with
	leftLeave *Leave // and that Leave
	// indexAgain: the index files and todo lists are read again, not
	// taken by their stat (the Leave that says how to keep them changed)
	indexAgain bool
	leaving    sync.Mutex // SnapshotLeaving and FinishLeaving, one at a time
}

// Open opens (creating it if needed) the store of o.Root, and finishes a
// restore a crash interrupted.
func Open(o Options) (*Store, error) {
	if o.Root == "" || !filepath.IsAbs(o.Root) {
		return nil, fmt.Errorf("checkpoint: root %q is not absolute", o.Root)
	}
	if o.Dir == "" {
		d, err := DefaultDir()
		if err != nil {
			return nil, err
		}
		o.Dir = d
	}
	o.IgnoredMaxSize = cmp.Or(o.IgnoredMaxSize, DefaultIgnoredMaxSize)
	o.MaxSize = cmp.Or(o.MaxSize, DefaultMaxSize)
	if o.MaxFileSize <= 0 {
		o.MaxFileSize = DefaultMaxFileSize
	}
	o.LinkMaxSize = cmp.Or(o.LinkMaxSize, DefaultLinkMaxSize)
	o.MaxAge = cmp.Or(o.MaxAge, DefaultMaxAge)
	o.MaxCount = cmp.Or(o.MaxCount, DefaultMaxCount)
	o.Git = cmp.Or(o.Git, "git")
	if o.KeepIgnored == nil { // empty, not nil: none
		o.KeepIgnored = DefaultKeepIgnored
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if _, err := exec.LookPath(o.Git); err != nil {
		return nil, fmt.Errorf("checkpoint: git is needed for checkpoints: %w", err)
	}
	s := &Store{o: o, root: filepath.Clean(o.Root)}
	s.dir = filepath.Join(o.Dir, ProjectID(s.root))
	if within(s.root, s.dir) {
		// Every command may write the root: it could rewrite what undo
		// restores, and each checkpoint would hold the store again.
		// Say how: shellgate started in the home directory (an agent's MCP
		// server registered for the user) makes it the root, with the default
		// store inside it, and every command that may write is refused.
		return nil, fmt.Errorf("checkpoint: the store %s is inside the project root %s; give a project's directory as the root (--root DIR, or start shellgate in it), or set [checkpoints] dir to a directory outside the root", o.Dir, s.root)
	}
	s.gitDir = filepath.Join(s.dir, "git")
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	unlock, err := s.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := s.init(); err != nil {
		return nil, err
	}
	if err := s.recover(); err != nil {
		return nil, err
	}
	return s, nil
}

// StoreDir is the directory Open would use for o.Root's store, without
// opening or making it.
func StoreDir(o Options) (string, error) {
	if o.Root == "" || !filepath.IsAbs(o.Root) {
		return "", fmt.Errorf("checkpoint: root %q is not absolute", o.Root)
	}
	if o.Dir == "" {
		d, err := DefaultDir()
		if err != nil {
			return "", err
		}
		o.Dir = d
	}
	return filepath.Join(o.Dir, ProjectID(filepath.Clean(o.Root))), nil
}

// StoreInRoot reports whether o.Root's store, at dir, would be inside
// o.Root, which Open refuses: a root of / or of the home directory with
// the default store.
func StoreInRoot(o Options) (dir string, in bool) {
	dir, err := StoreDir(o)
	if err != nil {
		return "", false // Open says what is wrong
	}
	return dir, within(filepath.Clean(o.Root), dir)
}

// LinksDir is the directory of the links of o.Root's store (links.go),
// made if missing (0700): the sandbox's copy-up layer looks there for a
// file's other name (DefaultLinkCopyMaxSize).
func LinksDir(o Options) (string, error) {
	dir, err := StoreDir(o)
	if err != nil {
		return "", err
	}
	if within(filepath.Clean(o.Root), dir) {
		return "", fmt.Errorf("checkpoint: the store %s is inside the project root", dir)
	}
	dir = filepath.Join(dir, "links")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("checkpoint: %w", err)
	}
	return dir, nil
}

// Look says what the store of o.Root holds without making or changing
// anything (shellgate doctor): its directory, its records and its size;
// exists is false when no command was checkpointed there yet. An undo a
// crash interrupted is left for Open to finish.
func Look(o Options) (dir string, recs []Record, size int64, exists bool, err error) {
	if o.Root == "" || !filepath.IsAbs(o.Root) {
		return "", nil, 0, false, fmt.Errorf("checkpoint: root %q is not absolute", o.Root)
	}
	if o.Dir == "" {
		if o.Dir, err = DefaultDir(); err != nil {
			return "", nil, 0, false, err
		}
	}
	s := &Store{o: o, root: filepath.Clean(o.Root)}
	s.dir = filepath.Join(o.Dir, ProjectID(s.root))
	s.gitDir = filepath.Join(s.dir, "git")
	if _, err := os.Stat(filepath.Join(s.gitDir, "HEAD")); errors.Is(err, os.ErrNotExist) {
		return s.dir, nil, 0, false, nil
	}
	// Without the lock: the record file is replaced whole or appended to,
	// and a torn last line is skipped.
	if err := s.load(); err != nil {
		return s.dir, nil, 0, true, err
	}
	size, err = s.Size()
	return s.dir, s.records, size, true, err
}

// Close lets go of the watch of the root (its share of the process's inotify
// watches), and stops git packing the store in the background, if it does
// (a later checkpoint packs again); a checkpoint taken after it walks the
// whole root and watches it again.
func (s *Store) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopPack()
	s.watch.close()
	s.watch = nil
}

// Dir is this project's store directory.
func (s *Store) Dir() string { return s.dir }

// Root is the project root.
func (s *Store) Root() string { return s.root }

// init makes the store's repository, once.
func (s *Store) init() error {
	if _, err := os.Stat(filepath.Join(s.gitDir, "HEAD")); err != nil {
		if _, err := s.git(nil, "", "", "init", "-q", "--bare", s.gitDir); err != nil {
			return err
		}
	}
	info := filepath.Join(s.gitDir, "info")
	if err := os.MkdirAll(info, 0o700); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	// $GIT_DIR/info/attributes wins over every .gitattributes of the root: no
	// end-of-line conversion, filter or encoding, so what is kept is the bytes.
	attrs := []byte("* -text -eol -filter -ident -working-tree-encoding -crlf\n")
	if old, _ := os.ReadFile(filepath.Join(info, "attributes")); !bytes.Equal(old, attrs) {
		if err := os.WriteFile(filepath.Join(info, "attributes"), attrs, 0o600); err != nil {
			return fmt.Errorf("checkpoint: %w", err)
		}
	}
	if err := os.WriteFile(filepath.Join(s.dir, "root"), []byte(s.root+"\n"), 0o600); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	m, err := loadManifest(filepath.Join(s.dir, "modes.json"))
	if err != nil {
		return err
	}
	s.modes = m
	// What the git-driven passes of earlier versions kept.
	for _, old := range []string{"index.work", "index.git", "exclude", "nested"} {
		os.Remove(filepath.Join(s.dir, old))
	}
	return nil
}

// git runs git on the store's repository, with the work tree and index given
// (empty: none), stdin, and nothing from the user's or the system's config.
func (s *Store) git(stdin []byte, work, index string, args ...string) ([]byte, error) {
	cmd := s.gitCmd(work, index, args...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return out, &gitError{args: args, msg: msg}
	}
	return out, nil
}

// gitCmd is git with args on the store's repository (see git), not started.
func (s *Store) gitCmd(work, index string, args ...string) *exec.Cmd {
	base := []string{
		"-c", "core.autocrlf=false", "-c", "core.safecrlf=false", "-c", "core.symlinks=true",
		"-c", "core.filemode=true", "-c", "core.quotepath=false", "-c", "core.fsmonitor=false",
		"-c", "core.hooksPath=/dev/null", "-c", "gc.auto=0", "-c", "core.ignorecase=false",
		"-c", "core.precomposeunicode=false", "-c", "core.protectNTFS=false", "-c", "core.protectHFS=false",
	}
	cmd := exec.Command(s.o.Git, append(base, args...)...)
	cmd.Env = append(cleanEnv(),
		"GIT_DIR="+s.gitDir, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull,
		"GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0", "LC_ALL=C")
	if work != "" {
		cmd.Env = append(cmd.Env, "GIT_WORK_TREE="+work)
		cmd.Dir = work
	} else {
		cmd.Dir = s.dir
	}
	if index != "" {
		cmd.Env = append(cmd.Env, "GIT_INDEX_FILE="+index)
	}
	return cmd
}

type gitError struct {
	args []string
	msg  string
}

func (e *gitError) Error() string {
	return fmt.Sprintf("checkpoint: git %s: %s", strings.Join(e.args[:min(len(e.args), 2)], " "), e.msg)
}

// cleanEnv is the environment without git's own variables: the project's
// GIT_DIR, an agent's GIT_INDEX_FILE must not lead the store's git astray.
func cleanEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "GIT_") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// logPath is the file of records: one JSON line per record or end.
func (s *Store) logPath() string { return filepath.Join(s.dir, "log.jsonl") }

// load reads the records.
func (s *Store) load() error {
	fi, err := os.Stat(s.logPath())
	if err == nil && sameFileState(s.logStat, fi) {
		return nil // as this process last saw or left it
	}
	s.logStat = nil
	f, err := os.Open(s.logPath())
	if errors.Is(err, os.ErrNotExist) {
		s.records = nil
		return nil
	}
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	defer f.Close()
	byID := map[int]int{}
	var recs []Record
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var r Record
		if json.Unmarshal(sc.Bytes(), &r) != nil || r.ID <= 0 {
			continue // a torn last line
		}
		if i, ok := byID[r.ID]; ok {
			if r.After != "" {
				recs[i].After, recs[i].End = r.After, r.End
			}
			if r.Destroyed != nil { // markDestroyed's decision
				recs[i].Destroyed, recs[i].Churn = r.Destroyed, r.Churn
			}
			continue
		}
		if r.Before == "" {
			continue
		}
		byID[r.ID] = len(recs)
		recs = append(recs, r)
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].ID < recs[j].ID })
	s.records = recs
	s.logStat = fi
	return nil
}

// appendLog adds lines to the record file, a line a value, in one write.
func (s *Store) appendLog(vs ...any) error {
	if len(vs) == 0 {
		return nil
	}
	var b []byte
	for _, v := range vs {
		line, err := json.Marshal(v)
		if err != nil {
			return err
		}
		b = append(append(b, line...), '\n')
	}
	b = b[:len(b)-1]
	f, err := os.OpenFile(s.logPath(), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	_, err = f.Write(append(b, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		s.logStat = nil
		return fmt.Errorf("checkpoint: %w", err)
	}
	s.logStat = s.statLog()
	return nil
}

// statLog is the record file's state after this process wrote it, for load:
// nil when load must read it again (it was changed by another before).
func (s *Store) statLog() os.FileInfo {
	if s.logStat == nil {
		return nil
	}
	fi, _ := os.Stat(s.logPath())
	return fi
}

// rewriteLog replaces the record file with recs.
func (s *Store) rewriteLog(recs []Record) error {
	var b bytes.Buffer
	for _, r := range recs {
		line, err := json.Marshal(r)
		if err != nil {
			return err
		}
		b.Write(append(line, '\n'))
	}
	if err := writeAtomic(s.logPath(), b.Bytes()); err != nil {
		s.logStat = nil
		return err
	}
	s.logStat, _ = os.Stat(s.logPath())
	return nil
}

// writeAtomic writes a file through a temporary one and a rename, synced to
// the disk first.
func writeAtomic(path string, data []byte) error { return writeFile(path, data, true) }

// writeFile writes a file through a temporary one and a rename; sync waits
// for the disk (a ref need not: a lost one only lets git forget a checkpoint).
func writeFile(path string, data []byte, sync bool) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	_, err = f.Write(data)
	if err == nil && sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

// Records returns the records, oldest first.
func (s *Store) Records() ([]Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	unlock, err := s.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := s.load(); err != nil {
		return nil, err
	}
	return append([]Record(nil), s.records...), nil
}

// Record returns record id.
func (s *Store) Record(id int) (Record, error) {
	recs, err := s.Records()
	if err != nil {
		return Record{}, err
	}
	for _, r := range recs {
		if r.ID == id {
			return r, nil
		}
	}
	e := &NoRecordError{ID: id}
	if len(recs) > 0 {
		e.First, e.Last = recs[0].ID, recs[len(recs)-1].ID
		e.held = heldRanges(recs)
		if id < e.Last {
			e.Why = s.prunedWhy(id)
		}
	}
	return Record{}, e
}

// heldRanges is the ids of recs (oldest first) as ranges.
func heldRanges(recs []Record) [][2]int {
	var out [][2]int
	for _, r := range recs {
		if l := len(out); l > 0 && out[l-1][1] == r.ID-1 {
			out[l-1][1] = r.ID
		} else {
			out = append(out, [2]int{r.ID, r.ID})
		}
	}
	return out
}

// NoRecordError is a command number the store has no record of.
type NoRecordError struct {
	ID int
	// First and Last are the numbers of the oldest and newest records kept;
	// 0 when there are none. Those between may not all be kept: the size
	// bound drops the others before a record of destroyed work.
	First, Last int
	// Why says when and why it was dropped ("dropped 2026-01-02 15:04:05 to
	// hold the store to max_size (2.0 GiB)"), when the store noted it.
	Why  string
	held [][2]int
}

func (e *NoRecordError) Error() string {
	switch {
	case e.Last == 0:
		return fmt.Sprintf("no command %d: there are no checkpoints yet", e.ID)
	case e.Why != "":
		return fmt.Sprintf("no command %d: it was %s; the checkpoints hold %s", e.ID, e.Why, e.kept())
	case e.ID < e.Last:
		return fmt.Sprintf("no command %d: it was pruned; the checkpoints hold %s", e.ID, e.kept())
	}
	return fmt.Sprintf("no command %d: the checkpoints hold %s", e.ID, e.kept())
}

func (e *NoRecordError) kept() string {
	held := e.held
	if len(held) == 0 {
		held = [][2]int{{e.First, e.Last}}
	}
	var parts []string
	for i, r := range held {
		if i == 4 && len(held) > 5 {
			parts = append(parts, "…")
			r = held[len(held)-1]
		} else if i > 4 {
			break
		}
		if r[0] == r[1] {
			parts = append(parts, strconv.Itoa(r[0]))
		} else {
			parts = append(parts, fmt.Sprintf("%d to %d", r[0], r[1]))
		}
	}
	if len(parts) == 1 && held[0][0] == held[0][1] {
		return "command " + parts[0]
	}
	return "commands " + strings.Join(parts, ", ")
}

// lock takes the store's lock: the process's mutex is the caller's, this is
// the file lock between processes.
func (s *Store) lock() (func(), error) {
	f, err := os.OpenFile(filepath.Join(s.dir, "lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("checkpoint: lock: %w", err)
	}
	return func() { unlockFile(f); f.Close() }, nil
}
