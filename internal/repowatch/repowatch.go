// Package repowatch finds what in a project runs code later, below its top
// level — nested git repositories and the protected entries tools read in any
// directory (a .claude or .vscode of a subproject) — and reports what appears
// while commands run.
//
// Git on the host runs a repository's own config and hooks (core.fsmonitor, a
// pre-commit hook) when the user runs git there, or runs `git status` in the
// project if its index names that repository. What a Tree finds at the start
// is protected like the root's (by the caller); what appears is reported,
// never judged or moved: the user is told, and decides.
//
// The process's one inotify instance (package inotify) serves every Tree,
// each watching at most its share of the watches; past it, and after events
// were lost, what a Tree could not watch is walked when it closes.
package repowatch

import (
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/shellgate/shellgate/internal/inotify"
	"github.com/shellgate/shellgate/internal/protect"
)

// Found is what a walk or the watch found, relative to the root, each list
// sorted.
type Found struct {
	// Repos are the git repositories: the directory holding a .git (its
	// work tree, "." for the root's own), or a git directory itself (a bare
	// repository, a submodule's under .git/modules).
	Repos []Repo
	// Protected are entries of the protected table (package protect) below
	// the root's top level: .claude, .vscode, .envrc … of a subdirectory.
	Protected []string
}

// Repo is one git repository.
type Repo struct {
	Dir string // as the user knows it: the work tree, or the git directory
	Git string // its .git (a directory, or a file pointing elsewhere), or Dir when bare
}

// Empty reports whether nothing was found.
func (f Found) Empty() bool { return len(f.Repos) == 0 && len(f.Protected) == 0 }

// Bounds of one walk.
const (
	// maxWalked is the most directories a walk reads: what lies beyond is
	// neither protected at the start nor reported.
	maxWalked = 200000
	maxDepth  = 256
)

// A Tree is one project root watched for what appears in it.
type Tree struct {
	root string
	skip []string // relative directories not walked (the quarantine)
	sub  *inotify.Sub

	mu        sync.Mutex
	start     Found
	known     map[string]bool // what was found at the start or reported since
	appeared  found           // found since the last Appeared
	unwatched []string        // directories (and all beneath) no watch covers
	gitDirs   map[string]bool // git directories watched for their modules/ alone
	lost      bool            // the kernel dropped events: walk it all at the close
	closed    bool
}

// found collects a walk's findings without duplicates.
type found struct {
	repos     map[string]Repo
	protected map[string]bool
}

func (f *found) addRepo(r Repo) {
	if f.repos == nil {
		f.repos = map[string]Repo{}
	}
	f.repos[r.Dir] = r
}

func (f *found) addProtected(rel string) {
	if f.protected == nil {
		f.protected = map[string]bool{}
	}
	f.protected[rel] = true
}

// take returns what f holds, sorted, leaving out what known has and adding
// it there; f is emptied.
func (f *found) take(known map[string]bool) Found {
	var out Found
	for dir, r := range f.repos {
		if !known["repo:"+dir] {
			known["repo:"+dir] = true
			out.Repos = append(out.Repos, r)
		}
	}
	for p := range f.protected {
		if !known["path:"+p] {
			known["path:"+p] = true
			out.Protected = append(out.Protected, p)
		}
	}
	slices.SortFunc(out.Repos, func(a, b Repo) int { return strings.Compare(a.Dir, b.Dir) })
	slices.Sort(out.Protected)
	*f = found{}
	return out
}

// Watch walks root, recording what is there (AtStart), and watches it for
// what appears. skip names directories relative to the root not to look in.
// Without inotify the Tree still finds what appeared, when it closes.
func Watch(root string, skip ...string) *Tree {
	t := &Tree{root: root, skip: skip, known: map[string]bool{}, gitDirs: map[string]bool{}, sub: inotify.Subscribe(share())}
	t.mu.Lock()
	defer t.mu.Unlock()
	var start found
	budget := maxWalked
	t.walk(".", &start, true, &budget)
	t.start = start.take(t.known)
	return t
}

// AtStart is what the walk found when the Tree was made.
func (t *Tree) AtStart() Found { return t.start }

// Appeared returns what appeared since the Tree was made or Appeared last
// returned, as far as the watch saw it: a few system calls when nothing did.
func (t *Tree) Appeared() Found {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.drain()
	t.confirm()
	return t.appeared.take(t.known)
}

// Close stops watching and returns what appeared and was not yet returned,
// walking what no watch covered.
func (t *Tree) Close() Found {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return Found{}
	}
	t.drain()
	t.closed = true
	t.sub.Close()
	dirs := t.unwatched
	if t.lost {
		dirs = []string{"."}
	}
	budget := maxWalked
	for _, d := range dirs {
		t.walk(d, &t.appeared, false, &budget)
	}
	t.confirm()
	return t.appeared.take(t.known)
}

// event handles a name made or moved into the watched directory rel, with
// t.mu held.
func (t *Tree) event(rel, name string, isDir bool) {
	if t.closed {
		return
	}
	p := filepath.Join(rel, name)
	if t.gitDirs[rel] { // git's own files come and go: only its modules/ counts
		if name == "modules" && isDir {
			budget := maxWalked
			t.walk(p, &t.appeared, true, &budget)
		}
		return
	}
	switch {
	case name == ".git":
		t.appeared.addRepo(Repo{Dir: rel, Git: p})
	case name == "HEAD":
		t.appeared.addRepo(Repo{Dir: rel, Git: rel}) // kept if confirm finds a git directory
	case rel != "." && nestedProtected(name):
		t.appeared.addProtected(p)
	}
	if isDir && name != ".git" {
		budget := maxWalked
		t.walk(p, &t.appeared, true, &budget)
	}
}

// confirm drops the bare repositories a HEAD suggested that are not git
// directories, with t.mu held.
func (t *Tree) confirm() {
	for dir, r := range t.appeared.repos {
		if r.Git == dir && !gitDir(filepath.Join(t.root, dir)) {
			delete(t.appeared.repos, dir)
		}
	}
}

// walk reads rel and every directory beneath it, breadth first, adding to f
// what it finds and, with watch, watching each directory before reading it,
// so that what is made meanwhile is either read or reported. Breadth first:
// past its share of watches, a Tree still watches the levels near the top,
// where repositories are made. A git directory is not walked, but for the
// submodules' under its modules/.
func (t *Tree) walk(rel string, f *found, watch bool, budget *int) {
	w := walker{t: t, f: f, budget: budget, buf: make([]byte, 32<<10), queue: []queued{{rel, watch, 0}}}
	for len(w.queue) > 0 && *budget > 0 {
		q := w.queue[0]
		w.queue = w.queue[1:]
		w.dir(q)
	}
	if watch {
		for _, q := range w.queue { // past the budget: the close walks them
			if q.watch {
				t.unwatched = append(t.unwatched, q.rel)
			}
		}
	}
}

// walker is one walk's state.
type walker struct {
	t      *Tree
	f      *found
	budget *int
	buf    []byte // getdents' scratch
	queue  []queued
}

// queued is a directory to read, relative to the root.
type queued struct {
	rel   string
	watch bool // watch it, as its parent is
	depth int
}

// dir reads one directory.
func (w *walker) dir(q queued) {
	t := w.t
	if slices.Contains(t.skip, q.rel) || q.depth > maxDepth {
		return
	}
	*w.budget--
	full := filepath.Join(t.root, q.rel)
	d, err := openRoot(full)
	if err != nil {
		return // gone already, or not a directory: a symlink is not followed
	}
	defer d.close()
	watch := q.watch
	if watch && !t.watch(q.rel, d.watchPath(full)) {
		t.unwatched = append(t.unwatched, q.rel) // it and all beneath
		watch = false
	}
	entries, _ := d.entries(w.buf)
	if hasGitDirShape(entries) {
		w.f.addRepo(Repo{Dir: q.rel, Git: q.rel})
		w.modules(d, q.rel, watch, q.depth)
		return
	}
	for _, e := range entries {
		p := filepath.Join(q.rel, e.name)
		switch {
		case e.name == ".git":
			w.f.addRepo(Repo{Dir: q.rel, Git: p})
			if e.isDir {
				if g, err := d.open(e.name, filepath.Join(full, e.name)); err == nil {
					w.modules(g, p, watch, q.depth+1)
					g.close()
				}
			}
		case q.rel != "." && nestedProtected(e.name):
			w.f.addProtected(p) // reported or protected whole
		case e.isDir:
			w.queue = append(w.queue, queued{p, watch, q.depth + 1})
		}
	}
}

// modules queues the modules/ of the git directory g, the root's rel, where
// git keeps its submodules' git directories, and watches g for a modules/
// made later.
func (w *walker) modules(g dir, rel string, watch bool, depth int) {
	if watch && w.t.watch(rel, g.watchPath(filepath.Join(w.t.root, rel))) {
		w.t.gitDirs[rel] = true
	}
	w.queue = append(w.queue, queued{filepath.Join(rel, "modules"), watch, depth + 1})
}

// nestedProtected reports whether an entry of this name is protected in any
// directory.
func nestedProtected(name string) bool {
	n := nestedNames()
	if !n.first[name[0]] && !slices.ContainsFunc(n.suffixes, func(s string) bool { return strings.HasSuffix(name, s) }) {
		return false // most names: one lookup in a table of bytes
	}
	e, ok := protect.Lookup(name)
	return ok && !e.RootOnly && !e.PolicyOnly && !e.InPlace
}

// nestedNames is what a name of a nested entry may look like: its first
// byte, or for a pattern (*.code-workspace) its literal end.
var nestedNames = sync.OnceValue(func() (n struct {
	first    [256]bool
	suffixes []string
}) {
	for _, e := range protect.Table {
		switch rest, ok := strings.CutPrefix(e.Path, "*"); {
		case e.RootOnly:
		case ok && !strings.ContainsAny(rest, "*?[/"):
			n.suffixes = append(n.suffixes, rest)
		case ok || strings.ContainsAny(e.Path[:1], "?["):
			n.first = [256]bool{} // a pattern this cannot tell: every name is looked up
			for i := range n.first {
				n.first[i] = true
			}
		default:
			n.first[e.Path[0]] = true
		}
	}
	return n
})

// hasGitDirShape reports whether a directory's entries are a git
// directory's: HEAD, objects/ and refs/.
func hasGitDirShape(entries []entry) bool {
	n := 0
	for _, e := range entries {
		switch e.name {
		case "HEAD":
			if e.regular {
				n++
			}
		case "objects", "refs":
			if e.isDir {
				n++
			}
		}
	}
	return n == 3
}

// gitDir reports whether path is a git directory.
func gitDir(path string) bool {
	d, err := openRoot(path)
	if err != nil {
		return false
	}
	defer d.close()
	entries, err := d.entries(make([]byte, 32<<10))
	return err == nil && hasGitDirShape(entries)
}
