package checkpoint

import (
	"crypto/sha1"
	"encoding/json"
	"errors"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/shellgate/shellgate/internal/gitstate"
	"github.com/shellgate/shellgate/internal/protect"
)

// Leave is what a checkpoint leaves out besides the ignored bulk: the
// protected paths that a sandboxed session's guard moves out of the root
// when they appear (hooks, editor tasks, agent settings: what runs code
// later). A checkpoint that held one would give it back to the root with
// `shellgate undo`, on the host, after the guard moved it (a job making
// it again and again, caught by the checkpoint before a call): undo would
// bypass the quarantine. The protected paths the session started with, and
// those an approval kept, are in Kept and are kept as any file.
//
// Under any Leave, symlinks in .git are left out as well: the guard removes
// them (git makes none there; `.git/index` linked to a file of a job's would
// have git on the host read that).
//
// A path left out is neither kept nor, by that checkpoint's undo, restored;
// undo to a checkpoint that left it out removes it if it is there, as any
// file made since (shown first).
type Leave struct {
	// Paths are protected paths relative to the root (slash-separated): each
	// is left out with everything beneath it.
	Paths []string `json:"paths,omitempty"`
	// Patterns name protected entries of the root's top (path.Match of
	// one name: "*.code-workspace").
	Patterns []string `json:"patterns,omitempty"`
	// Kept are paths relative to the root kept anyway, with everything
	// beneath: there when the session started, or kept by an approval.
	Kept []string `json:"kept,omitempty"`
	// GitFile: a .git file at the root's top (a "gitdir: …" pointer) is
	// left out; it was not there when the session started.
	GitFile bool `json:"gitfile,omitempty"`
	// GitIndex: the index files and todo lists in .git (the root's, its
	// worktrees' and submodules') are kept as the guard of the root's git
	// state would leave them, knowing GitKnown (sorted; gitstate.Without,
	// gitstate.TodoKnown): without the gitlinks, flags and caches a job set
	// between the guard's looks (a gitlink makes git status on the host run
	// the config of the repository it names), and a todo list with exec
	// lines the guard does not know (`git rebase --continue` runs them) is
	// left out.
	GitIndex bool     `json:"gitindex,omitempty"`
	GitKnown []string `json:"gitknown,omitempty"`
	// GitKnownVersion names GitKnown: the same version, the same list
	// (key compares it instead).
	GitKnownVersion string `json:"gitknownv,omitempty"`
}

// key names what l leaves out: a checkpoint's incremental walk takes
// directories as the last checkpoint had them only when that one left out
// the same.
func (l *Leave) key() string {
	if l == nil {
		return ""
	}
	c := *l
	c.GitKnown = nil // named by its version: it may be long
	b, _ := json.Marshal(&c)
	return string(b)
}

// out reports whether l leaves out rel, a path relative to the root.
func (l *Leave) out(rel string) bool {
	if l == nil {
		return false
	}
	hit := false
	for _, p := range l.Paths {
		if under(rel, p) {
			hit = true
			break
		}
	}
	if !hit && !strings.Contains(rel, "/") {
		for _, pat := range l.Patterns {
			if ok, _ := path.Match(pat, rel); ok {
				hit = true
				break
			}
		}
	}
	if !hit {
		return false
	}
	for _, k := range l.Kept {
		if under(rel, k) {
			return false
		}
	}
	return true
}

// under reports whether rel is p or lies beneath it.
func under(rel, p string) bool {
	return rel == p || len(rel) > len(p) && rel[len(p)] == '/' && rel[:len(p)] == p
}

// SetLeave makes what the store's checkpoints leave out from now on l (nil:
// nothing but the ignored bulk). A Gate whose sandboxed session guards the
// protected paths sets it (see Leave).
func (s *Store) SetLeave(l *Leave) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.leave = l
}

// SnapshotLeaving is Snapshot leaving out what l says (SetLeave), for a
// process that checkpoints for others (package keeper).
func (s *Store) SnapshotLeaving(l *Leave, label, command, session string) (int, error) {
	s.leaving.Lock()
	defer s.leaving.Unlock()
	s.SetLeave(l)
	return s.Snapshot(label, command, session)
}

// FinishLeaving is Finish leaving out what l says.
func (s *Store) FinishLeaving(l *Leave, id int) (Summary, error) {
	s.leaving.Lock()
	defer s.leaving.Unlock()
	s.SetLeave(l)
	return s.Finish(id)
}

// guardsGit reports whether the pass keeps the file at path (its path in
// the pass) as the guard of the git state would leave it (Leave.GitIndex).
func (p *scanPass) guardsGit(path string) bool {
	return p.git && p.s.leave != nil && p.s.leave.GitIndex && guardedGitFile(path)
}

// guardedGitFile reports whether path in .git is an index or a todo list
// the guard of the git state looks at.
func guardedGitFile(path string) bool {
	_, ok := gitstate.IndexGitDir(path)
	return ok || gitstate.IsTodo(path)
}

// errGuardMoves: an index the guard would move aside (gitstate.Without),
// which the checkpoint leaves out.
var errGuardMoves = errors.New("checkpoint: an index the guard moves aside")

// storeGuarded stores the index or todo list at path (rel in .git) as the
// guard of the root's git state would leave it (Leave.GitIndex).
func (s *Store) storeGuarded(path, rel string) ([sha1.Size]byte, error) {
	data, err := readSmall(path, s.maxFileSize())
	if errors.Is(err, errTooLong) {
		return [sha1.Size]byte{}, &overSizeError{int64(len(data))}
	}
	if err != nil {
		return [sha1.Size]byte{}, err
	}
	kept, ok := data, true
	if gd, index := gitstate.IndexGitDir(rel); index {
		kept, ok = s.guardedIndex(data, gd)
	} else {
		ok = gitstate.TodoKnown(data, s.leave.GitKnown)
	}
	if !ok {
		return [sha1.Size]byte{}, errGuardMoves
	}
	return s.storeBlob(kept)
}

// guardedIndex is index data of git directory gd as the guard would leave
// it; false for one it would move aside.
func (s *Store) guardedIndex(data []byte, gd string) ([]byte, bool) {
	// Git reads the root's index for the root; a linked worktree's or a
	// submodule's paths are not looked up here: nothing counts as absent
	// there, as where the guard finds no worktree.
	absent := func(string) bool { return false }
	if gd == ".git" {
		absent = func(p string) bool {
			_, err := os.Lstat(filepath.Join(s.root, filepath.FromSlash(p)))
			return err != nil
		}
	}
	_, err := os.Lstat(filepath.Join(s.root, filepath.FromSlash(gd), "info", "sparse-checkout"))
	return gitstate.Without(data, gd, s.leave.GitKnown, absent, err == nil)
}

// leaves reports whether the pass leaves out path (its path in the pass):
// what l says, and anywhere what the sandbox moved aside beside itself (as
// the quarantine directory: undo neither deletes it nor brings it back).
func (p *scanPass) leaves(path string) bool {
	if strings.HasPrefix(path[strings.LastIndexByte(path, '/')+1:], protect.QuarantinedPrefix) {
		return true
	}
	l := p.s.leave
	if l == nil {
		return false
	}
	if p.git {
		path = ".git/" + path
	}
	return l.out(path)
}

// replan makes plan (a pass's; git: the .git pass) read again, whole, each
// directory that holds a path one of ls leaves out or keeps: what the last
// checkpoint took there under another Leave is not what this one takes. The
// rest of the plan stands, so a Leave that changes costs a look at a few
// directories, not a walk of the root.
func replan(plan *walkPlan, git bool, ls ...*Leave) {
	if plan == nil {
		return
	}
	mark := func(dir string) {
		plan.dirty[dir] = true
		delete(plan.names, dir)
		for d := dir; d != ""; {
			parent, name := "", d
			if j := strings.LastIndexByte(d, '/'); j >= 0 {
				parent, name = d[:j], d[j+1:]
			}
			plan.below[parent] = true
			if plan.kids[parent] == nil {
				plan.kids[parent] = map[string]bool{}
			}
			plan.kids[parent][name] = true
			d = parent
		}
	}
	for _, l := range ls {
		if l == nil {
			continue
		}
		for _, p := range append(slices.Clone(l.Paths), l.Kept...) {
			rel, inGit := strings.CutPrefix(p, ".git/")
			if inGit != git {
				continue
			}
			dir := ""
			if j := strings.LastIndexByte(rel, '/'); j >= 0 {
				dir = rel[:j]
			}
			mark(dir)
		}
		if !git && len(l.Patterns) > 0 {
			mark("")
		}
	}
}
