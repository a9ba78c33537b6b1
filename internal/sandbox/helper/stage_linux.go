package helper

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/shellgate/shellgate/internal/beneath"
	"github.com/shellgate/shellgate/internal/copyup"
	"github.com/shellgate/shellgate/internal/protect"
	"golang.org/x/sys/unix"
)

// A protected entry that a command makes in the root (.vscode/tasks.json
// with a folderOpen task, .envrc, .hg/hgrc) is read by the user's tools on
// the host as soon as it is there: an editor opening the folder, direnv at
// a cd. Moving it aside when the command ends leaves it there while the
// command runs, which a command can make as long as it likes; moving it
// while the command runs would break ordinary work that makes one and
// fills it (a scaffolder's .vscode/extensions.json).
//
// So the entry is never made there: the copy-up supervisor, which performs
// every call that makes a name (mkdir, an open with O_CREAT, mknod,
// symlink, link, rename), asks the mounter (Judge), and one it stages is
// made in a directory of the quarantine (.shellgate-quarantine/.staging-…)
// and bound, in the session's mount namespace alone, onto an empty entry
// of the same kind made at its path: the command sees and fills it there,
// the host sees an empty directory or file. When protected paths are
// looked at next with the session's processes judged (a command's end, the
// guard while only jobs run, the close), the staged entry goes to the
// quarantine from where it was made, or, kept by an approval, to its path,
// and the empty one is removed. A name made anew over a staged one (an
// atomic writer's rename) replaces the staged one and is shown again.
// Names of a kind no tool makes there (a symlink, a hard link, a FIFO) are
// refused (EPERM), and a rename onto a directory that protected paths lie
// in (.github, .hg) fails as one across file systems does (EXDEV), so that
// mv copies, making each name on the way, judged.
//
// Known limits: a command cannot remove or rename a staged entry until it
// ends (EBUSY: a mount point); one the helper's death leaves behind stays
// staged (an empty entry at its path, what the command wrote in the
// staging directory).

// stagedEntry is what a command made at a protected path p: the entry
// named Base(p) in item, a directory of the quarantine.
type stagedEntry struct {
	item string // the staging directory's path
	// fd: the staging directory as it is in the root's mount, opened before
	// it was pinned (a mount of its own then): a rename onto the staged
	// entry, and the move to the quarantine, stay within one mount.
	fd  int
	dir bool
	// repo: a .git at a gitlink's path (repos_linux.go), judged by what it
	// holds when it ends.
	repo bool
	// config: the config of a repository a command made, made by hand
	// (stageMadeConfig), judged by what it sets when it ends.
	config bool
	// hook: a hook of a repository a command made (stageHook).
	hook bool
}

// hiddenSet holds the empty entries the host sees where entries are staged
// (by device and inode), which no command may fill (Hidden): one in a mount
// namespace of its own, where the staged entry is not bound, reaches them.
type hiddenSet struct {
	mu  sync.RWMutex
	set map[[2]uint64]bool
}

// Hidden says whether st is such an empty entry (copyup.Stager).
func (m *mounter) Hidden(st *unix.Stat_t) bool {
	m.hidden.mu.RLock()
	defer m.hidden.mu.RUnlock()
	return m.hidden.set[[2]uint64{uint64(st.Dev), st.Ino}]
}

func (m *mounter) hide(parent int, name string, hide bool) {
	var st unix.Stat_t
	if unix.Fstatat(parent, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return
	}
	m.hidden.mu.Lock()
	defer m.hidden.mu.Unlock()
	if m.hidden.set == nil {
		m.hidden.set = map[[2]uint64]bool{}
	}
	if k := [2]uint64{uint64(st.Dev), st.Ino}; hide {
		m.hidden.set[k] = true
	} else {
		delete(m.hidden.set, k)
	}
}

// judgeSets are the protected paths Judge looks for, built once.
type judgeSets struct {
	once sync.Once
	// Keyed by paths and names folded below the root (foldIn), as Judge
	// and Watched look them up: in a directory that folds case,
	// .VSCODE/tasks.json is the .vscode/tasks.json an editor opens.
	protected map[string]bool
	ancestors map[string]bool // directories protected paths lie in
	names     map[string]bool // the protected paths' last names (Watched)
	patterns  []string        // Spec.Patterns, folded
	// staged: the paths staged now, read by Judge without m.mu (which
	// protect holds while it moves things).
	mu     sync.RWMutex
	staged map[string]bool
}

// isStaged says whether p is staged now.
func (j *judgeSets) isStaged(p string) bool {
	j.mu.RLock()
	defer j.mu.RUnlock()
	return j.staged[p]
}

// stagedUnder says whether a staged entry is p or lies in it.
func (j *judgeSets) stagedUnder(p string) bool {
	j.mu.RLock()
	defer j.mu.RUnlock()
	for s := range j.staged {
		if under(s, p) {
			return true
		}
	}
	return false
}

func (j *judgeSets) setStaged(p string, staged bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.staged == nil {
		j.staged = map[string]bool{}
	}
	if staged {
		j.staged[p] = true
	} else {
		delete(j.staged, p)
	}
}

// Watched says whether an entry by this name is judged (copyup.Stager): a
// protected path's last name or a directory's such paths lie in, and git's
// config and its lock. A write-open is judged too: a host tool may have put
// another file in place of the one the session holds read-only (an
// editor's atomic save of .envrc, git config renaming config.lock over
// .git/config), unbound until the next look binds it again.
func (m *mounter) Watched(name string) bool {
	if _, ok := judgeBytecode(name, copyup.OpWrite); ok {
		return true
	}
	if m.watchedRepoName(name) {
		return true
	}
	if otherCase(name) {
		return true // gitNameInAnotherCase
	}
	j := m.sets()
	name = protect.Fold(name)
	if name == "config" || name == "config.lock" || name == "commondir" || j.names[name] {
		return true
	}
	return j.matchesPattern(name)
}

// matchesPattern says whether name, folded, matches one of Spec.Patterns.
func (j *judgeSets) matchesPattern(name string) bool {
	for _, pat := range j.patterns {
		if ok, _ := filepath.Match(pat, name); ok {
			return true
		}
	}
	return false
}

// foldIn is p with its path below root folded (protect.Fold), as the
// judge's sets hold it; root itself is as the session names it.
func foldIn(root, p string) string {
	rel, ok := strings.CutPrefix(p, root+"/")
	if !ok {
		return p
	}
	return root + "/" + protect.Fold(rel)
}

func (m *mounter) sets() *judgeSets {
	j := &m.judge
	j.once.Do(func() {
		j.protected, j.ancestors, j.names = map[string]bool{}, map[string]bool{}, map[string]bool{}
		if len(m.spec.Writable) == 0 {
			return
		}
		root := m.spec.Writable[0]
		git := filepath.Join(root, ".git")
		for _, pat := range m.spec.Patterns {
			j.patterns = append(j.patterns, protect.Fold(pat))
		}
		for _, p := range m.spec.Protected {
			p = foldIn(root, p)
			// .git's own only where the root had none: a repository's are
			// the git guard's (moveGitNew), and git writes the rest.
			if !under(p, root) || p == root || under(p, git) && m.gitAtStart {
				continue
			}
			j.protected[p] = true
			j.names[filepath.Base(p)] = true
			for d := filepath.Dir(p); d != root && under(d, root); d = filepath.Dir(d) {
				j.ancestors[d] = true
				j.names[filepath.Base(d)] = true
			}
		}
	})
	return j
}

// Judge says how a command's call makes the entry at p (copyup.Stager):
// staged if it is a protected path of the root outside .git (or a name at
// the root's top a pattern protects; in a root that had no .git, .git's
// config, hooks, info, commondir and config.worktree, and a .git file), made elsewhere by a rename or refused
// if it is a directory such paths lie in. In the root's .git when it was
// there with its config at the start: writing, making or renaming onto its
// config or config.lock is refused. No command in the session can write
// that config (it is bound read-only), but the user's git on the host
// renames config.lock into place, and the new config is writable until the
// next look binds it again: a job watching .git wrote it in that moment, or
// renamed a file of its own over config.lock while the host's git wrote it
// (see the corpus rows host-git-config-window-*). Nor is a commondir made
// in a repository's own directory there (the root's .git, a submodule's),
// nor a directory renamed onto .git (made Crossed: mv copies its names).
func (m *mounter) Judge(p string, op copyup.Op) copyup.Verdict {
	if p == "" || len(m.spec.Writable) == 0 || m.spec.Quarantine == "" {
		return copyup.Free
	}
	if op == copyup.OpMoveAway {
		return m.moveAway(p)
	}
	root := m.spec.Writable[0]
	if _, ok := m.isIndex(p); ok && !under(p, root) {
		v, _ := m.judgeRepo(p, op) // a linked worktree's index
		return v
	}
	if !under(p, root) || p == root || under(p, m.spec.Quarantine) {
		return copyup.Free
	}
	if v, ok := judgeBytecode(filepath.Base(p), op); ok {
		return v
	}
	git := filepath.Join(root, ".git")
	if rel, _ := strings.CutPrefix(p, root+"/"); gitNameInAnotherCase(rel) || m.inKeptGitDirInAnotherCase(p) {
		return copyup.Refused
	}
	if name := filepath.Base(p); otherCase(name) && gitDirName[canonicalGitName(name)] && op != copyup.OpMoveAway {
		// docs/g/head beside objects/ and refs/: a HEAD where the
		// directory folds case, judged as one.
		m.refreshRepos(false)
		if v, ok := m.bareHead(filepath.Join(filepath.Dir(p), canonicalGitName(name)), op); ok {
			return v
		}
	}
	if v, ok := m.judgeRepo(p, op); ok {
		return v
	}
	// Names are compared folded (f), as a directory that folds case finds
	// them; the entry is made, staged and looked up as p spells it.
	f := foldIn(root, p)
	if m.gitDirAtStart && f == git && op == copyup.OpRename {
		// A directory renamed onto .git brings names no call made there
		// (a commondir, below): mv copies it name by name instead.
		return copyup.Crossed
	}
	if m.gitAtStart && under(f, git) {
		if m.configAtStart && (f == git+"/config" || f == git+"/config.lock") {
			return copyup.Refused
		}
		if m.gitDirAtStart && (f == git+"/commondir" || f == git+"/config.worktree" || gitModuleCommondir(git, f)) {
			// git makes a commondir only in a linked worktree's directory
			// (.git/worktrees/NAME/): one in a repository's own directory
			// sends the host's git to the config it names, the moment it
			// is there, before any look could move it. So does a
			// config.worktree where the config sets
			// extensions.worktreeConfig (git sparse-checkout does), which
			// no look moved before the host's git status ran its
			// core.fsmonitor (corpus rows call-config-worktree-*).
			return copyup.Refused
		}
		return copyup.Free
	}
	if f == git && op == copyup.OpMake {
		// A .git file ("gitdir: …") in a root that had none: git on the
		// host reads the config of the directory it names.
		return copyup.Staged
	}
	j := m.sets()
	protected := j.protected[f] || filepath.Dir(f) == root && j.matchesPattern(filepath.Base(f))
	var st unix.Stat_t
	switch {
	case protected && op == copyup.OpLink:
		return copyup.Refused
	case protected && j.isStaged(p):
		if op == copyup.OpWrite {
			return copyup.Free // the command's own, staged
		}
		return copyup.Staged
	case protected && unix.Lstat(p, &st) == nil && op != copyup.OpMake && op != copyup.OpMakeDir:
		// The user's, read-only where it is, unless the host just put
		// another in its place (an editor's atomic save), which the next
		// look binds again: no command writes or replaces it meanwhile.
		// (Made again, it exists: Stage says so, as mkdir -p expects.)
		return copyup.Refused
	case protected && op != copyup.OpWrite:
		return copyup.Staged
	case op == copyup.OpWrite:
		return copyup.Free
	case j.ancestors[f] && op == copyup.OpRename:
		return copyup.Crossed
	case j.ancestors[f] && op == copyup.OpLink:
		return copyup.Refused
	}
	return copyup.Free
}

// judgeBytecode is the verdict on an entry of the root by this name that
// Python's import reads in place of a source, and whether it is one. A .pyc
// (in __pycache__ beside its source, or one with no source beside it, which
// shadows a module of that name) carries its source's mtime and size, not
// its text: one a command wrote would be run by the host's python while the
// source, git diff and a review show other code, and .gitignore's usual
// *.py[cod] hides it from git status too. So no command makes, writes,
// renames or links a name ending in .pyc anywhere in the root (EPERM;
// Python skips a cache it cannot write, and the sandbox's commands keep
// theirs in a tool cache, PYTHONPYCACHEPREFIX: home.PythonCache), a
// __pycache__ is never a link (to a tool cache the sandbox leaves
// writable, where a .pyc could wait), and a directory renamed onto
// __pycache__ crosses file systems (EXDEV: mv copies it name by name, each
// .pyc refused). A .pyc may still be removed: it is a cache.
func judgeBytecode(name string, op copyup.Op) (copyup.Verdict, bool) {
	name = protect.Fold(strings.TrimRight(name, "/"))
	switch {
	case strings.HasSuffix(name, ".pyc"):
		return copyup.Refused, true
	case name != "__pycache__":
		return copyup.Free, false
	case op == copyup.OpLink:
		return copyup.Refused, true
	case op == copyup.OpRename:
		return copyup.Crossed, true
	}
	return copyup.Free, true
}

// gitNames are the names git gives a repository's own files, at the top of
// a git directory and in its hooks directory: where a directory folds case
// (ext4 casefold, vfat, exfat, a Windows drive under WSL), a name that
// differs from one of them in case alone is that file to the host's git,
// but not to the byte-for-byte judgements of repositories below the root's
// top (repos_linux.go).
// Built on first use: only the helper judges names, not a check.
var gitNames = sync.OnceValue(func() []string {
	ns := []string{".git", "HEAD", "config", "config.lock", "config.worktree", "commondir", "gitdir", "hooks", "info", "index", "index.lock", "objects", "refs", "modules", "worktrees"}
	for h := range gitHooks {
		ns = append(ns, h)
	}
	return ns
})

// gitNameSets are gitNames as spelled and folded.
var gitNameSets = sync.OnceValues(func() (spelled, folded map[string]bool) {
	spelled, folded = map[string]bool{}, map[string]bool{}
	for _, n := range gitNames() {
		spelled[n], folded[protect.Fold(n)] = true, true
	}
	return spelled, folded
})

// canonicalGitName is name as gitNames spells it, if it is one of them in
// some case; else name.
func canonicalGitName(name string) string {
	f := protect.Fold(name)
	for _, n := range gitNames() {
		if protect.Fold(n) == f {
			return n
		}
	}
	return name
}

// inKeptGitDirInAnotherCase says whether p is one of git's own files in
// another case at the top, or in the hooks, of a git directory a command
// made and that is kept (a HEAD made docs/g one: bareHead), which
// gitNameInAnotherCase does not see, since no .git names it.
func (m *mounter) inKeptGitDirInAnotherCase(p string) bool {
	name := filepath.Base(p)
	if c := canonicalGitName(name); !otherCase(name) || c == "HEAD" || c == "objects" || c == "refs" {
		return false // what made it a git directory: judged as bareHead judges those
	}
	dir := filepath.Dir(p)
	r := &m.repos
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.gitDirs[dir] || filepath.Base(dir) == "hooks" && r.gitDirs[filepath.Dir(dir)]
}

// otherCase says whether name is one of gitNames in another case.
func otherCase(name string) bool {
	spelled, folded := gitNameSets()
	return !spelled[name] && folded[protect.Fold(name)]
}

// gitNameInAnotherCase says whether rel (below the root) names a .git in
// another case (.GIT, .Git), or, in a .git directory (the root's, a nested
// one, a submodule's under modules/, a linked worktree's under worktrees/),
// one of git's own files in another case (.git/CONFIG, .git/Hooks,
// .git/hooks/Pre-Commit). No tool makes such a name (git's are as
// gitNames spells them); where the directory folds case it is git's file,
// which the judgements of repositories compare byte for byte: so none is
// made, written or renamed onto (EPERM), on every file system.
func gitNameInAnotherCase(rel string) bool {
	comps := strings.Split(rel, "/")
	top := -1 // the index of a git directory's first component
	for i, c := range comps {
		if protect.Fold(c) == ".git" {
			if c != ".git" {
				return true
			}
			top = i + 1
			continue
		}
		if top < 0 {
			continue
		}
		switch {
		case i == top || i == top+1 && comps[top] == "hooks":
			if otherCase(c) {
				return true
			}
		case i == top+2 && (comps[top] == "modules" || comps[top] == "worktrees"):
			top = i // a submodule's or linked worktree's git directory
			if otherCase(c) {
				return true
			}
		}
	}
	return false
}

// gitModuleCommondir says whether p is a commondir (or config.worktree) in
// a submodule's repository (.git/modules/NAME, NAME any depth), not in one of its linked
// worktrees' directories.
func gitModuleCommondir(git, p string) bool {
	rel, ok := strings.CutPrefix(p, git+"/modules/")
	if !ok || filepath.Base(rel) != "commondir" && filepath.Base(rel) != "config.worktree" {
		return false
	}
	return !slices.Contains(strings.Split(filepath.Dir(rel), "/"), "worktrees")
}

// Stage makes the entry at p in a staging directory of the quarantine,
// with mk, and shows it at p in the session alone (copyup.Stager). It
// stages nothing when p exists and is not staged: the caller's call is
// then made as asked, and fails or replaces as the kernel says. Called
// from a confined thread, it does its work on another.
func (m *mounter) Stage(p string, op copyup.Op, mk func(dir int, name string) unix.Errno) (unix.Errno, bool) {
	done := make(chan unix.Errno, 1)
	stage := m.stage
	if _, ok := m.isIndex(p); ok {
		stage = m.stageIndex
	} else if len(m.spec.Writable) > 0 && filepath.Base(p) == ".git" && filepath.Dir(p) != m.spec.Writable[0] {
		stage = m.stageRepo
	} else if m.isMadeConfig(p) && op == copyup.OpRename {
		stage = m.stageConfig
	} else if m.isMadeConfig(p) {
		stage = m.stageMadeConfig
	} else if m.isMadeHook(p) {
		stage = m.stageHook
	}
	go func() { done <- stage(p, mk) }() // a new goroutine never runs on a locked thread
	errno := <-done
	if errno == errNotStaged {
		return 0, false
	}
	return errno, true
}

// maxStaged bounds the entries staged at once: each is two mounts, which
// make every later mount of the session slower (20 000 *.code-workspace
// names would); no ordinary command makes more than a few protected
// entries.
const maxStaged = 256

// errNotStaged: stage staged nothing (p exists, or there is no root or
// quarantine).
const errNotStaged = unix.Errno(^uintptr(0) >> 1)

func (m *mounter) stage(p string, mk func(dir int, name string) unix.Errno) unix.Errno {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.stageLocked(p, mk)
}

// endStaging makes every later stage refuse (EPERM): the session's end has
// killed its processes, and what a call the supervisor still held would
// stage after the end's last look (unstage) would stay at its path on the
// host, an empty entry no one removes.
func (m *mounter) endStaging() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ending = true
}

// stageLocked is stage, with m.mu held.
func (m *mounter) stageLocked(p string, mk func(dir int, name string) unix.Errno) unix.Errno {
	if m.ending {
		return unix.EPERM
	}
	if !m.ready || len(m.spec.Writable) == 0 || m.spec.Quarantine == "" {
		return errNotStaged
	}
	root := m.spec.Writable[0]
	rel, err := filepath.Rel(root, p)
	if err != nil || !filepath.IsLocal(rel) {
		return errNotStaged
	}
	name := filepath.Base(rel)
	rootFD, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return errnoOf(err)
	}
	defer unix.Close(rootFD)
	parent, err := beneath.Dir(rootFD, filepath.Dir(rel))
	if err != nil {
		return errnoOf(err)
	}
	defer unix.Close(parent)
	if s, ok := m.staged[p]; ok { // made again over it: shown again
		item := s.fd
		if errno := mk(item, name); errno != 0 {
			return errno
		}
		unix.Unmount(p, unix.MNT_DETACH)
		var st unix.Stat_t
		if unix.Fstatat(item, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
			s.dir = st.Mode&unix.S_IFMT == unix.S_IFDIR
		}
		return errnoOf(showAt(item, name, parent, name))
	}
	var st unix.Stat_t
	if unix.Fstatat(parent, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
		return unix.EEXIST // made since Judge looked: not replaced
	}
	if len(m.staged) >= maxStaged {
		return unix.ENOSPC
	}
	// In the quarantine, or where it is no directory of the root (a
	// command made it a symlink), at the root's top under a name no tool
	// reads.
	q, qdir, itemName := -1, m.spec.Quarantine, ".staging-"+time.Now().Format("20060102-150405")+"-"+beneath.RandomName()
	if qrel, err := filepath.Rel(root, m.spec.Quarantine); err == nil && filepath.IsLocal(qrel) {
		if err := unix.Mkdirat(rootFD, qrel, 0o755); err == nil || err == unix.EEXIST {
			q, _ = beneath.Dir(rootFD, qrel)
		}
	}
	if q < 0 {
		if q, err = unix.Dup(rootFD); err != nil {
			return errnoOf(err)
		}
		qdir, itemName = root, protect.QuarantinedPrefix+"staged-"+beneath.RandomName()
	}
	defer unix.Close(q)
	if err := unix.Mkdirat(q, itemName, 0o700); err != nil {
		return errnoOf(err)
	}
	item, err := beneath.Dir(q, itemName)
	if err != nil {
		return errnoOf(err)
	}
	kept := false
	defer func() {
		if !kept {
			unix.Close(item)
		}
	}()
	if errno := mk(item, name); errno != 0 {
		unix.Unlinkat(q, itemName, unix.AT_REMOVEDIR)
		return errno
	}
	if err := unix.Fstatat(item, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return errnoOf(err)
	}
	dir := st.Mode&unix.S_IFMT == unix.S_IFDIR
	// The empty entry the host sees; a command's own call would have
	// failed had one been made meanwhile.
	if dir {
		err = unix.Mkdirat(parent, name, 0o700)
	} else {
		var fd int
		if fd, err = unix.Openat(parent, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600); err == nil {
			unix.Close(fd)
		}
	}
	if err != nil {
		return errnoOf(err) // what was made stays in the staging directory
	}
	m.hide(parent, name, true)
	// The staging directory pinned: a mount point, which no command can
	// rename or remove.
	if err := beneath.Bind(item, "", false); err != nil {
		unix.Unlinkat(parent, name, map[bool]int{true: unix.AT_REMOVEDIR}[dir])
		return errnoOf(err)
	}
	m.gitSweep.Forget()
	if err := showAt(item, name, parent, name); err != nil {
		unix.Unlinkat(parent, name, map[bool]int{true: unix.AT_REMOVEDIR}[dir])
		return errnoOf(err)
	}
	repo := name == ".git" && filepath.Dir(p) != root
	m.staged[p], kept = &stagedEntry{item: filepath.Join(qdir, itemName), fd: item, dir: dir, repo: repo}, true
	m.judge.setStaged(p, true)
	return 0
}

// dropStaged, with m.mu held, ends the staging of p, throwing away what
// was staged (a command's config that a judged one replaces): the empty
// entry stays at p, to be replaced.
func (m *mounter) dropStaged(p string) {
	s, ok := m.staged[p]
	if !ok {
		return
	}
	delete(m.staged, p)
	m.judge.setStaged(p, false)
	m.gitSweep.Forget()
	unix.Unmount(p, unix.MNT_DETACH)
	var st unix.Stat_t
	if unix.Lstat(p, &st) == nil {
		m.hidden.mu.Lock()
		delete(m.hidden.set, [2]uint64{uint64(st.Dev), st.Ino})
		m.hidden.mu.Unlock()
	}
	unix.Unmount(s.item, unix.MNT_DETACH)
	unix.Unlinkat(s.fd, filepath.Base(p), 0)
	unix.Close(s.fd)
	root := m.spec.Writable[0]
	if rootFD, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err == nil {
		if qrel, err := filepath.Rel(root, filepath.Dir(s.item)); err == nil && filepath.IsLocal(qrel) {
			if q, err := beneath.Dir(rootFD, qrel); err == nil {
				unix.Unlinkat(q, filepath.Base(s.item), unix.AT_REMOVEDIR)
				unix.Close(q)
			}
		}
		unix.Close(rootFD)
	}
}

// harmless is the table's judgement of the content of p, a protected path
// of the root, if its entry has one (protect.Entry.Harmless).
func (m *mounter) harmless(p string) func([]byte) bool {
	rel, err := filepath.Rel(m.spec.Writable[0], p)
	if err != nil || !filepath.IsLocal(rel) {
		return nil
	}
	e, ok := protect.Lookup(filepath.ToSlash(rel))
	if !ok {
		return nil
	}
	return e.Harmless
}

// stagedHarmless judges the staged entry p (in the staging directory item)
// whose table entry judges content: kept, as a copy of the bytes judged (a
// job may hold the command's file open to write it once it is in place),
// where they are harmless (`uv init`'s .python-version); else it goes
// where aside says, as any protected entry.
func (m *mounter) stagedHarmless(p string, item int, harmless func([]byte) bool, aside func(string) bool) (goes bool, data []byte, st *unix.Stat_t) {
	data, st, errno := readRegular(item, filepath.Base(p))
	if errno != 0 {
		return aside(p), nil, nil // no regular file: renamed in place if kept
	}
	if harmless(data) {
		return false, data, st
	}
	return aside(p), data, st
}

// harmlessNow says whether p, a protected path of the root that appeared
// unstaged, holds content its table entry judges harmless.
func (m *mounter) harmlessNow(p string) bool {
	harmless := m.harmless(p)
	if harmless == nil {
		return false
	}
	data, _, errno := readRegular(unix.AT_FDCWD, p)
	return errno == 0 && harmless(data)
}

// showAt binds the entry name of from onto the entry at of to.
func showAt(from int, name string, to int, at string) error {
	tree, err := unix.OpenTree(from, name, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_SYMLINK_NOFOLLOW)
	if err != nil {
		return err
	}
	defer unix.Close(tree)
	return unix.MoveMount(tree, "", to, at, unix.MOVE_MOUNT_F_EMPTY_PATH)
}

// unstage, with m.mu held, ends what stage began for every staged entry:
// each goes to the quarantine if aside says so (it returns "path → where"),
// else to its path, and the empty entry there is removed. A repository at
// .git below the root's top goes if repoAside says so (and why), judged
// while only the session sees it; one that stays is kept as the submodules
// are.
func (m *mounter) unstage(aside func(string) bool, repoAside func(dir string) (bool, string), whole func() bool) (moved []string, errs []error) {
	if len(m.staged) == 0 {
		return nil, nil
	}
	root := m.spec.Writable[0]
	rootFD, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, []error{err}
	}
	defer unix.Close(rootFD)
	m.gitSweep.Forget()
	// In the order of the protected paths (then by name), as protect tells
	// the rest.
	order := func(p string) int {
		if i := slices.Index(m.spec.Protected, p); i >= 0 {
			return i
		}
		return len(m.spec.Protected)
	}
	paths := slices.SortedFunc(maps.Keys(m.staged), func(a, b string) int {
		return cmp.Or(cmp.Compare(order(a), order(b)), strings.Compare(a, b))
	})
	for _, p := range paths {
		s := m.staged[p]
		goes, copied := false, false
		var keepData []byte
		var keepSt *unix.Stat_t
		if s.repo {
			var why string
			if goes, why = repoAside(filepath.Dir(p)); !goes && whole() {
				if why = m.stagedRepoConfig(p, s); why != "" {
					goes = true
				}
			}
			if !goes {
				hm, hn := m.stagedRepoHooks(p, s, whole)
				moved, m.removed = append(moved, hm...), append(m.removed, hn...)
			} else {
				r, _ := filepath.Rel(root, filepath.Dir(p))
				m.repos.mu.RLock()
				link := m.repos.links[filepath.Dir(p)]
				m.repos.mu.RUnlock()
				if link {
					m.removed = append(m.removed, fmt.Sprintf("%s: the repository a command put at this gitlink's path %s, which git status in the project would obey: moved aside (the files stay)", r, why))
				} else {
					m.removed = append(m.removed, fmt.Sprintf("%s: the repository a command made here %s, which git on the host would obey there (a shell prompt's or an editor's git status, or git status in the project once a commit puts a gitlink to it in the index): moved aside (the files stay)", r, why))
				}
			}
		} else if s.config {
			goes, keepData, keepSt = m.stagedConfig(p, s.fd, whole)
		} else if harmless := m.harmless(p); harmless != nil && !s.dir {
			goes, keepData, keepSt = m.stagedHarmless(p, s.fd, harmless, aside)
			copied = keepSt != nil
		} else if goes = aside(p); goes && s.hook {
			m.removed = append(m.removed, m.hookNote(p))
		}
		delete(m.staged, p)
		m.judge.setStaged(p, false)
		rel, _ := filepath.Rel(root, p)
		name := filepath.Base(rel)
		unix.Unmount(p, unix.MNT_DETACH)
		if parent, err := beneath.Dir(rootFD, filepath.Dir(rel)); err == nil {
			m.hide(parent, name, false)
			if err := unix.Unlinkat(parent, name, map[bool]int{true: unix.AT_REMOVEDIR}[s.dir]); err != nil && err != unix.ENOENT {
				errs = append(errs, fmt.Errorf("unstage %s: the empty entry: %w", p, err))
			}
			unix.Close(parent)
		}
		unix.Unmount(s.item, unix.MNT_DETACH)
		item := s.fd
		if goes {
			to, err := beneath.QuarantineEntry(root, m.spec.Quarantine, item, rel)
			if to != "" {
				moved = append(moved, p+" → "+to)
				m.moves[p] = [2]time.Time{time.Now(), m.moves[p][0]}
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("unstage %s: %w", p, err))
			}
		} else if parent, err := beneath.Dir(rootFD, filepath.Dir(rel)); err == nil {
			if s.config || copied {
				// The bytes judged, as a copy (stagedConfig, stagedHarmless).
				if keepSt == nil {
					errs = append(errs, fmt.Errorf("unstage %s: unreadable", p))
				} else if errno := putCopy(parent, name, keepData, keepSt, true); errno != 0 {
					errs = append(errs, fmt.Errorf("unstage %s: back in place: %w", p, errno))
				}
				unix.Unlinkat(item, name, 0)
			} else if err := unix.Renameat2(item, name, parent, name, unix.RENAME_NOREPLACE); err != nil {
				errs = append(errs, fmt.Errorf("unstage %s: back in place: %w", p, err))
			} else if s.repo {
				m.acceptRepo(filepath.Dir(p))
			}
			unix.Close(parent)
		}
		unix.Close(item)
		// Empty now, unless something failed; found beneath the root.
		if qrel, err := filepath.Rel(root, filepath.Dir(s.item)); err == nil && filepath.IsLocal(qrel) {
			if q, err := beneath.Dir(rootFD, qrel); err == nil {
				unix.Unlinkat(q, filepath.Base(s.item), unix.AT_REMOVEDIR)
				unix.Close(q)
			}
		}
	}
	return moved, errs
}

func errnoOf(err error) unix.Errno {
	var errno unix.Errno
	if errors.As(err, &errno) {
		return errno
	}
	if err != nil {
		return unix.EIO
	}
	return 0
}
