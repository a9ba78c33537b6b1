package shellgate

import (
	"os"
	"path"
	"path/filepath"
	"slices"

	"github.com/shellgate/shellgate/internal/checkpoint"
	"github.com/shellgate/shellgate/internal/gitstate"
	"github.com/shellgate/shellgate/internal/sandbox"
)

// Checkpoints and the sandbox's guard of the protected paths (issue 20).
//
// The guard moves a protected path that appears in the root (.vscode/,
// .git/hooks, *.code-workspace …) to the quarantine, unless it was there when
// the session started, the user made it on the host, or an approval kept it:
// those are made read-only where they are. A checkpoint taken meanwhile — a
// job making .vscode/tasks.json again and again, the next call's checkpoint
// before it — would hold what the guard moves, and `shellgate undo`, on the
// host after the session, would write it into the root, where nothing moves
// it. So the checkpoints of a guarded session leave out the protected paths
// the guard does not keep: the protected paths (Spec.Protected, Spec.Patterns
// at the top) less those there when the first session started and those its
// sessions kept in place since; and they keep the index files and todo
// lists in .git as the guard of the git state leaves them (no gitlink, flag
// or cache it did not know; no todo list with an exec line it did not know). Without
// the sandbox nothing is left out: undo brings back a .git removed by rm -rf
// as before.

// leaveAtStart is what checkpoints leave out of the root under spec's
// guard, as the session is about to start: the protected paths there now
// are kept. nil where there is no guard to follow (nothing protected, no
// quarantine).
func leaveAtStart(root string, spec sandbox.Spec) *checkpoint.Leave {
	if spec.Quarantine == "" || len(spec.Writable) == 0 || spec.Writable[0] != root {
		return nil
	}
	l := &checkpoint.Leave{Patterns: slices.Clone(spec.Patterns)}
	for _, p := range spec.Protected {
		rel, ok := relInRoot(root, p)
		if !ok {
			continue // a linked worktree's git directory: outside the checkpoints
		}
		l.Paths = append(l.Paths, rel)
		if _, err := os.Lstat(p); err == nil {
			l.Kept = append(l.Kept, rel)
		}
	}
	if len(l.Patterns) > 0 {
		if names, err := readNames(root); err == nil {
			for _, n := range names {
				for _, pat := range l.Patterns {
					if ok, _ := path.Match(pat, n); ok {
						l.Kept = append(l.Kept, n)
						break
					}
				}
			}
		}
	}
	// The guard moves a .git that is not a directory ("gitdir: …") unless
	// the root had a .git when the session started.
	if _, err := os.Lstat(filepath.Join(root, ".git")); err != nil {
		l.GitFile = true
	}
	// It moves a git todo list by its content (exec lines no approved
	// command left: `git rebase --continue` on the host would run them):
	// the root's todo lists are left out unless the session started with
	// them. A rebase begun in the session is then not in its checkpoints.
	for _, name := range gitstate.TodoFiles {
		rel := ".git/" + name
		l.Paths = append(l.Paths, rel)
		if fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(rel))); err == nil && fi.Mode().IsRegular() {
			l.Kept = append(l.Kept, rel)
		}
	}
	slices.Sort(l.Kept)
	return l
}

// checkpointLeave is what a checkpoint for a command of b leaves out: nil
// (nothing) until b's first session started with a guard.
func (g *Gate) checkpointLeave(b *box) *checkpoint.Leave {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.leave == nil {
		return nil
	}
	l := *b.leave
	pinned := b.pinned
	if b.session != nil {
		now, _ := b.session.Guard()
		pinned = append(slices.Clone(pinned), now...)
		// The index as the guard of the git state would leave it: a job's
		// gitlink, written between the guard's looks, is not kept for undo
		// to write back.
		if known, version, ok := b.session.GitKnown(); ok {
			l.GitIndex, l.GitKnown, l.GitKnownVersion = true, known, version
		}
	}
	if len(pinned) > 0 {
		l.Kept = slices.Clone(l.Kept)
		for _, p := range pinned {
			if rel, ok := relInRoot(g.root, p); ok {
				l.Kept = append(l.Kept, rel)
			}
		}
		slices.Sort(l.Kept)
		l.Kept = slices.Compact(l.Kept)
	}
	return &l
}

// relInRoot is p (absolute) relative to root, slash-separated; false when
// p is not beneath root.
func relInRoot(root, p string) (string, bool) {
	rel, err := filepath.Rel(root, p)
	if err != nil || rel == "." || !filepath.IsLocal(rel) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// readNames lists the names in directory dir.
func readNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}
