package checkpoint

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// A checkpoint's passes are taken in-process: the root (or its .git) is
// walked, each file stat'ed, and only a file whose stat differs from the
// last checkpoint's (size, times, inode, mode) is read, hashed and written to
// the store as a loose object, in git's own format. The directories' trees
// are written only where an entry changed. What the last checkpoint saw is
// kept in memory and, for the next process, in a file of the store
// (scancache.go).

// Git modes of tree entries.
const (
	modeFile    = 0o100644
	modeExec    = 0o100755
	modeSymlink = 0o120000
	modeTree    = 0o40000
	modeGitlink = 0o160000
)

// fileStat is what tells that a file changed.
type fileStat struct {
	size, mtime, ctime int64
	ino                uint64
	mode               fs.FileMode // type bits (dir, symlink, irregular) and permissions
	nlink              uint32      // its names (0: not known here)
}

// racyWindow: a file whose time is this close to the walk that saw it may
// change again within the file system's time resolution without its stat
// showing it; it is read again next time, as git does with "racily clean"
// entries.
const racyWindow = 2 * time.Second

// scanEntry is one entry of a directory in a checkpoint.
type scanEntry struct {
	name string
	mode uint32 // git's: modeFile, modeExec, modeSymlink, modeTree, modeGitlink
	id   [sha1.Size]byte
	st   fileStat
	racy bool     // read again next time whatever its stat
	dir  *scanDir // modeTree

	pending bool // to read (the walk's)
	gone    bool // vanished before it could be read
	// notKept: a regular file over Options.MaxFileSize, not read; its id
	// is a stub blob of its stat (notKeptStub), and the manifest lists it.
	notKept bool
	// linked: an ignored file over IgnoredMaxSize, kept by a hard link in
	// the store (links.go); its id is a stub blob of its stat (linkedStub),
	// and the manifest lists it. noLink: one no link could be made to,
	// kept as notKept (whyNoLink).
	linked, noLink bool
	// unreadable: one its user cannot read, kept as notKept
	// (whyUnreadable), and not tried again while its stat stays
	unreadable bool
	// via: a linked file kept by the link of the version before it (its
	// record), which holds the same bytes: a copy the sandbox made of that
	// version before a read-write open that wrote nothing (sqlite opens its
	// database so for a SELECT). prev: for a linked file to read, the last
	// checkpoint's record of it.
	via, prev *linkedFile
	lateBig   bool // found over the size only as it was read (read)
	reused    bool // modeTree: dir is the last checkpoint's, taken as it was
}

// scanDir is a directory's entries, sorted by name (bytes).
type scanDir struct {
	entries []scanEntry
	tree    [sha1.Size]byte
	ign     *ignoreList // its .gitignore, as read when it was walked
	// repos counts the nested repositories in it and beneath: entries
	// named .git of the work pass (a nested repository's .git directory,
	// walked as the root's is, or its .git file), which its tree leaves
	// out (the checkpoint's "nested" tree holds them).
	repos int
	prev  *scanDir // during a walk: the last checkpoint's, if any
	// odd counts the files in it and beneath whose exact mode the manifest
	// keeps (noteMode), when oddKnown (a directory read from the scan cache
	// file is not): a directory taken as it was with none adds nothing to
	// the manifest, and is not gone through again file by file.
	odd      int
	oddKnown bool
}

// walkPlan is what the watch of the root says of a walk: the directories
// something happened in, and those with such a one beneath; the others are
// taken as the last checkpoint had them.
type walkPlan struct {
	dirty map[string]bool
	below map[string]bool
	// names: of a dirty directory, the only entries that may have changed
	// (absent: any may have)
	names map[string]map[string]bool
	// kids: of a directory, its subdirectories in dirty or below
	kids map[string]map[string]bool
}

// knownKids reports whether every subdirectory of rel the watch saw
// something happen in or beneath is one of prev's entries: one the last
// checkpoint left out (empty then) makes a directory read again.
func (w *walkPlan) knownKids(rel string, prev *scanDir) bool {
	for name := range w.kids[rel] {
		i := sort.Search(len(prev.entries), func(i int) bool { return prev.entries[i].name >= name })
		if i == len(prev.entries) || prev.entries[i].name != name || prev.entries[i].mode != modeTree {
			return false
		}
	}
	return true
}

// scanPass walks one pass (the root's work tree, or its .git).
type scanPass struct {
	s       *Store
	git     bool      // the .git pass: no ignore files, no nested repositories
	plan    *walkPlan // nil: every directory is read
	start   int64
	sem     chan struct{}
	wg      sync.WaitGroup
	mu      sync.Mutex
	err     error
	base    string // the pass's top, absolute
	pending []*scanEntry
	paths   []string // the pending entries' paths, absolute
	rels    []string // and in the pass
	modes   map[string]uint32
	big     map[string]notKeptFile // the files not kept, by path in the pass
	linked  map[string]linkedFile  // the ignored files kept by a link
	// names: the kept regular files with other names (hard links), by
	// path in the pass, their inode (sameFiles groups them)
	names map[string]uint64
	// relook: a file got another name since the last walk, or was changed
	// through one of its names, which the watch does not show of its others
	// (a link count's change, or a write, is reported to the directory of
	// the name it went through): the pass is walked whole, so that every
	// name of it is seen as it is
	relook atomic.Bool // set by the walks of subdirectories on other goroutines
}

func (p *scanPass) fail(err error) {
	p.mu.Lock()
	if p.err == nil {
		p.err = err
	}
	p.mu.Unlock()
}

// scan walks dir (absolute) into a tree, reading only what changed since prev;
// it returns the tree's directory (nil: no entries) and the pass, which
// holds the exact modes of the files whose mode git's trees do not say, the
// files it did not keep (over Options.MaxFileSize), those it kept by a link
// and those with other names; read is how many files it read.
func (s *Store) scan(dir string, git bool, prev *scanDir, global *ignoreList, plan *walkPlan) (*scanDir, *scanPass, int, error) {
	p := &scanPass{s: s, base: dir, git: git, plan: plan, start: time.Now().Add(-racyWindow).UnixNano(), modes: map[string]uint32{}, big: map[string]notKeptFile{}, linked: map[string]linkedFile{}, names: map[string]uint64{}}
	// Goroutines pay off for a whole walk; for the few directories the
	// watch names, a handoff between threads costs more than the reading.
	spare := runtime.GOMAXPROCS(0) - 1
	if plan != nil {
		spare = 0
	}
	p.sem = make(chan struct{}, spare)
	if p.unchanged("", prev) {
		p.collectModes("", prev)
		return prev, p, 0, nil
	}
	var ign *ignoreStack
	if !git {
		ign = &ignoreStack{global: global}
	}
	root := p.walk(dir, "", prev, ign)
	p.wg.Wait()
	if p.err != nil {
		return nil, nil, 0, p.err
	}
	if p.relook.Load() && plan != nil {
		return s.scan(dir, git, prev, global, nil)
	}
	if err := p.read(); err != nil {
		return nil, nil, 0, err
	}
	if _, err := p.trees(root); err != nil {
		return nil, nil, 0, err
	}
	return root, p, len(p.pending), nil
}

// walk reads directory abs (rel its path in the pass, "" the top) into a
// scanDir; subdirectories go to other goroutines while there are spare
// processors.
func (p *scanPass) walk(abs, rel string, prev *scanDir, ign *ignoreStack) *scanDir {
	if p.plan != nil && prev != nil {
		if !p.plan.dirty[rel] && p.plan.knownKids(rel, prev) {
			return p.passThrough(abs, rel, prev, ign)
		}
		// A .git made, removed or moved here makes it a repository or not:
		// read whole.
		if names, ok := p.plan.names[rel]; ok && !(ign != nil && rel != "" && names[".git"]) {
			return p.walkNames(abs, rel, prev, ign, names)
		}
	}
	d := &scanDir{prev: prev}
	p.s.watch.add(p.pass(), rel, abs)
	ents, stat, done, err := readDir(abs)
	if err != nil {
		if rel == "" {
			p.fail(fmt.Errorf("checkpoint: %w", err))
		}
		// git add too passes over a directory it cannot read
		return d
	}
	defer done()
	if ign != nil {
		if rel != "" && hasGit(ents) {
			ign = p.s.repoIgnore(abs, rel)
		}
		d.ign = readIgnore(abs, rel, ents)
		ign = ign.push(d.ign)
	}
	d.entries = make([]scanEntry, 0, len(ents))
	var old []scanEntry
	if prev != nil {
		old = prev.entries
	}
	for _, e := range ents {
		name := e.Name()
		if name == ".git" && (ign == nil || rel == "") {
			// the root's .git is a pass of its own; git's own
			// directories hold no repository of the project's
			continue
		}
		path := name
		if rel != "" {
			path = rel + "/" + name
		}
		for len(old) > 0 && old[0].name < name {
			old = old[1:]
		}
		var was *scanEntry
		if len(old) > 0 && old[0].name == name {
			was = &old[0]
		}
		if e.IsDir() {
			if sub := filepath.Join(abs, name); len(sub) < pathMax {
				p.dirEntry(d, sub, path, was, ign)
			} else if st, err := stat(name); err == nil {
				p.longDirEntry(d, rel, path, name, st, was, ign)
			}
			continue
		}
		st, err := stat(name)
		if err == nil && name == ".git" {
			// a nested repository's .git file: kept as it is, never
			// followed; a symlink is no repository of git's
			if st.mode.IsRegular() {
				p.fileEntry(d, abs, rel, path, name, st, was, nil)
			}
			continue
		}
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			p.fail(fmt.Errorf("checkpoint: %s: %w", path, err))
			return d
		}
		p.fileEntry(d, abs, rel, path, name, st, was, ign)
	}
	return d
}

// statEntry stats entry name of directory abs and adds it to d as walk
// does (without a listing: its stat says whether it is a directory); false
// when it failed (the pass fails).
func (p *scanPass) statEntry(d *scanDir, abs, rel, path, name string, stat func(string) (fileStat, error), was *scanEntry, ign *ignoreStack) bool {
	st, err := stat(name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return true
		}
		p.fail(fmt.Errorf("checkpoint: %s: %w", path, err))
		return false
	}
	if st.mode&fs.ModeDir != 0 {
		if sub := filepath.Join(abs, name); len(sub) < pathMax {
			p.dirEntry(d, sub, path, was, ign)
		} else {
			p.longDirEntry(d, rel, path, name, st, was, ign)
		}
		return true
	}
	if name == ".git" {
		if st.mode.IsRegular() {
			p.fileEntry(d, abs, rel, path, name, st, was, nil)
		}
		return true
	}
	p.fileEntry(d, abs, rel, path, name, st, was, ign)
	return true
}

// walkNames reads again, of a directory the watch saw something happen in,
// only the entries its events named, and those whose stat was too recent to
// be trusted (racy); the others are taken as they were, as passThrough
// takes them: one lstat per named entry, not per entry.
func (p *scanPass) walkNames(abs, rel string, prev *scanDir, ign *ignoreStack, names map[string]bool) *scanDir {
	d := &scanDir{prev: prev, ign: prev.ign}
	p.s.watch.add(p.pass(), rel, abs)
	stat, done, err := statDir(abs)
	if err != nil {
		if rel == "" {
			p.fail(fmt.Errorf("checkpoint: %w", err))
		}
		return d
	}
	defer done()
	skipGit := ign == nil || rel == ""
	if ign != nil {
		ign = p.stackOf(abs, rel, prev, ign)
	}
	kids := p.plan.kids[rel]
	look := make([]string, 0, len(names)+len(kids))
	for n := range names {
		if n != ".git" || !skipGit {
			look = append(look, n)
		}
	}
	for n := range kids {
		if !names[n] && (n != ".git" || !skipGit) {
			look = append(look, n)
		}
	}
	sort.Strings(look)
	// Room for every entry: subdir keeps a pointer to its slot.
	d.entries = make([]scanEntry, 0, len(prev.entries)+len(look))
	old := prev.entries
	for len(old) > 0 || len(look) > 0 {
		var name string
		var was *scanEntry
		switch {
		case len(look) == 0 || len(old) > 0 && old[0].name < look[0]:
			was, old = &old[0], old[1:]
			name = was.name
			if !was.racy {
				d.entries = append(d.entries, *was)
				e := &d.entries[len(d.entries)-1]
				path := joinRel(rel, e.name)
				if e.mode == modeTree {
					sign := ign
					if ign != nil && e.name == ".git" {
						sign = nil
					}
					p.subdir(e, filepath.Join(abs, e.name), path, e.dir, sign)
				} else if p.noteMode(rel, path, e) {
					d.odd++
				}
				continue
			}
		case len(old) > 0 && old[0].name == look[0]:
			was, old = &old[0], old[1:]
			name, look = look[0], look[1:]
		default:
			name, look = look[0], look[1:]
		}
		// (a changed .gitignore makes the watch walk the whole pass)
		if !p.statEntry(d, abs, rel, joinRel(rel, name), name, stat, was, ign) {
			return d
		}
	}
	return d
}

// joinRel is entry name's path in the pass, in directory rel.
func joinRel(rel, name string) string {
	if rel == "" {
		return name
	}
	return rel + "/" + name
}

// readIgnore reads the .gitignore among a directory's entries, if any.
func readIgnore(abs, rel string, ents []fs.DirEntry) *ignoreList {
	for _, e := range ents {
		if e.Name() == ".gitignore" && e.Type().IsRegular() {
			if b, err := readSmall(filepath.Join(abs, ".gitignore"), maxIgnoreFile); err == nil {
				return parseIgnore(rel, b)
			}
			return nil
		}
	}
	return nil
}

// dirEntry adds subdirectory sub (path in the pass) to d, unless ignored,
// and walks it; a nested repository's .git directory (reached only in the
// work pass, in a directory holding one) is walked as the root's .git is:
// every file, no ignore rules.
func (p *scanPass) dirEntry(d *scanDir, sub, path string, was *scanEntry, ign *ignoreStack) {
	if ign != nil && filepath.Base(sub) == ".git" {
		ign = nil
	} else if ign != nil && ign.excluded(path, true) {
		return
	}
	if p.leaves(path) {
		return
	}
	var prevSub *scanDir
	if was != nil && was.mode == modeTree {
		prevSub = was.dir
	}
	d.entries = append(d.entries, scanEntry{name: filepath.Base(sub), mode: modeTree})
	p.subdir(&d.entries[len(d.entries)-1], sub, path, prevSub, ign)
}

// longDirEntry adds subdirectory name (path in the pass) whose absolute
// path is too long to open (pathMax) to d as a file not kept, a stub of its
// stat, and why (whyLong): what it holds is neither read nor walked, and
// undo says so of it rather than pass over it unsaid (`rm -rf` of such a
// tree cannot be undone). As an unreadable file is, it is not tried again
// while its stat stays.
func (p *scanPass) longDirEntry(d *scanDir, rel, path, name string, st fileStat, was *scanEntry, ign *ignoreStack) {
	if ign != nil && ign.excluded(path, true) || p.leaves(path) {
		return
	}
	st.mode = st.mode.Perm() &^ 0o111 // a stub is a plain file's
	d.entries = append(d.entries, scanEntry{name: name, mode: modeFile, st: st, notKept: true, unreadable: true})
	ne := &d.entries[len(d.entries)-1]
	if p.noteMode(rel, path, ne) {
		d.odd++
	}
	if was != nil && was.mode == modeFile && was.st == st && was.notKept && was.unreadable {
		ne.id = was.id
		return
	}
	ne.pending = true
	p.mu.Lock()
	p.pending = append(p.pending, ne)
	p.paths = append(p.paths, "")
	p.rels = append(p.rels, path)
	p.mu.Unlock()
}

// whyUnreadable is why path of the pass, a file that could not be read, was
// not kept: its absolute path too long to open (pathMax), or its user not
// allowed to read it.
func (p *scanPass) whyUnreadable(path string) string {
	if len(p.base)+1+len(path) >= pathMax {
		return whyLong
	}
	return whyUnreadable
}

// fileEntry adds the file name of directory abs (rel; path in the pass) to
// d, unless git adds no such file or it is ignored and not kept: its id as
// the last checkpoint had it when its stat did not change, else to read.
func (p *scanPass) fileEntry(d *scanDir, abs, rel, path, name string, st fileStat, was *scanEntry, ign *ignoreStack) {
	mode, ok := gitMode(st)
	if !ok || p.leaves(path) || mode == modeSymlink && p.git && p.s.leave != nil {
		// (the guard removes every symlink in .git: git makes none, and git
		// on the host would read or write through it)
		return
	}
	linked := false
	if ign != nil && ign.excluded(path, false) && !p.s.keptIgnored(path, st.size) {
		if !p.s.linkable(st) {
			return
		}
		linked = true // or noLink, as the last checkpoint found (read)
	}
	// The stat size decides: a sparse file counts at its apparent size,
	// which is what reading it would cost.
	over := mode != modeSymlink && st.size > p.s.o.MaxFileSize
	d.entries = append(d.entries, scanEntry{name: name, mode: mode, st: st, notKept: over, linked: linked})
	ne := &d.entries[len(d.entries)-1]
	// A link that could not be made is not tried again while the file
	// stays as it was.
	if linked && was != nil && was.noLink && was.st == st {
		ne.linked, ne.notKept, ne.noLink = false, true, true
	}
	if !linked && was != nil && was.unreadable && was.st == st {
		ne.notKept, ne.unreadable = true, true
	}
	if ne.linked && was != nil && was.linked {
		if was.st == st && !(was.racy && was.via != nil) {
			ne.via = was.via // taken as it was (below)
		} else {
			// (a file kept via a link, seen within the file system's time
			// resolution of a write, is compared again: racy, as below)
			prev := linkedOf(was.st)
			if was.via != nil {
				prev = *was.via
			}
			ne.prev = &prev
		}
	}
	if p.noteMode(rel, path, ne) {
		d.odd++
	}
	// A kept file of several names got one more or one less, or one of
	// the root's others changed it (both names are one file): its other
	// names are stat'ed again too, by a whole walk of the pass (taken only
	// where the watch planned this one).
	if st.nlink > 1 && mode != modeSymlink && !ne.linked && !ne.notKept && (was == nil || was.st.nlink != st.nlink || was.st != st && p.s.shared[st.ino]) {
		p.relook.Store(true)
	}
	// (a stub is its stat's alone: never racy)
	stub := over || linked
	if was != nil && was.mode == mode && was.st == st && (!was.racy || stub && was.via == nil) && was.notKept == ne.notKept && was.linked == ne.linked && !(p.s.indexAgain && p.git && guardedGitFile(path)) {
		ne.id = was.id
		return
	}
	ne.pending = true
	ne.racy = !stub && (st.mtime >= p.start || st.ctime >= p.start)
	p.mu.Lock()
	p.pending = append(p.pending, ne)
	p.paths = append(p.paths, filepath.Join(abs, name))
	p.rels = append(p.rels, path)
	p.mu.Unlock()
}

// gitMode is the mode git's tree gives a file of this stat; false for what
// git adds none of: a socket, a pipe, a device (or a directory made since).
func gitMode(st fileStat) (uint32, bool) {
	switch {
	case st.mode&fs.ModeSymlink != 0:
		return modeSymlink, true
	case st.mode&(fs.ModeDir|fs.ModeIrregular) != 0:
		return 0, false
	case st.mode&0o100 != 0:
		return modeExec, true
	}
	return modeFile, true
}

// keptIgnored reports whether an ignored file of this path and size is
// kept: a small one (.env), or one KeepIgnored names.
func (s *Store) keptIgnored(path string, size int64) bool {
	return size <= s.o.IgnoredMaxSize || size <= MaxKeptIgnoredSize && s.keepIgnored(path)
}

// pass is the watch's name of the pass.
func (p *scanPass) pass() byte {
	if p.git {
		return 'g'
	}
	return 'w'
}

// unchanged reports a directory the watch saw nothing happen in or beneath,
// taken as the last checkpoint had it.
func (p *scanPass) unchanged(rel string, prev *scanDir) bool {
	return p.plan != nil && prev != nil && !p.plan.dirty[rel] && !p.plan.below[rel]
}

// subdir fills slot, a subdirectory's entry: as it was, or walked (on
// another goroutine while there are spare processors).
func (p *scanPass) subdir(slot *scanEntry, abs, rel string, prev *scanDir, ign *ignoreStack) {
	if p.unchanged(rel, prev) {
		slot.dir, slot.id, slot.reused = prev, prev.tree, true
		p.collectModes(rel, prev)
		return
	}
	slot.reused = false
	select {
	case p.sem <- struct{}{}:
		p.wg.Add(1)
		go func() {
			defer func() { <-p.sem; p.wg.Done() }()
			slot.dir = p.walk(abs, rel, prev, ign)
		}()
	default:
		slot.dir = p.walk(abs, rel, prev, ign)
	}
}

// passThrough takes a directory nothing happened in, with something beneath
// that did: its files as they were, its subdirectories each as it is.
func (p *scanPass) passThrough(abs, rel string, prev *scanDir, ign *ignoreStack) *scanDir {
	d := &scanDir{prev: prev, ign: prev.ign}
	if ign != nil {
		ign = p.stackOf(abs, rel, prev, ign)
	}
	d.entries = append(make([]scanEntry, 0, len(prev.entries)), prev.entries...)
	for i := range d.entries {
		e := &d.entries[i]
		path := e.name
		if rel != "" {
			path = rel + "/" + e.name
		}
		if e.mode == modeTree {
			sign := ign
			if ign != nil && e.name == ".git" {
				sign = nil
			}
			p.subdir(e, filepath.Join(abs, e.name), path, e.dir, sign)
			continue
		}
		if p.noteMode(rel, path, e) {
			d.odd++
		}
	}
	return d
}

// noteMode records the exact mode of a file of directory rel whose mode
// git's tree does not say, a file not kept or kept by a link, and a file
// kept with other names, and reports whether it did.
func (p *scanPass) noteMode(rel, path string, e *scanEntry) bool {
	if e.mode == modeSymlink || e.mode == modeGitlink {
		return false
	}
	if e.linked {
		if path == "" {
			path = joinRel(rel, e.name)
		}
		l := linkedOf(e.st)
		if e.via != nil {
			l = *e.via
		}
		p.mu.Lock()
		p.linked[path] = l
		p.mu.Unlock()
		p.notePerm(rel, path, e.name, e.st)
		return true
	}
	if e.notKept {
		if path == "" {
			path = joinRel(rel, e.name)
		}
		n := notKeptOf(e.st)
		if e.noLink {
			n.Why = whyNoLink
		}
		if e.unreadable {
			n.Why = p.whyUnreadable(path)
		}
		p.mu.Lock()
		p.big[path] = n
		p.mu.Unlock()
		p.notePerm(rel, path, e.name, e.st)
		return true
	}
	named := false
	if e.st.nlink > 1 && e.st.ino != 0 {
		if path == "" {
			path = joinRel(rel, e.name)
		}
		p.mu.Lock()
		p.names[path] = e.st.ino
		p.mu.Unlock()
		named = true
	}
	return p.notePerm(rel, path, e.name, e.st) || named
}

// notePerm records the exact mode of file name of directory rel (path in
// the pass, or "": made from those when needed), of stat st, where git's
// tree does not say it, and reports whether it did.
func (p *scanPass) notePerm(rel, path, name string, st fileStat) bool {
	perm := uint32(st.mode.Perm())
	def := uint32(0o644)
	switch {
	case perm&0o100 != 0:
		def = 0o755
	default:
		if path == "" {
			path = joinRel(rel, name)
		}
		if inObjects(p.git, path) {
			def = 0o444
		}
	}
	if perm == def {
		return false
	}
	if path == "" {
		path = joinRel(rel, name)
	}
	p.mu.Lock()
	p.modes[path] = perm
	p.mu.Unlock()
	return true
}

// collectModes notes the modes of a directory taken as it was.
func (p *scanPass) collectModes(rel string, d *scanDir) {
	if d.oddKnown && d.odd == 0 {
		return
	}
	for i := range d.entries {
		e := &d.entries[i]
		if e.mode == modeTree {
			sub := e.name
			if rel != "" {
				sub = rel + "/" + e.name
			}
			p.collectModes(sub, e.dir)
			continue
		}
		p.noteMode(rel, "", e)
	}
}

// read reads, hashes and stores the files the walk found changed, on as many
// processors as there are.
func (p *scanPass) read() error {
	n := len(p.pending)
	if n == 0 {
		return nil
	}
	workers := min((n+3)/4, runtime.GOMAXPROCS(0)) // one for a few files
	var wg sync.WaitGroup
	var next int
	var mu sync.Mutex
	errs := make(chan error, workers)
	work := func() {
		for {
			mu.Lock()
			i := next
			next++
			mu.Unlock()
			if i >= n {
				return
			}
			e := p.pending[i]
			var id [sha1.Size]byte
			var err error
			if e.linked {
				id, err = p.link(e, i)
			} else if p.guardsGit(p.rels[i]) && !e.notKept { // (no symlink: fileEntry left those out)
				id, err = p.s.storeGuarded(p.paths[i], p.rels[i])
			} else if e.notKept {
				id, err = p.s.storeStub(e.st)
			} else {
				id, err = p.s.storeFile(p.paths[i], e.mode == modeSymlink)
			}
			var grown *overSizeError
			if errors.As(err, &grown) {
				// It grew over the size since the walk's stat: not kept
				// either, at the size it was found at.
				e.st.size = grown.size
				e.notKept, e.lateBig, e.racy = true, true, false
				p.mu.Lock()
				p.big[p.rels[i]] = notKeptOf(e.st)
				delete(p.names, p.rels[i])
				p.mu.Unlock()
				id, err = p.s.storeStub(e.st)
			}
			if (errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.ENAMETOOLONG)) && !e.linked {
				// One its user cannot read (`chmod 000 f` by a command): not
				// kept either, and why — not a checkpoint failing, which
				// refused every next command and the undo of this one.
				e.notKept, e.unreadable, e.lateBig, e.racy = true, true, true, false
				n := notKeptOf(e.st)
				n.Why = p.whyUnreadable(p.rels[i])
				p.mu.Lock()
				p.big[p.rels[i]] = n
				delete(p.names, p.rels[i])
				p.mu.Unlock()
				id, err = p.s.storeStub(e.st)
			}
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, errGuardMoves) {
				e.gone = true
				p.mu.Lock()
				delete(p.names, p.rels[i])
				p.mu.Unlock()
				continue
			}
			if err != nil {
				errs <- err
				return
			}
			e.id = id
			e.pending = false
		}
	}
	if workers == 1 {
		work()
	}
	for range workers - 1 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work()
		}()
	}
	if workers > 1 {
		work()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	return nil
}

// link keeps pending entry e (the i-th), an ignored file, by a hard link in
// the store, and returns its stub's id: the stat recorded is the one after
// the link (whose change time the link moved), so the next walk finds it
// unchanged. Where no link can be made it is recorded as not kept.
func (p *scanPass) link(e *scanEntry, i int) ([sha1.Size]byte, error) {
	if v := p.s.sameAsPrev(p.paths[i], e.st, e.prev); v != nil {
		// A copy of the last version, written nothing since: kept by that
		// version's link, with its stub (no change), and no new link (no
		// version in the store; and the root's file, of one name, is
		// written in place by the next command, as its only other copy is
		// the store's).
		// Its stat may not show a write in the same tick of the clock as
		// the compare: compared again next time while that is so (racy).
		e.via, e.racy = v, e.st.mtime >= p.start || e.st.ctime >= p.start
		p.mu.Lock()
		p.linked[p.rels[i]] = *v
		p.mu.Unlock()
		return p.s.storeLinkedStub(v.stat())
	}
	st, err := p.s.linkFile(p.paths[i])
	if errors.Is(err, fs.ErrNotExist) {
		return [sha1.Size]byte{}, err // gone, or replaced meanwhile: next time
	}
	rel := p.rels[i]
	if err != nil {
		// EXDEV (another file system), EPERM (fs.protected_hardlinks: not
		// the user's file): recorded as not kept, and why.
		e.linked, e.notKept, e.noLink = false, true, true
		n := notKeptOf(e.st)
		n.Why = whyNoLink
		p.mu.Lock()
		delete(p.linked, rel)
		p.big[rel] = n
		p.mu.Unlock()
		return p.s.storeStub(e.st)
	}
	e.st = st
	p.mu.Lock()
	p.linked[rel] = linkedOf(st)
	delete(p.modes, rel) // noted again from the stat after the link
	p.mu.Unlock()
	p.notePerm("", rel, e.name, st)
	return p.s.storeLinkedStub(st)
}

// trees writes the trees of d and beneath, bottom up: only a directory whose
// entries differ from the last checkpoint's gets a new one. Entries that
// vanished and directories left empty are dropped.
func (p *scanPass) trees(d *scanDir) ([sha1.Size]byte, error) {
	d.repos = 0
	d.oddKnown = true // d.odd counts its own files so far
	keep := d.entries[:0]
	for i := range d.entries {
		e := d.entries[i]
		if e.gone {
			continue
		}
		if e.lateBig {
			// the manifest now lists it: collectModes must visit d
			e.lateBig = false
			d.odd++
		}
		if e.mode == modeTree && !e.reused {
			if e.dir == nil {
				continue
			}
			id, err := p.trees(e.dir)
			if err != nil {
				return id, err
			}
			if len(e.dir.entries) == 0 {
				continue
			}
			e.id = id
		}
		if e.mode == modeTree {
			d.odd += e.dir.odd
			d.oddKnown = d.oddKnown && e.dir.oddKnown
		}
		if e.mode == modeTree {
			d.repos += e.dir.repos
		}
		if e.name == ".git" && !p.git {
			d.repos++
		}
		keep = append(keep, e)
	}
	d.entries = keep
	prev := d.prev
	d.prev = nil // the history is not kept alive
	if prev != nil && sameEntries(prev.entries, d.entries) {
		d.tree = prev.tree
		return d.tree, nil
	}
	id, err := p.s.writeRawTree(d.entries, !p.git)
	if err != nil {
		return id, err
	}
	d.tree = id
	return id, nil
}

func sameEntries(a, b []scanEntry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].name != b[i].name || a[i].mode != b[i].mode || a[i].id != b[i].id {
			return false
		}
	}
	return true
}

// writeRawTree writes the tree object of entries (sorted as git sorts them:
// a directory's name as if it ended in a slash).
// A nested repository's .git (work) is left out: git takes no path
// through a .git, and the checkpoint's "nested" tree holds it.
func (s *Store) writeRawTree(entries []scanEntry, work bool) ([sha1.Size]byte, error) {
	order := make([]int, 0, len(entries))
	for i := range entries {
		if !work || entries[i].name != ".git" {
			order = append(order, i)
		}
	}
	key := func(i int) string {
		if entries[i].mode == modeTree {
			return entries[i].name + "/"
		}
		return entries[i].name
	}
	sort.SliceStable(order, func(a, b int) bool { return key(order[a]) < key(order[b]) })
	var b bytes.Buffer
	for _, i := range order {
		e := &entries[i]
		b.WriteString(strconv.FormatUint(uint64(e.mode), 8))
		b.WriteByte(' ')
		b.WriteString(e.name)
		b.WriteByte(0)
		b.Write(e.id[:])
	}
	id, err := s.writeObject("tree", b.Bytes())
	if err != nil {
		return [sha1.Size]byte{}, err
	}
	return rawID(id), nil
}

// bigFile: files larger are streamed to the store rather than read whole.
const bigFile = 32 << 20

// storeFile writes the blob of the file (or the symlink's target) at path to
// the store and returns its id.
func (s *Store) storeFile(path string, symlink bool) ([sha1.Size]byte, error) {
	if symlink {
		target, err := os.Readlink(path)
		if err != nil {
			return [sha1.Size]byte{}, err
		}
		return s.storeBlob([]byte(target))
	}
	id, err := s.storeRegular(path)
	if err != nil {
		return [sha1.Size]byte{}, err
	}
	return rawID(id), nil
}

// storeBlob writes data to the store as a blob and returns its id.
func (s *Store) storeBlob(data []byte) ([sha1.Size]byte, error) {
	id, err := s.writeObject("blob", data)
	if err != nil {
		return [sha1.Size]byte{}, err
	}
	return rawID(id), nil
}

// rawID is the hex object id as bytes.
func rawID(id string) [sha1.Size]byte {
	var raw [sha1.Size]byte
	hex.Decode(raw[:], []byte(id))
	return raw
}

// overSizeError is storeRegular's when the file is over Options.MaxFileSize
// as it is opened (it grew since the walk's stat).
type overSizeError struct{ size int64 }

func (e *overSizeError) Error() string {
	return fmt.Sprintf("checkpoint: file of %d bytes, over the size checkpoints keep", e.size)
}

// maxFileSize is Options.MaxFileSize, or its default.
func (s *Store) maxFileSize() int64 {
	if s.o.MaxFileSize <= 0 {
		return DefaultMaxFileSize
	}
	return s.o.MaxFileSize
}

// storeRegular stores the regular file at path; one over Options.MaxFileSize
// is not read (overSizeError), and no more than that is ever read of one
// that grows while it is.
func (s *Store) storeRegular(path string) (string, error) {
	f, err := openRegular(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	max := s.maxFileSize()
	if fi.Size() > max {
		return "", &overSizeError{fi.Size()}
	}
	if fi.Size() <= bigFile {
		b, err := io.ReadAll(io.LimitReader(f, max+1))
		if err != nil {
			return "", fmt.Errorf("checkpoint: %w", err)
		}
		if int64(len(b)) > max {
			return "", &overSizeError{int64(len(b))}
		}
		return s.writeObject("blob", b)
	}
	for tries := 0; ; tries++ {
		id, ok, err := s.streamBlob(f, fi.Size())
		if err != nil || ok {
			return id, err
		}
		// The file changed size while it was read: again, from its new size.
		if tries == 3 {
			return "", fmt.Errorf("checkpoint: %s keeps changing while it is read", path)
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return "", err
		}
		if fi, err = f.Stat(); err != nil {
			return "", err
		}
		if fi.Size() > max {
			return "", &overSizeError{fi.Size()}
		}
	}
}

// streamBlob writes a large file's blob to the store as it reads it; ok is
// false when the file did not hold size bytes.
func (s *Store) streamBlob(r io.Reader, size int64) (string, bool, error) {
	dir := filepath.Join(s.gitDir, "objects")
	tmp, err := os.CreateTemp(dir, "tmp_obj_")
	if err != nil {
		return "", false, fmt.Errorf("checkpoint: %w", err)
	}
	defer os.Remove(tmp.Name())
	h := sha1.New()
	z := getZlib(tmp)
	defer zlibs.Put(z)
	head := fmt.Appendf(nil, "blob %d\x00", size)
	h.Write(head)
	z.Write(head)
	n, err := io.Copy(io.MultiWriter(h, z), io.LimitReader(r, size+1))
	if err == nil {
		err = z.Close()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", false, fmt.Errorf("checkpoint: %w", err)
	}
	if n != size {
		return "", false, nil
	}
	id := hex.EncodeToString(h.Sum(nil))
	p := s.objectPath(id)
	if _, err := os.Stat(p); err == nil {
		return id, true, nil
	}
	// git's prune-packed, packing in the background, may remove the object
	// directory once it emptied it, even between its making and the rename:
	// it looks at each directory once, so a second try holds.
	for try := 0; ; try++ {
		s.fanouts.Delete(id[:2])
		if err := s.fanout(id); err != nil {
			return "", false, err
		}
		err := os.Rename(tmp.Name(), p)
		if err == nil {
			return id, true, nil
		}
		if try > 0 || !errors.Is(err, fs.ErrNotExist) {
			return "", false, fmt.Errorf("checkpoint: %w", err)
		}
	}
}

func (s *Store) objectPath(id string) string {
	return filepath.Join(s.gitDir, "objects", id[:2], id[2:])
}

// fanout makes the object directory of id, once per process.
func (s *Store) fanout(id string) error {
	if _, ok := s.fanouts.Load(id[:2]); ok {
		return nil
	}
	if err := os.MkdirAll(filepath.Join(s.gitDir, "objects", id[:2]), 0o700); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	s.fanouts.Store(id[:2], true)
	return nil
}

// hasGit reports a .git among a directory's entries that makes it a
// repository of its own: a directory, or a file (a submodule's or a
// worktree's pointer to its repository).
func hasGit(ents []fs.DirEntry) bool {
	for _, e := range ents {
		if e.Name() == ".git" {
			return e.IsDir() || e.Type().IsRegular()
		}
	}
	return false
}

// stackOf is the ignore rules for the entries of directory rel, walked
// before as prev: a nested repository's own (prev holds its .git), else
// ign's with prev's .gitignore.
func (p *scanPass) stackOf(abs, rel string, prev *scanDir, ign *ignoreStack) *ignoreStack {
	if rel != "" {
		i := sort.Search(len(prev.entries), func(i int) bool { return prev.entries[i].name >= ".git" })
		if i < len(prev.entries) && prev.entries[i].name == ".git" {
			ign = p.s.repoIgnore(abs, rel)
		}
	}
	return ign.push(prev.ign)
}

// repoIgnore is the ignore rules of a repository nested at abs (rel): its
// own, as git in it has them — none of the root's .gitignore files, its
// info/exclude. A .git file is followed to its repository's info/exclude
// only inside the root (a submodule's, in the root's .git/modules); one
// pointing out of the root is never read.
func (s *Store) repoIgnore(abs, rel string) *ignoreStack {
	dir := filepath.Join(abs, ".git")
	fi, err := os.Lstat(dir)
	if err == nil && fi.Mode().IsRegular() {
		dir = s.gitfileTarget(abs)
	}
	if dir == "" {
		return &ignoreStack{}
	}
	b, _ := readSmall(filepath.Join(dir, "info", "exclude"), maxIgnoreFile)
	return &ignoreStack{global: parseIgnore(rel, b)}
}

// gitfileTarget is the directory the .git file in dir names, when it is
// inside the root (symlinks resolved); "" otherwise.
func (s *Store) gitfileTarget(dir string) string {
	b, err := readSmall(filepath.Join(dir, ".git"), 4096)
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(string(b), "\n")
	target, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir: ")
	if !ok {
		return ""
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(dir, target)
	}
	return insideRoot(s.root, target)
}

// insideRoot is path with its symlinks resolved when that is inside root
// (itself resolved), else "".
func insideRoot(root, path string) string {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return ""
	}
	r, err := filepath.EvalSymlinks(root)
	if err != nil {
		return ""
	}
	if real != r && !strings.HasPrefix(real, r+string(filepath.Separator)) {
		return ""
	}
	return real
}

// inObjects reports a file of a git directory's objects (which git writes
// read-only): path in the .git pass, or in the work pass inside a nested
// repository's .git.
func inObjects(git bool, path string) bool {
	if git {
		return strings.HasPrefix(path, "objects/")
	}
	return strings.Contains("/"+path, "/.git/objects/")
}
