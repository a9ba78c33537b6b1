package gitstate

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// Submodules watches the root's submodules (the gitlinks of the root's
// index, the user's own, and of its populated submodules' at any depth):
// git status in the root recurses into each populated one and runs what
// that repository's config says (core.fsmonitor) on the host. A command
// that puts a repository where there was none (a .git file naming a git
// directory it wrote in .git/modules, or a clone), or replaces one (its
// git directory renamed away and another made in its place, or its work
// tree's directory), makes the user's git at the root run its code, though
// the root's own config and hooks are read-only. The index guard takes new
// gitlinks out; these are the user's.
//
// A repository that is not the one the session started with, whose config
// holds only what git writes itself (git submodule update --init;
// ConfigUnknown), and whose own populated submodules hold as little, at any
// depth, is the user's work and stays.
type Submodules struct {
	root  string
	paths []string          // the gitlinks' directories, relative to root
	start map[string]repoID // the populated ones' repositories at the start
	user  map[string]bool   // populated on the host between commands
	// files: the populated ones' .git files at the start, with the git
	// directory each names: a look reads one again only once it changed.
	files map[string]gitFile
	// links: the gitlinks of each populated one's index at the start, by
	// its git directory (absolute).
	links map[string]map[string]bool
}

// gitFile is a .git file as a stat saw it, and the git directory it named
// then. Any write to the file changes its change time, which no command can
// set back (nor its inode, by a rename over it).
type gitFile struct {
	dev, ino uint64
	ctime    unix.Timespec
	size     int64
	gd       string
}

func (f gitFile) same(st *unix.Stat_t) bool {
	return f.dev == uint64(st.Dev) && f.ino == st.Ino && f.ctime == st.Ctim && f.size == st.Size
}

// repoID is which repository a submodule's directory holds: its .git, its
// git directory and that directory's config, by device and inode.
type repoID [3][2]uint64

// maxSubmodules bounds the gitlinks watched, and maxDepth how deep a
// populated submodule's own are followed.
const maxSubmodules, maxDepth = 2000, 8

// NewSubmodules notes the gitlinks of root's index, and those of the
// populated submodules' indexes, at any depth, and which repository each
// populated one holds.
func NewSubmodules(root string) *Submodules {
	s := &Submodules{root: root, start: map[string]repoID{}, user: map[string]bool{}, files: map[string]gitFile{}, links: map[string]map[string]bool{}}
	s.gather(filepath.Join(root, ".git"), "", 0)
	return s
}

// gather notes the gitlinks of the index in git directory gd, whose
// worktree is rel (to the root), and recurses into the populated ones.
func (s *Submodules) gather(gd, rel string, depth int) {
	ix, err := readIndexFile(filepath.Join(gd, "index"))
	if err != nil || depth > maxDepth {
		return
	}
	if depth > 0 {
		known := map[string]bool{}
		for i := range ix.Entries {
			if ix.Entries[i].Gitlink() {
				known[ix.Entries[i].Path] = true
			}
		}
		s.links[filepath.Clean(gd)] = known
	}
	for i := range ix.Entries {
		e := &ix.Entries[i]
		if !e.Gitlink() || len(s.paths) >= maxSubmodules {
			continue
		}
		sub := filepath.FromSlash(e.Path)
		if !filepath.IsLocal(sub) {
			continue
		}
		sub = filepath.Join(rel, sub)
		dir := filepath.Join(s.root, sub)
		s.paths = append(s.paths, sub)
		var st unix.Stat_t
		lerr := unix.Lstat(filepath.Join(dir, ".git"), &st)
		if sgd, why := s.gitDir(dir); sgd != "" && why == "" {
			if id, ok := s.repoID(dir, sgd); ok {
				s.start[sub] = id
			}
			if lerr == nil && st.Mode&unix.S_IFMT == unix.S_IFREG {
				s.files[sub] = gitFile{uint64(st.Dev), st.Ino, st.Ctim, st.Size, sgd}
			}
			s.gather(sgd, sub, depth+1)
		}
	}
}

// repoID is the repository whose work tree is dir and git directory gd.
func (s *Submodules) repoID(dir, gd string) (id repoID, ok bool) {
	var st unix.Stat_t
	if err := unix.Lstat(filepath.Join(dir, ".git"), &st); err != nil {
		return id, false
	}
	return s.repoIDOf(&st, gd)
}

// repoIDOf is repoID, the .git's stat given.
func (s *Submodules) repoIDOf(dotgit *unix.Stat_t, gd string) (id repoID, ok bool) {
	id[0] = [2]uint64{uint64(dotgit.Dev), dotgit.Ino}
	for i, p := range []string{gd, filepath.Join(gd, "config")} {
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			return id, false
		}
		id[i+1] = [2]uint64{uint64(st.Dev), st.Ino}
	}
	return id, true
}

// gitDir is the git directory of the repository whose worktree is dir, or
// why it is none git would read as a submodule's in the root; "" and ""
// when dir holds no .git.
func (s *Submodules) gitDir(dir string) (gd, why string) {
	dotgit := filepath.Join(dir, ".git")
	fi, err := os.Lstat(dotgit)
	switch {
	case os.IsNotExist(err):
		return "", ""
	case err != nil:
		return "", "cannot be read: " + err.Error()
	case fi.Mode()&os.ModeSymlink != 0:
		return "", "is reached through a symlink (.git)"
	}
	gd = dotgit
	if fi.Mode().IsRegular() {
		b, err := readSmall(dotgit, 4096)
		rest, ok := strings.CutPrefix(string(b), "gitdir:")
		if err != nil || !ok {
			return "", "has a .git file that names no git directory"
		}
		if gd = strings.TrimSpace(rest); !filepath.IsAbs(gd) {
			gd = filepath.Join(dir, gd)
		}
		if r, err := filepath.Rel(s.root, filepath.Clean(gd)); err != nil || !filepath.IsLocal(r) {
			return "", "is a git directory outside the project (" + gd + ")"
		}
	} else if !fi.IsDir() {
		return "", "has a .git that is neither a file nor a directory"
	}
	return gd, ""
}

// Any reports whether there is a submodule to watch.
func (s *Submodules) Any() bool { return s != nil && len(s.paths) > 0 }

// Check looks at each watched submodule that holds a repository now other
// than the one it held at the start. One whose repository is more than git
// makes has what is not the start's moved aside with quarantine (its .git,
// or the git directory its .git names), if aside says so ("path → where"
// in moved, and why in notes); else (the user's, on the host) it is left
// and no longer watched.
func (s *Submodules) Check(aside func() bool, quarantine func(string) (string, error)) (moved, notes []string, errs []error) {
	if !s.Any() {
		return nil, nil, nil
	}
	for _, rel := range s.paths {
		if s.user[rel] {
			continue
		}
		dir := filepath.Join(s.root, rel)
		var st unix.Stat_t
		if err := unix.Lstat(filepath.Join(dir, ".git"), &st); err != nil {
			continue // not populated: one lstat a look
		}
		// A .git file as it was names the same git directory: three
		// lstats a look for a submodule as the session found it.
		var gd string
		if f, ok := s.files[rel]; ok && f.same(&st) {
			gd = f.gd
		} else {
			gd, _ = s.gitDir(dir)
		}
		start, was := s.start[rel]
		id, ok := s.repoIDOf(&st, gd)
		if was && ok && id == start {
			continue // the user's, as the session found it
		}
		why := s.hostile(dir, 0)
		if why == "" {
			continue
		}
		if !aside() {
			s.user[rel] = true
			continue
		}
		p := filepath.Join(dir, ".git")
		if was && ok && id[0] == start[0] && id[1] != start[1] {
			p = gd // the user's .git (read-only), naming another git directory now
		}
		to, err := quarantine(p)
		if to == "" {
			errs = append(errs, err)
			continue
		}
		moved = append(moved, p+" → "+to)
		notes = append(notes, fmt.Sprintf("%s: the submodule's repository %s, which git status in the project would obey", rel, why))
	}
	return moved, notes, errs
}

// hostile says what in the repository of worktree dir (its .git) git
// would obey beyond what it writes itself, or "" if nothing.
func (s *Submodules) hostile(dir string, depth int) string {
	if depth > maxDepth {
		return "nests submodules deeper than " + fmt.Sprint(maxDepth)
	}
	gd, why := s.gitDir(dir)
	if gd == "" {
		return why
	}
	config := filepath.Join(gd, "config")
	if _, err := os.Lstat(filepath.Join(gd, "commondir")); err == nil {
		// A linked worktree of the root's own repository (git worktree add
		// inside the project) shares the root's config, which the sandbox
		// keeps; its own settings are its config.worktree.
		if !s.rootWorktree(gd) {
			return "has a commondir, which moves its config elsewhere"
		}
		config = filepath.Join(gd, "config.worktree")
	}
	return s.hostileConfig(dir, gd, config, depth)
}

// rootWorktree says whether gd is the directory git keeps for a linked
// worktree of the root's repository (.git/worktrees/NAME), whose
// commondir names the root's .git.
func (s *Submodules) rootWorktree(gd string) bool {
	git := filepath.Join(s.root, ".git")
	if filepath.Dir(filepath.Clean(gd)) != filepath.Join(git, "worktrees") {
		return false
	}
	b, err := readSmall(filepath.Join(gd, "commondir"), 4096)
	if err != nil {
		return false
	}
	common := strings.TrimSpace(string(b))
	if !filepath.IsAbs(common) {
		common = filepath.Join(gd, common)
	}
	return filepath.Clean(common) == git
}

// hostileConfig is hostile's look at the config git reads there (config)
// and at the repository's own submodules.
func (s *Submodules) hostileConfig(dir, gd, configPath string, depth int) string {
	config, err := readSmall(configPath, 1<<20)
	if err != nil && !os.IsNotExist(err) {
		return "has a config that cannot be read: " + err.Error()
	}
	if key := ConfigUnknown(config); key != "" {
		return "sets " + key + " in its config"
	}
	// Its own submodules, populated, are recursed into as well: an index
	// not read here (a symlink, which git follows; a split one, whose
	// entries are in another file) may name them.
	ix, err := readIndexFile(filepath.Join(gd, "index"))
	switch {
	case os.IsNotExist(err):
		return ""
	case err != nil:
		return "has an index that cannot be read here: " + err.Error()
	case ix.Split():
		return "has a split index"
	}
	for i := range ix.Entries {
		e := &ix.Entries[i]
		if !e.Gitlink() {
			continue
		}
		rel := filepath.FromSlash(e.Path)
		if !filepath.IsLocal(rel) {
			continue
		}
		if why := s.hostile(filepath.Join(dir, rel), depth+1); why != "" {
			return "holds a submodule " + rel + " that " + why
		}
	}
	return ""
}

// readSmall reads a regular file, not through a symlink at its end and
// never a FIFO's open that would wait, of at most limit bytes.
func readSmall(path string, limit int64) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > limit {
		return nil, fmt.Errorf("%s: not a regular file of at most %d bytes", path, limit)
	}
	return io.ReadAll(io.LimitReader(f, limit))
}

// readIndexFile reads the index at path, a regular file, keeping the
// entries Scan keeps (its gitlinks among them).
func readIndexFile(path string) (*Index, error) {
	data, err := readSmall(path, maxIndexBytes)
	if err != nil {
		return nil, err
	}
	return Scan(data)
}

// Paths lists the gitlinks' directories s watches, relative to the root.
func (s *Submodules) Paths() []string {
	if s == nil {
		return nil
	}
	return slices.Clone(s.paths)
}

// GitDirs lists the git directories the populated submodules' .git files
// named at the start (absolute): git status in the root enters each
// through the .git file, which stays, so another directory put in one's
// place is entered as well.
func (s *Submodules) GitDirs() []string {
	if s == nil {
		return nil
	}
	var dirs []string
	for _, f := range s.files {
		dirs = append(dirs, filepath.Clean(f.gd))
	}
	slices.Sort(dirs)
	return dirs
}

// KnownGitlinks reports whether gd (absolute) is the git directory of a
// submodule populated at the start, and if so whether its index had a
// gitlink at path then.
func (s *Submodules) KnownGitlinks(gd string) (known func(path string) bool, ok bool) {
	if s == nil {
		return nil, false
	}
	set, ok := s.links[filepath.Clean(gd)]
	return func(p string) bool { return set[p] }, ok
}

// Hostile says what, in the repository whose worktree is dir (below root),
// git status in the root would obey beyond what git writes itself (see
// Submodules.Check), or "" if nothing.
func Hostile(root, dir string) string {
	s := &Submodules{root: root}
	return s.hostile(dir, 0)
}
