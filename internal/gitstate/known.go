package gitstate

import (
	"slices"
	"strings"
)

// flagKey names an index flag or entry kind ("gitlink", "sparse-dir",
// "assume-unchanged", "skip-worktree"; FSMN, UNTR or link with no path) on
// path in git directory gd, as a Tracker knows it.
func flagKey(gd, what, path string) string { return gd + "\x00" + what + "\x00" + path }

// execKey names an exec line of a todo list, in any git directory.
func execKey(cmd string) string { return "exec\x00" + cmd }

// news is what an index holds that is not known.
type news struct {
	drop  []int // gitlinks and sparse directories
	clear []int // entries with a flag newly set
	exts  bool  // FSMN or UNTR newly there
	split bool  // newly a split index, which is not rewritten here
	// pending: gitlinks not known with no repository at their paths yet, to
	// look at again even if the index does not change
	pending bool
}

func (n news) any() bool { return len(n.drop)+len(n.clear) > 0 || n.exts || n.split }

// newIn finds what ix holds that known does not hold, for git directory gd;
// sparse says skip-worktree and sparse directory entries are git's own
// there (a sparse checkout), for paths absent from the worktree. A gitlink
// counts once a repository is at its path: git status recurses into none
// before (git checkout of a branch with a submodule makes such a gitlink).
func newIn(known map[string]bool, ix *Index, gd string, absent func(string) bool, sparse bool) (n news) {
	if ix.Split() {
		n.split = !known[flagKey(gd, "link", "")]
		return n // its entries are partly in the shared index
	}
	for i := range ix.Entries {
		e := &ix.Entries[i]
		switch {
		case e.Gitlink() && !known[flagKey(gd, "gitlink", e.Path)] && absent(e.Path+"/.git"):
			n.pending = true
		case e.Gitlink() && !known[flagKey(gd, "gitlink", e.Path)],
			e.SparseDir() && !known[flagKey(gd, "sparse-dir", e.Path)] && !(sparse && absent(e.Path)):
			n.drop = append(n.drop, i)
		case e.AssumeValid && !known[flagKey(gd, "assume-unchanged", e.Path)],
			e.SkipWorktree && !known[flagKey(gd, "skip-worktree", e.Path)] && !(sparse && absent(e.Path)):
			n.clear = append(n.clear, i)
		}
	}
	for _, x := range ix.Extensions {
		if (x.Sig == "FSMN" || x.Sig == "UNTR") && !known[flagKey(gd, x.Sig, "")] {
			n.exts = true
		}
	}
	return n
}

// undo clears the flags and drops the entries of n in ix, and names them:
// dropped the paths, cleared each "flag on path".
func (n news) undo(known map[string]bool, ix *Index, gd string, absent func(string) bool, sparse bool) (dropped, cleared []string) {
	for _, i := range n.clear {
		e := &ix.Entries[i]
		if e.AssumeValid && !known[flagKey(gd, "assume-unchanged", e.Path)] {
			e.AssumeValid = false
			cleared = append(cleared, "assume-unchanged on "+e.Path)
		}
		if e.SkipWorktree && !known[flagKey(gd, "skip-worktree", e.Path)] && !(sparse && absent(e.Path)) {
			e.SkipWorktree = false
			cleared = append(cleared, "skip-worktree on "+e.Path)
		}
	}
	for _, i := range slices.Backward(n.drop) {
		dropped = append(dropped, ix.Entries[i].Path)
		ix.Entries = slices.Delete(ix.Entries, i, i+1)
	}
	slices.Reverse(dropped)
	return dropped, cleared
}

// IndexGitDir is the git directory (".git", ".git/worktrees/NAME",
// ".git/modules/…") whose index is at rel, a path in the root's .git
// (slash-separated, without ".git/"); false when rel is no index a Tracker
// looks at.
func IndexGitDir(rel string) (string, bool) { return gitDirOf(rel, "index") }

// IsTodo reports whether rel, a path in the root's .git as IndexGitDir
// takes it, is a todo list (TodoFiles) of a git directory a Tracker looks at.
func IsTodo(rel string) bool {
	for _, name := range TodoFiles {
		if _, ok := gitDirOf(rel, name); ok {
			return true
		}
	}
	return false
}

// gitDirOf is the git directory holding name at rel (see IndexGitDir).
func gitDirOf(rel, name string) (string, bool) {
	dir, ok := strings.CutSuffix(rel, name)
	switch {
	case !ok:
		return "", false
	case dir == "":
		return ".git", true
	case !strings.HasSuffix(dir, "/"):
		return "", false
	}
	dir = strings.TrimSuffix(dir, "/")
	if w, ok := strings.CutPrefix(dir, "worktrees/"); ok && w != "" && !strings.Contains(w, "/") ||
		strings.HasPrefix(dir, "modules/") && len(dir) > len("modules/") {
		return ".git/" + dir, true
	}
	return "", false
}

// TodoKnown reports whether a Tracker knowing known (sorted, as
// Tracker.Known gives it) would leave the todo list todo where it is: every
// exec line in it is known.
func TodoKnown(todo []byte, known []string) bool {
	for _, c := range ExecLines(todo) {
		if _, found := slices.BinarySearch(known, execKey(c)); !found {
			return false
		}
	}
	return true
}

// Without returns index data of git directory gd as a Tracker knowing known
// (Tracker.Known) would leave it: without the gitlinks, sparse directory
// entries, skip-worktree and assume-unchanged flags and fsmonitor and
// untracked caches it does not know; data itself when there are none. absent
// reports whether a path (relative to the worktree) is missing there; sparse
// says the worktree is a sparse checkout. ok is false for an index the
// Tracker would move aside: one that does not parse, or a split index it does
// not know.
func Without(data []byte, gd string, known []string, absent func(string) bool, sparse bool) (out []byte, ok bool) {
	ix, err := Parse(data)
	if err != nil {
		return nil, false
	}
	set := make(map[string]bool, len(known))
	for _, k := range known {
		set[k] = true
	}
	n := newIn(set, ix, gd, absent, sparse)
	if n.split {
		return nil, false
	}
	if !n.any() {
		return data, true
	}
	dropped, _ := n.undo(set, ix, gd, absent, sparse)
	out, err = ix.Encode(dropped)
	return out, err == nil
}

// DropGitlinks returns index data without its gitlinks that keep does not
// keep (data itself when there are none); ok is false for data that does
// not parse, or a split index, whose entries are partly elsewhere.
func DropGitlinks(data []byte, keep func(path string) bool) (out []byte, ok bool) {
	ix, err := Parse(data)
	if err != nil || ix.Split() {
		return nil, false
	}
	var dropped []string
	ix.Entries = slices.DeleteFunc(ix.Entries, func(e Entry) bool {
		if e.Gitlink() && !keep(e.Path) {
			dropped = append(dropped, e.Path)
			return true
		}
		return false
	})
	if len(dropped) == 0 {
		return data, true
	}
	out, err = ix.Encode(dropped)
	return out, err == nil
}
