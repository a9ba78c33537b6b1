package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// maxNested bounds the nested repositories followed in one pass.
const maxNested = 4096

// gitPointer is the most of a .git file or a commondir file that is read.
const gitPointer = 4096

// nestedState is what guardNested remembers between passes.
type nestedState struct {
	// accepted: a nested work tree (relative to the root) → its git files
	// when they were last judged or left as they were.
	accepted map[string]acceptedRepo
	// indexes: an index file → what it held when last read.
	indexes map[string]indexRead
}

// acceptedRepo is a nested repository as it was accepted: the stamp of its
// git files, and what in them runs code (the user's own fsmonitor, say), so
// that rewriting a config (`git config user.name …`) without adding code to
// it is no reason to move it.
type acceptedRepo struct{ stamp, code string }

type indexRead struct {
	stamp  string // the index's, and its shared part's
	shared string // a split index's shared part
	links  []string
	err    error
}

// guardNested protects what the project's own .git and its protected paths
// do not cover: the repositories nested in the project that git on the host
// walks into. A gitlink in an index (an entry for a nested repository, which
// any command can write, `git update-index --cacheinfo 160000,…`) makes plain
// `git status` run `git status` in that directory, with that repository's own
// config — core.fsmonitor and its like run programs. So every repository the
// root's index names, and those their indexes name in turn, is judged as the
// root's git paths are: a config key beyond what git writes, a hook that is
// not a sample, or a .git file or commondir leading where it cannot be
// followed beneath the root is moved to the quarantine when aside says so.
// What was there when the session started, or unchanged since it was last
// judged, is left alone; a pass costs a few stat calls per nested repository
// and reads an index again only when it changed.
func (m *mounter) guardNested(when pass, aside func() bool) (moved []string, err error) {
	if len(m.spec.Writable) == 0 || m.spec.Quarantine == "" {
		return nil, nil
	}
	root := m.spec.Writable[0]
	rootFD, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(rootFD)
	var rootCommon string // the root's own git dir, guarded by the protected paths
	if m.nested.accepted == nil {
		m.nested = nestedState{accepted: map[string]acceptedRepo{}, indexes: map[string]indexRead{}}
	}
	var errs []error
	quarantine := func(rel string) {
		if to, err := m.quarantine(filepath.Join(root, rel)); err == nil {
			moved = append(moved, filepath.Join(root, rel)+" → "+to)
		} else {
			errs = append(errs, err)
		}
	}
	// Each work tree to look at, with the index that named it.
	type named struct {
		work, by  string
		byChanged bool
		again     bool // looked at once this pass, its .git moved away
	}
	queue, seen := []named{{work: "."}}, map[string]bool{".": true}
	var marks map[string]mark
	if m.repos != nil {
		// Those no index names (yet): git enters them when run there.
		marks = m.repos.dirs(when != passStart, when == passClose)
		for dir := range marks {
			if !seen[dir] {
				seen[dir] = true
				queue = append(queue, named{work: dir})
			}
		}
	}
	failed := map[string]bool{} // indexes quarantined this pass
	failIndex := func(index string, changed bool) {
		// An index changed since the last pass that cannot be followed
		// (unreadable, a path out of the root, too many repositories): git
		// may find in it what this reading does not.
		if index != "" && changed && !failed[index] && aside() {
			failed[index] = true
			quarantine(index)
		}
	}
	found := 0
	judged := map[string]bool{} // git dirs judged as a work tree's
	var withModules []string    // common dirs whose modules/ to judge
	for len(queue) > 0 {
		next := queue[0]
		queue = queue[1:]
		work := next.work
		repo, err := openRepo(rootFD, root, work, m.spec.Writable)
		if err != nil || repo == nil {
			errs = append(errs, err)
			continue
		}
		if found++; found > maxNested {
			repo.close()
			errs = append(errs, fmt.Errorf("more than %d nested repositories: the rest are not judged", maxNested))
			failIndex(next.by, next.byChanged)
			break
		}
		if repo.commonRel != "" && !judged[repo.commonRel] {
			judged[repo.commonRel] = true
			withModules = append(withModules, repo.commonRel)
		}
		if work == "." {
			rootCommon = repo.commonRel
		} else if !m.judge(work, repo, rootCommon, marks[work], aside, quarantine) {
			if repo.badPointer != "" && !next.again {
				// What git finds there without it: the directory itself
				// as a bare repository, say.
				queue = append(queue, named{work: work, again: true})
			}
			repo.close()
			continue
		}
		links, changed, indexErr := m.gitlinks(repo)
		index := ""
		if repo.gitRel != "" {
			index = filepath.Join(repo.gitRel, "index")
		}
		if indexErr != nil {
			errs = append(errs, indexErr)
			failIndex(index, changed)
		}
		repo.close()
		for _, link := range links {
			// git takes an index's paths as they are: ./x and a/../x are x.
			link = filepath.Clean(link)
			if !filepath.IsLocal(link) {
				failIndex(index, changed)
				break
			}
			if child := filepath.Join(work, link); !seen[child] {
				seen[child] = true
				queue = append(queue, named{work: child, by: index, byChanged: changed})
			}
		}
	}
	for _, common := range withModules {
		m.judgeModules(rootFD, root, common, rootCommon, judged, aside, quarantine)
	}
	return moved, errors.Join(errs...)
}

// eachDir calls fn with each subdirectory of dirFD, by name and opened beneath
// it (a symlink is not followed), while *budget lasts; fn's fd is closed after.
func eachDir(dirFD int, budget *int, fn func(fd int, name string)) {
	f, err := openAt(dirFD, ".", unix.O_DIRECTORY)
	if err != nil {
		return
	}
	defer f.Close()
	entries, _ := f.ReadDir(maxNested)
	for _, e := range entries {
		if *budget <= 0 {
			return
		}
		if !e.IsDir() {
			continue
		}
		sub, err := beneath(int(f.Fd()), e.Name())
		if err != nil {
			continue
		}
		*budget--
		fn(sub, e.Name())
		unix.Close(sub)
	}
}

// judge judges the nested repository at work once its git files changed since
// they were last accepted, and moves what runs code to the quarantine if aside
// says so. It reports whether the repository is still there to follow.
func (m *mounter) judge(key string, repo *gitRepo, rootCommon string, found mark, aside func() bool, quarantine func(string)) bool {
	stamp, was := repo.stamp(rootCommon), m.nested.accepted[key]
	if was.stamp == stamp && was.code == "" {
		return true
	}
	// Code accepted before (the user's own include.path, say) is looked at
	// again each time: what it names can change without its config changing.
	paths, code := repo.runsCode(rootCommon, m.templates)
	if was.stamp == stamp && code == was.code {
		return true
	}
	// What runs code is the user's own if it was there before the session,
	// every file of it older: a command cannot set a change time back. What
	// was found only at the close, where nothing watched, may be a command's.
	if found == markUnseen {
		aside = func() bool { return true }
	}
	if code != "" && code != was.code && aside() && (found != markOld || !m.beforeStart(repo)) {
		for _, rel := range paths {
			quarantine(rel)
		}
		delete(m.nested.accepted, key)
		return false
	}
	m.nested.accepted[key] = acceptedRepo{stamp, code}
	return true
}

// beforeStart reports whether every git file of repo looked at was last
// changed before the session started.
func (m *mounter) beforeStart(repo *gitRepo) bool {
	return m.repos != nil && later(m.repos.started, repo.newest)
}

// judgeModules judges the submodules' git dirs under common/modules — each a
// directory with a HEAD, nested ones under their own modules/ — whether or not
// a work tree points at them now: `git submodule update` connects one again
// and runs its hooks. Those judged this pass as a work tree's (judged) are
// skipped, their modules/ walked on their own.
func (m *mounter) judgeModules(rootFD int, root, common, rootCommon string, judged map[string]bool, aside func() bool, quarantine func(string)) {
	budget := maxNested
	var walk func(dirFD int, rel string, depth int)
	walk = func(dirFD int, rel string, depth int) {
		if depth > 16 {
			return
		}
		eachDir(dirFD, &budget, func(fd int, name string) {
			subRel := filepath.Join(rel, name)
			var st unix.Stat_t
			if unix.Fstatat(fd, "HEAD", &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
				walk(fd, subRel, depth+1) // a name with slashes: modules/a/b
				return
			}
			gitDir := &gitRepo{work: subRel, gitDir: fd, commonDir: fd, gitRel: subRel, commonRel: subRel, rootAbsolute: root, modules: true}
			if judged[subRel] || !m.judge("modules:"+subRel, gitDir, rootCommon, markOld, aside, quarantine) {
				return
			}
			if mods, err := beneath(fd, "modules"); err == nil {
				walk(mods, filepath.Join(subRel, "modules"), depth+1)
				unix.Close(mods)
			}
		})
	}
	if mods, err := beneath(rootFD, filepath.Join(common, "modules")); err == nil {
		walk(mods, filepath.Join(common, "modules"), 0)
		unix.Close(mods)
	}
}

// gitlinks lists the gitlinks in repo's index (and its shared index, for a
// split one), reading it again only when it changed since the last pass, and
// says whether it did.
func (m *mounter) gitlinks(repo *gitRepo) (links []string, changed bool, err error) {
	key := repo.gitPath("index")
	var st unix.Stat_t
	if err := unix.Fstatat(repo.gitDir, "index", &st, unix.AT_SYMLINK_NOFOLLOW); errors.Is(err, unix.ENOENT) {
		return nil, false, nil
	}
	stamp := statStamp("index", &st)
	seen, ok := m.nested.indexes[key]
	if ok && seen.shared != "" { // a split index: the shared part can change too
		if unix.Fstatat(repo.gitDir, seen.shared, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
			stamp += statStamp(seen.shared, &st)
		}
	}
	if ok && seen.stamp == stamp {
		return seen.links, false, seen.err
	}
	f, err := openAt(repo.gitDir, "index", 0)
	if err != nil {
		return nil, true, fmt.Errorf("%s: %w", key, err)
	}
	defer f.Close()
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return nil, true, err
	}
	stamp = statStamp("index", &st) // what is read, if it changed meanwhile
	hash := gitHashSize(repo.commonDir, "config")
	idx, err := readGitIndex(f, st.Size, hash)
	if err == nil && idx.shared != "" {
		var shared gitIndex
		if sf, serr := openAt(repo.gitDir, idx.shared, 0); serr != nil {
			err = serr
		} else {
			var sst unix.Stat_t
			if err = unix.Fstat(int(sf.Fd()), &sst); err == nil {
				shared, err = readGitIndex(sf, sst.Size, hash)
				stamp += statStamp(idx.shared, &sst)
			}
			sf.Close()
		}
		idx.gitlinks = append(idx.gitlinks, shared.gitlinks...)
	}
	if err != nil {
		err = fmt.Errorf("%s: %w", key, err)
	}
	m.nested.indexes[key] = indexRead{stamp, idx.shared, idx.gitlinks, err}
	return idx.gitlinks, true, err
}

// gitRepo is a repository whose work tree is in the root, opened by
// descriptors that never left the root (but for the root's own, which may be
// a linked worktree of a repository elsewhere).
type gitRepo struct {
	work         string // the work tree, relative to the root
	dotGit       unix.Stat_t
	pointers     []string // the .git file and commondir contents, as read
	gitDir       int      // the git dir: the index, config.worktree
	commonDir    int      // config, hooks; gitDir when there is no commondir
	gitRel       string   // the git dir relative to the root, "" when outside
	commonRel    string   // the common dir relative to the root, "" when outside
	badPointer   string   // a .git file or commondir that leads where it cannot be followed
	rootAbsolute string
	modules      bool          // a submodule's git dir found under modules/, no work tree known
	newest       unix.Timespec // the latest change time of a file looked at (saw)
}

// saw notes a file's change time, which no command can set back. A
// directory's is not: it moves whenever an entry comes or goes (git's own
// index.lock), while what runs code is in files.
func (r *gitRepo) saw(st *unix.Stat_t) {
	if st.Mode&unix.S_IFMT != unix.S_IFDIR && later(st.Ctim, r.newest) {
		r.newest = st.Ctim
	}
}

func later(a, b unix.Timespec) bool {
	return a.Sec > b.Sec || a.Sec == b.Sec && a.Nsec > b.Nsec
}

// openRepo opens the repository at work (relative to the root), or returns
// nil if there is none.
func openRepo(rootFD int, root, work string, writable []string) (*gitRepo, error) {
	workFD, err := beneath(rootFD, work)
	if err != nil {
		return nil, nil // not reachable without a symlink: git does not walk into it
	}
	defer unix.Close(workFD)
	r := &gitRepo{work: work, gitDir: -1, commonDir: -1, rootAbsolute: root}
	dotGit := filepath.Join(work, ".git")
	kind := uint32(0)
	if err := unix.Fstatat(workFD, ".git", &r.dotGit, unix.AT_SYMLINK_NOFOLLOW); err == nil {
		kind = r.dotGit.Mode & unix.S_IFMT
		r.saw(&r.dotGit)
	}
	// git takes a .git directory that is no repository for nothing, and the
	// directory itself as a bare one if it is.
	if work != "." && (kind == 0 || kind == unix.S_IFDIR && !gitDirShape(workFD, ".git")) && gitDirShape(workFD, ".") {
		kind = 0
	} else if kind == 0 {
		return nil, nil
	}
	switch kind {
	case 0: // a bare repository: git run in work takes work as its git dir
		if r.gitDir, err = unix.Openat(workFD, ".", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err != nil {
			return nil, err
		}
		unix.Fstat(r.gitDir, &r.dotGit)
		r.gitRel = work
	case unix.S_IFDIR:
		if r.gitDir, err = beneath(workFD, ".git"); err != nil {
			return nil, err
		}
		r.gitRel = dotGit
	case unix.S_IFREG:
		to, ok := r.readPointer(workFD, ".git", "gitdir: ")
		if r.gitDir, r.gitRel, ok = r.follow(rootFD, work, to, ok); !ok {
			if work != "." && filepath.IsAbs(to) && !leadsInto(to, writable) {
				return nil, nil // a repository no command can write (the user's own, elsewhere)
			}
			if work != "." {
				r.badPointer = dotGit
				return r, nil
			}
			// The root is a linked worktree of a repository elsewhere: its
			// index says what the host's git walks into all the same.
			path := to
			if !filepath.IsAbs(path) {
				path = filepath.Join(root, path)
			}
			if r.gitDir, err = unix.Open(path, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err != nil {
				return nil, nil
			}
		}
	default:
		if work == "." {
			return nil, nil
		}
		r.badPointer = dotGit
		return r, nil
	}
	r.commonDir, r.commonRel = r.gitDir, r.gitRel
	var st unix.Stat_t
	if unix.Fstatat(r.gitDir, "commondir", &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
		r.saw(&st)
		to, ok := r.readPointer(r.gitDir, "commondir", "")
		base := r.gitRel
		if base == "" {
			ok = false
		}
		var fd int
		if fd, r.commonRel, ok = r.follow(rootFD, base, to, ok); ok {
			r.commonDir = fd
		} else if work != "." {
			r.badPointer = filepath.Join(r.gitRel, "commondir")
		} else {
			r.commonRel = ""
		}
	}
	return r, nil
}

// leadsInto reports whether the absolute path p may lead into one of dirs:
// it is beneath one, or leads there through a symlink, or through /proc or
// /dev/fd, which lead where the process that opens them stands — the user's
// git on the host, in the root.
func leadsInto(p string, dirs []string) bool {
	if under(p, "/proc") || under(p, "/dev") {
		return true
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		real = p
	}
	return slices.ContainsFunc(dirs, func(w string) bool { return under(p, w) || under(real, w) })
}

// gitDirShape reports whether the directory name (in dirFD) may be a
// repository to git (is_git_directory), taken loosely so that no spelling
// git accepts is missed: a HEAD, and objects and refs or a commondir, of any
// kind.
func gitDirShape(dirFD int, name string) bool {
	has := func(entry string) bool {
		var st unix.Stat_t
		return unix.Fstatat(dirFD, filepath.Join(name, entry), &st, unix.AT_SYMLINK_NOFOLLOW) == nil
	}
	return has("HEAD") && (has("commondir") || has("objects") && has("refs"))
}

// readPointer reads a small file that names another directory (a .git file,
// commondir), with prefix before the path, as git does: trailing line ends
// go, nothing else (a trailing space is part of the name).
func (r *gitRepo) readPointer(dirFD int, name, prefix string) (string, bool) {
	f, err := openAt(dirFD, name, 0)
	if err != nil {
		return "", false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, gitPointer+1))
	if err != nil || len(b) > gitPointer {
		return "", false
	}
	r.pointers = append(r.pointers, string(b))
	to, ok := strings.CutPrefix(strings.TrimRight(string(b), "\r\n"), prefix)
	return to, ok && to != ""
}

// follow opens to, a directory named by a pointer in base (relative to the
// root): beneath the root, through no symlink.
func (r *gitRepo) follow(rootFD int, base, to string, ok bool) (int, string, bool) {
	if !ok {
		return -1, "", false
	}
	rel := filepath.Join(base, to)
	if filepath.IsAbs(to) {
		var err error
		if rel, err = filepath.Rel(r.rootAbsolute, to); err != nil {
			return -1, "", false
		}
	}
	if !filepath.IsLocal(rel) {
		return -1, "", false
	}
	fd, err := beneath(rootFD, rel)
	return fd, rel, err == nil
}

// stamp names what the repository's git files are now — the .git entry,
// the pointers, config, config.worktree and each hook — by inode, size and
// change time, which no command can set back.
func (r *gitRepo) stamp(rootCommon string) string {
	var b strings.Builder
	b.WriteString(statStamp(".git", &r.dotGit))
	b.WriteString(strings.Join(r.pointers, "\x00"))
	if r.badPointer != "" {
		return b.String()
	}
	for _, c := range r.configs(rootCommon) {
		var st unix.Stat_t
		if unix.Fstatat(c.dirFD, c.name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
			r.saw(&st)
			b.WriteString(statStamp(c.name, &st))
		}
	}
	if r.commonRel != rootCommon {
		b.WriteString(r.hooksStamp())
	}
	// Not stamped, as they change with every commit, but counted as new:
	// HEAD, and the hooks directory, which no git command renames — a git
	// dir left without a HEAD by one session, or hooks staged elsewhere, are
	// made a repository's by the next one with a rename or a new HEAD.
	for _, f := range []gitFile{{r.gitDir, "", "HEAD"}, {r.commonDir, "", "hooks"}} {
		var st unix.Stat_t
		if unix.Fstatat(f.dirFD, f.name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && later(st.Ctim, r.newest) {
			r.newest = st.Ctim
		}
	}
	return b.String()
}

// gitFile is one of a repository's git files, by its directory.
type gitFile struct {
	dirFD        int
	dirRel, name string
}

// configs lists the config files git reads for the repository but the root's
// own (in rootCommon), which the protected paths guard.
func (r *gitRepo) configs(rootCommon string) []gitFile {
	files := []gitFile{{r.gitDir, r.gitRel, "config.worktree"}}
	if r.gitDir != r.commonDir {
		files = append(files, gitFile{r.gitDir, r.gitRel, "config"})
	}
	if r.commonRel != rootCommon {
		if r.gitDir != r.commonDir {
			files = append(files, gitFile{r.commonDir, r.commonRel, "config.worktree"})
		}
		files = append(files, gitFile{r.commonDir, r.commonRel, "config"})
	}
	return files
}

// runsCode lists, relative to the root, what in the repository would run
// code on the host — a pointer leading where it cannot be followed, a config
// with a key beyond what git writes, hooks that are not samples — and
// describes that code, "" for none. The root's own git dir (rootCommon) is
// left to the protected paths.
func (r *gitRepo) runsCode(rootCommon string, known hookSet) (paths []string, code string) {
	if r.badPointer != "" {
		return []string{r.badPointer}, "pointer " + r.badPointer + "\x00" + strings.Join(r.pointers, "\x00")
	}
	var b strings.Builder
	config := func(dirFD int, dirRel, name string) {
		var st unix.Stat_t
		if unix.Fstatat(dirFD, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
			return
		}
		var keys strings.Builder
		if !scanGitConfig(dirFD, name, func(section, sub, key, value string) bool {
			if section == "core" && sub == "" && key == "worktree" && r.ownWorkTree(value) {
				return true
			}
			if !plainKey(section, sub, key) {
				fmt.Fprintf(&keys, "%s %q %s=%q\n", section, sub, key, value)
				keys.WriteString(r.targetStamp(dirRel, value))
			}
			return true
		}) {
			keys.WriteString("unread " + statStamp(name, &st))
		}
		if keys.Len() > 0 {
			paths = append(paths, filepath.Join(dirRel, name))
			fmt.Fprintf(&b, "%s:\n%s", filepath.Join(dirRel, name), keys.String())
		}
	}
	for _, c := range r.configs(rootCommon) {
		config(c.dirFD, c.dirRel, c.name)
	}
	if r.commonRel != rootCommon {
		var st unix.Stat_t
		if unix.Fstatat(r.commonDir, "hooks", &st, unix.AT_SYMLINK_NOFOLLOW) == nil && !sampleHooksAt(r.commonDir, "hooks", known) {
			paths = append(paths, filepath.Join(r.commonRel, "hooks"))
			b.WriteString("hooks " + r.hooksStamp())
		}
	}
	return paths, b.String()
}

// ownWorkTree reports whether a core.worktree value (relative to the git dir)
// names the work tree the guard follows the repository's gitlinks from: one
// elsewhere would make git walk into repositories the guard does not see. A
// submodule's git dir, found under modules/ with no work tree known, may
// name any directory in the root: its work tree is judged through the
// gitlinks that reach it.
func (r *gitRepo) ownWorkTree(value string) bool {
	rel := filepath.Join(r.gitRel, value)
	if filepath.IsAbs(value) {
		var err error
		if rel, err = filepath.Rel(r.rootAbsolute, value); err != nil {
			return false
		}
	}
	return filepath.IsLocal(rel) && (r.modules || rel == r.work)
}

// targetStamp stamps what a config value may name — an included file, a
// hooks directory, an fsmonitor script — relative to the config's directory,
// the work tree or absolute, so that the user's own include.path accepted at
// the start is judged again once the file it names changes.
func (r *gitRepo) targetStamp(dirRel, value string) string {
	var b strings.Builder
	for _, p := range []string{value, filepath.Join(r.rootAbsolute, dirRel, value), filepath.Join(r.rootAbsolute, r.work, value)} {
		if !filepath.IsAbs(p) {
			continue
		}
		var st unix.Stat_t
		if unix.Lstat(p, &st) != nil {
			continue
		}
		r.saw(&st)
		b.WriteString(" " + statStamp(p, &st))
		if st.Mode&unix.S_IFMT == unix.S_IFDIR {
			entries, _ := os.ReadDir(p)
			for i, e := range entries {
				if i == 256 {
					break
				}
				if unix.Lstat(filepath.Join(p, e.Name()), &st) == nil {
					r.saw(&st)
					b.WriteString(statStamp(e.Name(), &st))
				}
			}
		}
	}
	return b.String()
}

// hooksStamp stamps the common dir's hooks (see treeStamp).
func (r *gitRepo) hooksStamp() string { return treeStamp(r.commonDir, "hooks", r.saw) }

// treeStamp stamps a file, or a directory of hooks: the directory itself,
// whose change time moves whenever an entry comes, goes or is renamed, and
// each entry git could run (not a *.sample), whose own moves when it is
// written. saw, if not nil, is shown each entry's stat.
func treeStamp(dirFD int, name string, saw func(*unix.Stat_t)) string {
	var st unix.Stat_t
	if unix.Fstatat(dirFD, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return ""
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		if saw != nil {
			saw(&st)
		}
		return statStamp(name, &st)
	}
	b := []byte(fmt.Sprintf("%s:%d:%d:%o:%d.%d;", name, st.Dev, st.Ino, st.Mode, st.Ctim.Sec, st.Ctim.Nsec))
	fd, err := unix.Openat(dirFD, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return string(b)
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	names, _ := f.Readdirnames(-1)
	slices.Sort(names)
	for _, n := range names {
		if !strings.HasSuffix(n, ".sample") && unix.Fstatat(fd, n, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
			if saw != nil {
				saw(&st)
			}
			b = append(b, statStamp(n, &st)...)
		}
	}
	return string(b)
}

// gitPath names a file of the git dir, for messages and as a cache key.
func (r *gitRepo) gitPath(name string) string {
	if r.gitRel == "" {
		return filepath.Join(r.work, ".git", name)
	}
	return filepath.Join(r.gitRel, name)
}

func (r *gitRepo) close() {
	if r.commonDir >= 0 && r.commonDir != r.gitDir {
		unix.Close(r.commonDir)
	}
	if r.gitDir >= 0 {
		unix.Close(r.gitDir)
	}
}

// statStamp names a file's identity and last change; a directory's identity
// only: entries come and go in it (index.lock) and are stamped on their own.
func statStamp(name string, st *unix.Stat_t) string {
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		return fmt.Sprintf("%s:%d:%d/;", name, st.Dev, st.Ino)
	}
	return fmt.Sprintf("%s:%d:%d:%o:%d:%d.%d;", name, st.Dev, st.Ino, st.Mode, st.Size, st.Ctim.Sec, st.Ctim.Nsec)
}
