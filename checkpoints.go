package shellgate

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/shellgate/shellgate/envelope"
	"github.com/shellgate/shellgate/internal/analysis"
	"github.com/shellgate/shellgate/internal/checkpoint"
	"github.com/shellgate/shellgate/internal/hint"
	"github.com/shellgate/shellgate/internal/keeper"
	"github.com/shellgate/shellgate/policy"
)

// CheckpointsEnv sets the default checkpoint store when CheckpointConfig sets
// neither Off nor Dir: a directory, or "off". Test suites set it so that they
// never write the user's own store.
const CheckpointsEnv = "SHELLGATE_CHECKPOINTS"

// CheckpointConfig configures the checkpoints a Gate takes of the project root
// before each command that may write (package internal/checkpoint: a git
// object store of shellgate's own, outside the project). The zero value is the
// default: on, in the user's state directory.
type CheckpointConfig struct {
	Off bool
	// Dir holds every project's store ("": $SHELLGATE_CHECKPOINTS, else
	// ~/.local/state/shellgate/checkpoints or the system's equivalent).
	Dir string
	// IgnoredMaxSize: files .gitignore ignores are kept up to this size (0:
	// 64 KiB; negative: none); ignored directories are never entered.
	IgnoredMaxSize int64
	// KeepIgnored are base-name patterns of ignored files kept whatever
	// their size, up to 16 MiB (nil: .env, .env.*, *.env, .envrc).
	KeepIgnored []string
	// MaxFileSize: a file larger (its stat size: a sparse file counts at
	// its apparent size) is not read into a checkpoint; it is recorded as
	// not kept, undo leaves it as it is, and lose-work is not relaxed where
	// git could take it (0: 256 MiB).
	MaxFileSize int64
	// LinkMaxSize: an ignored file over IgnoredMaxSize is kept by a hard
	// link in the store up to this size, so that undo brings it back after
	// an rm (0: 256 MiB; negative: none, such files are left out).
	LinkMaxSize int64
	// LinkCopyMaxSize: in the sandbox, a command that opens such a linked
	// file for writing gets a copy of it first up to this size, so that
	// undo puts back what it wrote; a bigger one is written in place, which
	// undo and changes say cannot be put back (an rm of it is still undone)
	// (0: 16 MiB; negative: none is copied).
	LinkCopyMaxSize int64
	// MaxSize, MaxAge and MaxCount bound each project's store; the oldest
	// checkpoints are pruned past them (0: 2 GiB, 7 days, 1000 commands).
	MaxSize  int64
	MaxAge   time.Duration
	MaxCount int
	// Keeper is the command that starts the root's checkpoint keeper
	// (`shellgate checkpoint-keeper`, package internal/keeper: a process
	// that keeps the store and its watch of the root open between one-shot
	// runs, so that their checkpoints read only what changed); nil: none,
	// every checkpoint is taken in-process. The shellgate command sets it
	// for run and exec.
	Keeper []string
	// KeeperIdle is how long the keeper waits for the next command before it
	// exits (0: DefaultKeeperIdle, or no keeper when $SHELLGATE_CHECKPOINTS
	// is set, as in test suites; negative: no keeper).
	KeeperIdle time.Duration
}

// DefaultKeeperIdle is how long a checkpoint keeper outlives the last
// command of its root.
const DefaultKeeperIdle = 10 * time.Minute

// keeperIdle is the keeper's idle time, 0 when there is to be no keeper.
func (c CheckpointConfig) keeperIdle() time.Duration {
	switch {
	case c.Off || len(c.Keeper) == 0 || c.KeeperIdle < 0:
		return 0
	case c.KeeperIdle > 0:
		return c.KeeperIdle
	case os.Getenv(CheckpointsEnv) != "":
		return 0
	}
	return DefaultKeeperIdle
}

// Aliases of the checkpoint package's types, for the library's users.
type (
	// CheckpointRecord is one command's checkpoints: id, time, command line.
	CheckpointRecord = checkpoint.Record
	// ChangeSummary is what changed between two checkpoints.
	ChangeSummary = checkpoint.Summary
	// Change is one path of a ChangeSummary.
	Change = checkpoint.Change
	// NoCheckpointError is the error of Record for a command number the
	// project's checkpoints do not hold; it says which they hold.
	NoCheckpointError = checkpoint.NoRecordError
)

// options turns c into the store's options for root; off reports checkpoints
// turned off (by c or by $SHELLGATE_CHECKPOINTS).
func (c CheckpointConfig) options(root string) (o checkpoint.Options, off bool) {
	dir := c.Dir
	if dir == "" && !c.Off {
		if env := os.Getenv(CheckpointsEnv); env == "off" {
			return o, true
		} else {
			dir = env
		}
	}
	return checkpoint.Options{Root: root, Dir: dir, IgnoredMaxSize: c.IgnoredMaxSize, KeepIgnored: c.KeepIgnored,
		MaxFileSize: c.MaxFileSize, LinkMaxSize: c.LinkMaxSize, MaxSize: c.MaxSize, MaxAge: c.MaxAge, MaxCount: c.MaxCount}, c.Off
}

// Checkpoints is one project's checkpoints, as `shellgate changes` and
// `shellgate undo` and the MCP undo tool see them.
type Checkpoints struct {
	s *checkpoint.Store
}

// OpenCheckpoints opens the checkpoints of cfg.Root (the current directory if
// empty) as cfg.Checkpoints configures them, finishing an undo that a crash
// interrupted. It fails when checkpoints are off.
func OpenCheckpoints(cfg Config) (*Checkpoints, error) {
	root, err := resolveRoot(cfg.Root)
	if err != nil {
		return nil, err
	}
	o, off := cfg.Checkpoints.options(root)
	if off {
		return nil, fmt.Errorf("checkpoints are off (--checkpoints off, [checkpoints] enabled = false or $%s=off)", CheckpointsEnv)
	}
	s, err := checkpoint.Open(o)
	if err != nil {
		return nil, err
	}
	return &Checkpoints{s: s}, nil
}

// Close stops what the checkpoints run in the background (git packing the
// store after an undo); the store stays valid, and a later command packs.
func (c *Checkpoints) Close() { c.s.Close() }

// CheckpointsStatus is what a project's checkpoint store holds.
type CheckpointsStatus struct {
	Dir      string // the project's store
	Exists   bool   // false: no command was checkpointed there yet
	Commands int    // commands recorded
	Size     int64  // bytes on disk
	Keeper   int    // the pid of the root's checkpoint keeper; 0: none runs
}

// LookCheckpoints says what the checkpoint store of cfg.Root holds without
// opening it: nothing is made or changed (an undo a crash interrupted is
// left for the next open to finish). It fails when checkpoints are off.
func LookCheckpoints(cfg Config) (CheckpointsStatus, error) {
	root, err := resolveRoot(cfg.Root)
	if err != nil {
		return CheckpointsStatus{}, err
	}
	o, off := cfg.Checkpoints.options(root)
	if off {
		return CheckpointsStatus{}, fmt.Errorf("checkpoints are off (--checkpoints off, [checkpoints] enabled = false or $%s=off)", CheckpointsEnv)
	}
	dir, recs, size, exists, err := checkpoint.Look(o)
	pid, _ := keeper.Running(o)
	return CheckpointsStatus{Dir: dir, Exists: exists, Commands: len(recs), Size: size, Keeper: pid}, err
}

// Root is the project root.
func (c *Checkpoints) Root() string { return c.s.Root() }

// Dir is where this project's checkpoints are kept.
func (c *Checkpoints) Dir() string { return c.s.Dir() }

// Size is the store's size on disk, in bytes.
func (c *Checkpoints) Size() (int64, error) { return c.s.Size() }

// Records lists the commands checkpointed, oldest first.
func (c *Checkpoints) Records() ([]CheckpointRecord, error) { return c.s.Records() }

// Record returns command id's record.
func (c *Checkpoints) Record(id int) (CheckpointRecord, error) { return c.s.Record(id) }

// Changes is what command id changed in the root.
func (c *Checkpoints) Changes(id int) (ChangeSummary, error) { return c.s.Changes(id) }

// Since is what changed in the root after command id ended (later commands,
// the user's own edits): what Undo(id) would also take back.
func (c *Checkpoints) Since(id int) (ChangeSummary, error) { return c.s.Since(id) }

// Undo puts the root back as it was before command id ran, after
// checkpointing it as it is now under a record of its own, whose id it
// returns (undoing that one undoes the undo), with what the undo changed.
func (c *Checkpoints) Undo(id int) (int, ChangeSummary, error) { return c.s.Restore(id) }

// gateCheckpoints is a Gate's store, opened by the first command that needs
// it; an open that failed is tried again by the next.
type gateCheckpoints struct {
	off     bool
	opts    checkpoint.Options
	mu      sync.Mutex
	cp      *Checkpoints
	pending sync.WaitGroup // jobs' checkpoints taken when they end; Close waits for them
	leaving sync.Mutex     // a Leave set in the store and the checkpoint taken with it

	copyMax int64 // CheckpointConfig.LinkCopyMaxSize

	keeperCmd  []string      // starts the root's keeper; nil: none
	keeperIdle time.Duration // its idle time
	dialed     bool          // the keeper was looked for
	keeper     *keeper.Client
}

func newGateCheckpoints(root string, c CheckpointConfig) *gateCheckpoints {
	o, off := c.options(root)
	g := &gateCheckpoints{off: off, opts: o, copyMax: c.LinkCopyMaxSize}
	if idle := c.keeperIdle(); idle > 0 && !off {
		g.keeperCmd, g.keeperIdle = c.Keeper, idle
	}
	return g
}

// rootProblem is why no command may run in root at all: its checkpoint
// store would be inside it (a root of / or of the home directory, where an
// agent's MCP server or a shell started there puts it), so every checkpoint,
// and with it every command that may write, fails, each with its own long
// error. nil when checkpoints are off or the store is elsewhere.
func (g *gateCheckpoints) rootProblem(root string) error {
	if g.off {
		return nil
	}
	dir, in := checkpoint.StoreInRoot(g.opts)
	if !in {
		return nil
	}
	var what string
	if filepath.Dir(root) == root {
		what = "the project root is " + root
	} else if home, err := os.UserHomeDir(); err == nil && filepath.Clean(home) == root {
		what = "the project root is your home directory (" + root + ")"
	} else {
		// A store set inside a project: the project is the root.
		return fmt.Errorf("shellgate's checkpoints (%s) would be inside the project root %s, where every command could rewrite them: set [checkpoints] dir outside it, or turn checkpoints off (--checkpoints off)", hint.Tilde(filepath.Dir(dir)), root)
	}
	return fmt.Errorf("%s, which holds shellgate's checkpoints (in %s): start shellgate in the project's directory (or --root DIR), or turn checkpoints off (--checkpoints off)", what, hint.Tilde(filepath.Dir(dir)))
}

// storeLinks is the store's directory of links, made if missing, and the
// size over which the sandbox writes a linked file in place
// (sandbox.Spec.StoreLinks); "" when no file is linked.
func (g *gateCheckpoints) storeLinks() (string, int64) {
	if g.off || g.opts.LinkMaxSize < 0 || runtime.GOOS != "linux" {
		return "", 0
	}
	dir, err := checkpoint.LinksDir(g.opts)
	if err != nil {
		return "", 0 // the checkpoint before the command says what is wrong
	}
	switch {
	case g.copyMax == 0:
		return dir, checkpoint.DefaultLinkCopyMaxSize
	case g.copyMax < 0:
		return dir, 0
	}
	return dir, g.copyMax
}

// viaKeeper is the root's keeper, looked for once: nil when there is none
// (the first run starts one, for the next runs, and checkpoints in-process
// itself), or when it refused this client (another build or options: it
// quits, and the next run starts another).
func (g *gateCheckpoints) viaKeeper() *keeper.Client {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.keeperCmd == nil || g.dialed {
		return g.keeper
	}
	g.dialed = true
	k, err := keeper.Dial(g.opts)
	if err == nil {
		g.keeper = k
		return k
	}
	if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED) {
		keeper.Start(g.keeperCmd, keeper.Args{Options: g.opts, Idle: g.keeperIdle})
	}
	return nil
}

// dropKeeper forgets a keeper that failed: the Gate's checkpoints are taken
// in-process from then on.
func (g *gateCheckpoints) dropKeeper() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.keeper.Close()
	g.keeper = nil
}

// snapshot takes the checkpoint before a command: by the keeper, or else
// in-process.
// It leaves out what leave says (see Gate.checkpointLeave).
func (g *gateCheckpoints) snapshot(leave *checkpoint.Leave, label, command, session string) (*Checkpoints, *keeper.Client, int, error) {
	if k := g.viaKeeper(); k != nil {
		if id, err := k.SnapshotLeaving(leave, label, command, session); err == nil {
			return nil, k, id, nil
		}
		g.dropKeeper()
	}
	cp, err := g.open()
	if err != nil {
		return nil, nil, 0, err
	}
	g.leaving.Lock() // the leave set and the checkpoint that uses it, together
	defer g.leaving.Unlock()
	cp.s.SetLeave(leave)
	id, err := cp.s.Snapshot(label, command, session)
	return cp, nil, id, err
}

func (g *gateCheckpoints) open() (*Checkpoints, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.cp != nil {
		return g.cp, nil
	}
	s, err := checkpoint.Open(g.opts)
	if err != nil {
		return nil, err
	}
	g.cp = &Checkpoints{s: s}
	return g.cp, nil
}

// close waits for the checkpoints of ended jobs (the Gate's Close, once every
// job is gone), then lets go of the store's watch of the root.
func (g *gateCheckpoints) close() {
	g.pending.Wait()
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.cp != nil {
		g.cp.s.Close()
	}
	g.keeper.Close()
	g.keeper = nil
}

// Checkpoints returns the Gate's checkpoints, or an error when they are off.
func (g *Gate) Checkpoints() (*Checkpoints, error) {
	if g.cps.off {
		return nil, fmt.Errorf("checkpoints are off")
	}
	return g.cps.open()
}

// checkpointed is a command's checkpoint, taken before it started.
type checkpointed struct {
	g       *gateCheckpoints
	cp      *Checkpoints   // the store it was taken in, or nil:
	k       *keeper.Client // the keeper that took it
	id      int
	input   bool            // before input to a job: its changes are read when the input's wait ends
	pending *sync.WaitGroup // the Gate's, for a job's checkpoint when it ends

	leave func() *checkpoint.Leave // what its checkpoints leave out (Gate.checkpointLeave)
}

// checkpoint takes the checkpoint before an admitted command that may write;
// a checkpoint that cannot be taken refuses the command (its envelope). label
// says how it runs (run, job, terminal), session which session runs it.
func (g *Gate) checkpoint(a *admitted, b *box, label, command, session string) (*checkpointed, *envelope.Envelope) {
	if g.cps.off || a.readOnly {
		return nil, nil
	}
	leave := func() *checkpoint.Leave { return g.checkpointLeave(b) }
	cp, k, id, err := g.cps.snapshot(leave(), label, command, session)
	if err != nil {
		if full := (*checkpoint.NoSpaceError)(nil); errors.As(err, &full) {
			// It says what failed, that the command did not run, what to free.
			return nil, a.env.Fail(envelope.CheckpointFailed, "Not run: "+full.Error()+".")
		}
		return nil, a.env.Fail(envelope.CheckpointFailed, fmt.Sprintf("Not run: the checkpoint of the project before it could not be taken (%v), so the command was not started and nothing changed. The user can fix that or turn checkpoints off (--checkpoints off, or [checkpoints] enabled = false).", err))
	}
	if a.undoable {
		a.env.NoteUndo(fmt.Sprintf("Allowed without asking because checkpoint %d keeps the project as it was before it (rule lose-work): ", id), id)
	}
	return &checkpointed{g: g.cps, leave: leave, cp: cp, k: k, id: id, pending: &g.cps.pending}, nil
}

// finish checkpoints the root after the command ended and puts what it changed
// in env (settled again); a command that went on as a job gets only its
// checkpoint's number, and its changes are taken when it ends.
func (c *checkpointed) finish(env *envelope.Envelope, done <-chan struct{}) {
	if c == nil {
		return
	}
	if !c.input && env.Data.Job != nil && env.Data.Job.Running() {
		env.Data.Changed = &envelope.Changed{Checkpoint: c.id, Pending: true}
		if done != nil && c.pending != nil {
			c.pending.Add(1)
			go func() {
				defer c.pending.Done()
				<-done
				c.summary()
			}()
		}
		env.Settle()
		return
	}
	sum, err := c.summary()
	if err != nil {
		if full := (*checkpoint.NoSpaceError)(nil); errors.As(err, &full) {
			// It says what failed, that the command ran, what to free.
			env.Note("What it changed could not be recorded: " + full.Error() + ".")
		} else {
			env.Note(fmt.Sprintf("What it changed could not be read (%v); checkpoint %d holds the project as it was before it.", err, c.id))
		}
		env.Data.Changed = &envelope.Changed{Checkpoint: c.id}
		env.Settle()
		return
	}
	env.Data.Changed = changed(c.id, sum)
	env.Settle()
}

// summary takes the checkpoint after the command, by the keeper that took the
// one before if it still can, else in-process.
func (c *checkpointed) summary() (ChangeSummary, error) {
	leave := c.leave()
	if c.k != nil {
		if sum, err := c.k.FinishLeaving(leave, c.id); err == nil {
			return sum, nil
		}
		c.g.dropKeeper()
	}
	if c.cp == nil {
		cp, err := c.g.open()
		if err != nil {
			return ChangeSummary{}, err
		}
		c.cp = cp
	}
	c.g.leaving.Lock()
	defer c.g.leaving.Unlock()
	c.cp.s.SetLeave(leave)
	return c.cp.s.Finish(c.id)
}

// maxChangedPaths is how many paths data.changed lists.
const maxChangedPaths = 5

func changed(id int, sum ChangeSummary) *envelope.Changed {
	c := &envelope.Changed{Checkpoint: id, Added: sum.Added, Modified: sum.Modified, Deleted: sum.Deleted, Mode: sum.Mode, Ignored: sum.Ignored, Git: sum.Git}
	n := 0
	for _, ch := range sum.Changes {
		if len(ch.Path) > 5 && ch.Path[:5] == ".git/" {
			continue // counted in Git; the model wants the project's own files
		}
		if n < maxChangedPaths {
			c.Paths = append(c.Paths, ch.Text())
		}
		n++
	}
	c.More = n - len(c.Paths)
	return c
}

// checkpointInput takes the checkpoint before input is sent to job id of
// session s; one that cannot be taken refuses the input.
func (g *Gate) checkpointInput(s *Session, id string, in JobInput) (*checkpointed, *envelope.Envelope) {
	if g.cps.off {
		return nil, nil
	}
	if _, ok := s.jobs.Get(id); !ok {
		return nil, nil // answered as an unknown job
	}
	sent := in.Text
	for _, k := range in.Keys {
		sent += "<" + k + ">"
	}
	leave := func() *checkpoint.Leave { return g.checkpointLeave(s.box) }
	cp, err := g.cps.open()
	var n int
	if err == nil {
		g.cps.leaving.Lock()
		cp.s.SetLeave(leave())
		n, err = cp.s.Snapshot("input", "job "+id+" input: "+sent, s.id)
		g.cps.leaving.Unlock()
	}
	if err != nil {
		env := envelope.NotRun("", map[string]any{"job_id": id}, envelope.Err{Code: envelope.CheckpointFailed,
			Message: fmt.Sprintf("Not sent: the checkpoint of the project before it could not be taken (%v). The user can fix that or turn checkpoints off (--checkpoints off).", err)})
		return nil, &env
	}
	return &checkpointed{g: g.cps, leave: leave, cp: cp, id: n, input: true}, nil
}

// undoCovers reports whether undo covers the git commands of a line the
// policy allowed because lose-work is relaxed: every place a git command
// may work in — where it starts, what git -C, --git-dir, --work-tree and
// GIT_DIR and its kin name — must be known from the line and one a
// checkpoint keeps whole (checkpoint.Covers: inside the root, not ignored,
// its repository's .git inside the root: the root's own or a nested
// repository's, whose working files and .git a checkpoint keeps as the
// root's). Not when the root's .git is a file (a worktree: the repository
// is elsewhere), nor for git clean -x/-X (checkpoints leave the ignored
// bulk out).
func (g *Gate) undoCovers(v policy.Verdict, dir string, confined bool) bool {
	if fi, err := os.Lstat(filepath.Join(g.root, ".git")); err == nil && !fi.IsDir() {
		// A worktree's or submodule's .git file: its index, refs and objects
		// are outside the root, where no checkpoint reaches.
		return false
	}
	// The variables that point git elsewhere, as set on the line: on a
	// command (for it) or exported (for the rest of the line, so for any
	// git command).
	var exported []analysis.Assignment
	for _, c := range v.Commands {
		for _, a := range c.Assigns {
			if slices.Contains(gitPlaces, a.Name) {
				if a.Dynamic || !staticPath(a.Value) {
					return false
				}
				if a.Export || c.Name != "git" {
					exported = append(exported, a)
				}
			}
		}
	}
	gits := 0
	for _, c := range v.Commands {
		if c.Name != "git" {
			continue
		}
		gits++
		if c.Sub == "clean" {
			// -x and -X remove ignored files, which checkpoints leave out
			// (node_modules, build output) beyond the small ones.
			for _, o := range c.Opts {
				if o.Name == "x" || o.Name == "X" {
					return false
				}
			}
		}
		if slices.Contains(c.Via, "find -execdir") || slices.Contains(c.Via, "find -okdir") {
			// It runs in the directory of each file found, anywhere below
			// the directories the line names.
			return false
		}
		if len(c.Dirs) == 0 {
			// Where it starts is not known from the line.
			return false
		}
		for _, d := range c.Dirs {
			// Every directory it may start in: after `cd sub; git …` (a
			// subshell, bash -c, pushd) the root too, should cd fail.
			if !g.gitCovered(c, d, exported, confined) {
				return false
			}
		}
	}
	// Variables set for no git command of the line may still reach one it
	// starts (a script): they must name kept places from where the line is.
	if len(exported) > 0 && gits == 0 {
		for _, a := range exported {
			if !g.covered(placeIn(dir, a.Value), confined) {
				return false
			}
		}
	}
	return true
}

// gitCovered reports whether git command c, started in directory d, works
// only in places a checkpoint keeps: d after its -C options, the
// directories its --git-dir and --work-tree and GIT_DIR and its kin name.
func (g *Gate) gitCovered(c analysis.Command, d string, exported []analysis.Assignment, confined bool) bool {
	if !filepath.IsAbs(d) {
		d = filepath.Join(g.root, d)
	}
	if d != g.root && !strings.HasPrefix(d, g.root+string(filepath.Separator)) {
		// started outside the root: confinement's to judge, as before
		return true
	}
	var named []string
	for _, o := range c.Global {
		switch o.Name {
		case "C", "git-dir", "work-tree":
			if o.At < len(c.Flags) && c.Flags[o.At]&(analysis.ArgDynamic|analysis.ArgGlob) != 0 || !staticPath(o.Value) || o.Value == "" {
				return false
			}
			if o.Name == "C" {
				d = placeIn(d, o.Value)
			} else {
				named = append(named, o.Value)
			}
		}
	}
	if !g.covered(d, confined) {
		return false
	}
	for _, a := range c.Assigns {
		if slices.Contains(gitPlaces, a.Name) {
			named = append(named, a.Value)
		}
	}
	for _, a := range exported {
		named = append(named, a.Value)
	}
	for _, n := range named {
		if !g.covered(placeIn(d, n), confined) {
			return false
		}
	}
	return true
}

// covered is checkpoint.Covers of place and, where no sandbox keeps writes
// in the root (confined false), only of a place that is there now: one the
// line makes may be a symlink out of the root (`python3 -c
// 'os.symlink(...)'`, which no rule reads), where git would throw away work
// no checkpoint holds.
func (g *Gate) covered(place string, confined bool) bool {
	if _, err := os.Lstat(place); err != nil && !confined {
		return false
	}
	return checkpoint.Covers(g.root, place, g.cps.opts.MaxFileSize)
}

// placeIn is path p as a program started in dir finds it.
func placeIn(dir, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(dir, p)
}

// staticPath reports a path the line spells out: nothing the shell or git
// expands later (a variable, a glob, ~).
func staticPath(p string) bool {
	return !strings.ContainsAny(p, "$`*?[]{}~")
}

// gitPlaces are the variables that point git at another repository or
// work tree than the one its directory is in.
var gitPlaces = []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY"}
