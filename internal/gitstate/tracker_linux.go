package gitstate

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/shellgate/shellgate/internal/beneath"
	"golang.org/x/sys/unix"
)

// Bounds on what is read.
const (
	maxIndexBytes  = 1 << 30
	maxTodoBytes   = 64 << 20
	maxWorktrees   = 1000 // and submodules in a directory
	maxModuleDepth = 8
)

// Tracker remembers a project's git state as the session started with it
// and as approved commands (or the user, between commands) left it, and
// undoes what else appears: in .git, each .git/worktrees/* directory and
// each submodule's git directory under .git/modules, the
// index's gitlinks, sparse directory entries, skip-worktree and
// assume-unchanged flags, and its fsmonitor and untracked caches (which can
// also say a changed file is unchanged); and the exec lines of the
// sequencer's todo lists. Every path is resolved beneath the root without
// symlinks (package beneath).
type Tracker struct {
	root   string
	linked []string          // git directories outside the root: a linked worktree's
	base   map[string]bool   // what is known: see the key functions below
	clean  map[string]fileID // index files last seen with nothing new, by git directory
	sparse map[string]bool   // git directories last seen with a sparse checkout
}

type fileID struct{ dev, ino, size, ctime, ctimeNsec int64 }

// New takes the state of root's git directory as the session's start, and
// of the linked ones (absolute: a linked worktree's git directory, when the
// root is one).
func New(root string, linked ...string) *Tracker {
	t := &Tracker{root: root, linked: linked, base: map[string]bool{}, clean: map[string]fileID{}, sparse: map[string]bool{}}
	t.Check(func() bool { return false }, nil)
	return t
}

// Check compares the git state with what is known. What is new is, if
// aside says so, undone — entries dropped and flags cleared in a rewritten
// index, a todo list with new exec lines (or an index that cannot be read
// here) moved aside with quarantine — and told in notes, moved naming
// "path → where"; else it becomes known (the user's, or an approved
// command's).
func (t *Tracker) Check(aside func() bool, quarantine func(string) (string, error)) (moved, notes []string, err error) {
	rootFD, err := unix.Open(t.root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, nil
	}
	defer unix.Close(rootFD)
	return t.CheckIn(rootFD, aside, quarantine)
}

// CheckIn is Check of the root open as rootFD (the directory the Tracker
// was made for, as a caller that keeps it open has it): an open and a close
// fewer at each look.
func (t *Tracker) CheckIn(rootFD int, aside func() bool, quarantine func(string) (string, error)) (moved, notes []string, err error) {
	var errs []error
	for _, gd := range append(gitDirs(rootFD), t.linked...) {
		var gdFD int
		if filepath.IsAbs(gd) {
			gdFD, err = unix.Open(gd, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		} else {
			gdFD, err = beneath.Dir(rootFD, gd)
		}
		if err != nil {
			continue
		}
		m, n, err := t.checkIndex(gdFD, gd, aside, quarantine)
		moved, notes, errs = append(moved, m...), append(notes, n...), append(errs, err)
		m, n, err = t.checkTodos(gdFD, gd, aside, quarantine)
		moved, notes, errs = append(moved, m...), append(notes, n...), append(errs, err)
		unix.Close(gdFD)
	}
	return moved, notes, errors.Join(errs...)
}

// Known lists the index entries and flags and the todo lists' exec lines t
// knows (for Without and TodoKnown), sorted, with a count that only grows
// as t learns; a caller holding the list of count n need not take it again
// while Known's count is n. In a sparse checkout the skip-worktree flags and
// sparse directory entries are left out: git sets one on every path outside
// the checkout (hundreds of thousands in a large repository), and Without
// takes them as git's own there for paths absent from the worktree.
func (t *Tracker) Known() ([]string, int) {
	keys := make([]string, 0, len(t.base))
	for k := range t.base {
		if gd, rest, ok := strings.Cut(k, "\x00"); ok && t.sparse[gd] &&
			(strings.HasPrefix(rest, "skip-worktree\x00") || strings.HasPrefix(rest, "sparse-dir\x00")) {
			continue
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys, len(t.base)
}

// KnownCount is Known's count alone.
func (t *Tracker) KnownCount() int { return len(t.base) }

// gitDirs lists the root's git directory and its linked worktrees', relative
// to the root.
func gitDirs(rootFD int) []string {
	gd, err := beneath.Dir(rootFD, ".git")
	if err != nil {
		return nil
	}
	unix.Close(gd)
	dirs := []string{".git"}
	if wt, err := beneath.Dir(rootFD, ".git/worktrees"); err == nil {
		f, err := beneath.Open(wt, ".", unix.O_DIRECTORY)
		unix.Close(wt)
		if err == nil {
			names, _ := f.Readdirnames(maxWorktrees)
			f.Close()
			slices.Sort(names)
			for _, n := range names {
				dirs = append(dirs, ".git/worktrees/"+n)
			}
		}
	}
	return append(dirs, moduleDirs(rootFD, ".git/modules", 0)...)
}

// moduleDirs lists the submodules' git directories under rel: those holding
// a HEAD (a submodule's name may have slashes), and theirs in turn.
func moduleDirs(rootFD int, rel string, depth int) []string {
	if depth > maxModuleDepth {
		return nil
	}
	d, err := beneath.Dir(rootFD, rel)
	if err != nil {
		return nil
	}
	defer unix.Close(d)
	if fileExists(d, "HEAD") {
		return append([]string{rel}, moduleDirs(rootFD, rel+"/modules", depth+1)...)
	}
	f, err := beneath.Open(d, ".", unix.O_DIRECTORY)
	if err != nil {
		return nil
	}
	names, _ := f.Readdirnames(maxWorktrees)
	f.Close()
	slices.Sort(names)
	var dirs []string
	for _, n := range names {
		dirs = append(dirs, moduleDirs(rootFD, rel+"/"+n, depth+1)...)
	}
	return dirs
}

// learn makes everything ix holds known; a gitlink with no repository at
// its path only if all.
func (t *Tracker) learn(ix *Index, gd string, absent func(string) bool, all bool) {
	if ix.Split() {
		t.base[flagKey(gd, "link", "")] = true
	}
	for _, e := range ix.Entries {
		mark := func(what string, on bool) {
			if on {
				t.base[flagKey(gd, what, e.Path)] = true
			}
		}
		mark("gitlink", e.Gitlink() && (all || !absent(e.Path+"/.git")))
		mark("sparse-dir", e.SparseDir())
		mark("assume-unchanged", e.AssumeValid)
		mark("skip-worktree", e.SkipWorktree)
	}
	for _, x := range ix.Extensions {
		if x.Sig == "FSMN" || x.Sig == "UNTR" {
			t.base[flagKey(gd, x.Sig, "")] = true
		}
	}
}

func (t *Tracker) checkIndex(gdFD int, gd string, aside func() bool, quarantine func(string) (string, error)) (moved, notes []string, err error) {
	ix, id, err := readIndex(gdFD, "index", Scan)
	if err != nil && errors.Is(err, unix.ENOENT) || id == t.clean[gd] && id != (fileID{}) {
		return nil, nil, nil
	}
	worktree := t.worktreeOf(gdFD, gd)
	sparse := fileExists(gdFD, "info/sparse-checkout")
	t.sparse[gd] = sparse
	absent := func(p string) bool {
		return worktree != "" && !fileExists(unix.AT_FDCWD, filepath.Join(worktree, p))
	}
	if err == nil {
		if n := newIn(t.base, ix, gd, absent, sparse); !n.any() || !aside() {
			// The user's or an approved command's gitlinks are known, repository
			// or not.
			all := n.any() || n.pending && !aside()
			t.learn(ix, gd, absent, all)
			if !n.pending || all {
				t.clean[gd] = id
			}
			return nil, nil, nil
		}
	} else if !aside() {
		return nil, nil, nil // the user's, which git may read where this does not
	}
	return t.fixIndex(gdFD, gd, absent, sparse, quarantine)
}

// fixIndex rewrites gd's index without what is new, under git's own lock
// (index.lock: a stale one a command left is moved aside first), or moves
// an index it cannot read or rewrite aside.
func (t *Tracker) fixIndex(gdFD int, gd string, absent func(string) bool, sparse bool, quarantine func(string) (string, error)) (moved, notes []string, err error) {
	index := filepath.Join(t.root, gd, "index")
	lock, err := unix.Openat(gdFD, "index.lock", unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
	if err == unix.EEXIST && quarantine != nil {
		if to, qerr := quarantine(index + ".lock"); qerr == nil {
			moved = append(moved, index+".lock → "+to)
			lock, err = unix.Openat(gdFD, "index.lock", unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
		}
	}
	if err != nil {
		return moved, nil, fmt.Errorf("%s: %w", index+".lock", err)
	}
	locked := true
	defer func() {
		unix.Close(lock)
		if locked {
			unix.Unlinkat(gdFD, "index.lock", 0)
		}
	}()
	ix, _, err := readIndex(gdFD, "index", Parse)
	var n news
	if err == nil {
		n = newIn(t.base, ix, gd, absent, sparse)
	}
	if err != nil || n.split {
		why := "it is a split index"
		if err != nil {
			why = err.Error()
		}
		if quarantine == nil {
			return moved, nil, fmt.Errorf("%s: %s", index, why)
		}
		to, qerr := quarantine(index)
		if qerr != nil {
			return moved, nil, qerr
		}
		return append(moved, index+" → "+to), []string{fmt.Sprintf("%s/index could not be checked here (%s), so it was moved aside: git status shows every file as new until `git reset`", gd, why)}, nil
	}
	dropped, cleared := n.undo(t.base, ix, gd, absent, sparse)
	data, err := ix.Encode(dropped)
	if err == nil {
		err = writeAll(lock, data)
	}
	if err == nil {
		err = unix.Renameat(gdFD, "index.lock", gdFD, "index")
	}
	if err != nil {
		return moved, nil, fmt.Errorf("%s: %w", index, err)
	}
	locked = false
	var st unix.Stat_t
	if unix.Fstatat(gdFD, "index", &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
		t.clean[gd] = idOf(&st)
	}
	var did []string
	if len(dropped) > 0 {
		did = append(did, "dropped the gitlinks "+strings.Join(dropped, ", ")+" (git status in the root would run the config of the repositories they name; the files stay)")
	}
	if len(cleared) > 0 {
		did = append(did, "cleared "+strings.Join(cleared, ", ")+" (they hid changes from git status and git diff)")
	}
	if n.exts {
		did = append(did, "dropped its fsmonitor and untracked caches (git rebuilds them)")
	}
	return moved, []string{gd + "/index: " + strings.Join(did, "; ")}, nil
}

// checkTodos moves aside a todo list holding exec lines that are not known.
func (t *Tracker) checkTodos(gdFD int, gd string, aside func() bool, quarantine func(string) (string, error)) (moved, notes []string, err error) {
	for _, name := range TodoFiles {
		f, oerr := openBeneath(gdFD, name)
		if oerr != nil {
			continue
		}
		data, rerr := io.ReadAll(io.LimitReader(f, maxTodoBytes))
		f.Close()
		var unknown []string
		for _, c := range ExecLines(data) {
			if !t.base[execKey(c)] {
				unknown = append(unknown, c)
			}
		}
		if rerr != nil || len(unknown) == 0 {
			continue
		}
		if !aside() || quarantine == nil {
			for _, c := range unknown {
				t.base[execKey(c)] = true
			}
			continue
		}
		p := filepath.Join(t.root, gd, name)
		if filepath.IsAbs(gd) {
			p = filepath.Join(gd, name)
		}
		to, qerr := quarantine(p)
		if qerr != nil {
			err = errors.Join(err, qerr)
			continue
		}
		moved = append(moved, p+" → "+to)
		notes = append(notes, fmt.Sprintf("%s/%s held exec lines no approved command left (%s): moved aside, so that git on the host cannot run them at `git rebase --continue`; `git rebase --abort` still works", gd, name, strings.Join(unknown, "; ")))
	}
	return moved, notes, err
}

// readIndex reads name in gdFD, a regular file not reached through a
// symlink, and parses it with parse (Parse or Scan).
func readIndex(gdFD int, name string, parse func([]byte) (*Index, error)) (*Index, fileID, error) {
	f, err := beneath.Open(gdFD, name, 0)
	if err != nil {
		return nil, fileID{}, err
	}
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return nil, fileID{}, err
	}
	id := idOf(&st)
	if st.Size > maxIndexBytes {
		return nil, id, fmt.Errorf("%s: larger than %d bytes", name, maxIndexBytes)
	}
	data := make([]byte, st.Size)
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, id, err
	}
	ix, err := parse(data)
	return ix, id, err
}

func idOf(st *unix.Stat_t) fileID {
	return fileID{int64(st.Dev), int64(st.Ino), st.Size, st.Ctim.Sec, st.Ctim.Nsec}
}

// openBeneath opens rel (with slashes) in dirFD, a regular file, through no
// symlink.
func openBeneath(dirFD int, rel string) (interface {
	io.Reader
	Close() error
}, error) {
	d, err := beneath.Dir(dirFD, filepath.Dir(rel))
	if err != nil {
		return nil, err
	}
	defer unix.Close(d)
	return beneath.Open(d, filepath.Base(rel), 0)
}

func fileExists(dirFD int, rel string) bool {
	var st unix.Stat_t
	return unix.Fstatat(dirFD, rel, &st, unix.AT_SYMLINK_NOFOLLOW) == nil
}

func writeAll(fd int, b []byte) error {
	for len(b) > 0 {
		n, err := unix.Write(fd, b)
		if err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

// Judge returns index data that a command is putting in place as git
// directory gd's index (".git", ".git/worktrees/NAME", ".git/modules/…")
// as t would leave it when it next looks (Check, aside): without the
// gitlinks, sparse directory entries and flags it does not know. It judges
// on the way in, so that what reaches the host's index never holds them,
// even for the moment before a look; ok is false for data t would move
// aside (it does not parse, or is a split index t does not know). The
// worktree and sparse checkout are found as Check finds them.
func (t *Tracker) Judge(gd string, data []byte) (out []byte, ok bool) {
	rootFD, err := unix.Open(t.root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, false
	}
	defer unix.Close(rootFD)
	var gdFD int
	if filepath.IsAbs(gd) { // a linked worktree's (New's linked)
		gdFD, err = unix.Open(gd, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	} else {
		gdFD, err = beneath.Dir(rootFD, gd)
	}
	if err != nil {
		return nil, false
	}
	defer unix.Close(gdFD)
	worktree := t.worktreeOf(gdFD, gd)
	absent := func(p string) bool {
		return worktree != "" && !fileExists(unix.AT_FDCWD, filepath.Join(worktree, p))
	}
	known, _ := t.Known()
	return Without(data, gd, known, absent, fileExists(gdFD, "info/sparse-checkout"))
}

// worktreeOf is the work tree whose index the git directory gd (gdFD) holds:
// the root for .git at the root, and for a linked worktree's the directory
// its gitdir file names; "" where it names none (nothing counts as absent
// there).
func (t *Tracker) worktreeOf(gdFD int, gd string) string {
	if gd == ".git" {
		return t.root
	}
	f, err := beneath.Open(gdFD, "gitdir", 0)
	if err != nil {
		return ""
	}
	b, _ := io.ReadAll(io.LimitReader(f, 4096))
	f.Close()
	if p := strings.TrimSpace(string(b)); filepath.IsAbs(p) {
		return filepath.Dir(p)
	}
	return ""
}
