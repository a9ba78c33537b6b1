package helper

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/shellgate/shellgate/internal/beneath"
	"github.com/shellgate/shellgate/internal/copyup"
	"github.com/shellgate/shellgate/internal/gitstate"
	"golang.org/x/sys/unix"
)

// git status in the root runs code of a repository only by recursing into a
// submodule: an entry of the root's index that is a gitlink, whose path
// holds a .git naming a git directory (core.fsmonitor there runs on the
// host). Judging the index and the submodules when protected paths are
// looked at (a command's end) leaves the host's git, which an editor runs
// every few seconds, free to recurse while a command runs. So every step
// of that path is judged as a command takes it, by the copy-up supervisor,
// which performs every call that makes a name or opens a file for writing:
//
//   - an index the git tracker looks at (.git/index, a linked worktree's, a
//     submodule's under .git/modules) is only ever replaced by a rename (git
//     writes index.lock and renames it): that rename puts in place a copy
//     the helper made and judged (gitstate.Tracker.Judge: gitlinks, sparse
//     directories and flags no approved command left are taken out), never
//     the command's own file, which it may still hold open. Writing an index
//     in place, making one, or linking one is refused (EPERM), and so is
//     rewriting a shared index (sharedindex.*) that exists;
//   - a .git made at a gitlink's path (of the root's index now, or of a
//     populated submodule's at the start) is staged, as a protected entry
//     is: the host sees an empty one while the command runs, and at its end
//     the repository goes to the quarantine if its config, commondir or own
//     submodules are more than git writes (gitstate.Hostile), else in place;
//   - a directory renamed onto such a path, or onto a directory one lies
//     in, crosses file systems (EXDEV: mv copies name by name, each judged);
//     the git directories of the submodules (those their .git files name at
//     the start, and those accepted since) cannot be made or renamed onto
//     once renamed away, and no command writes their config or makes a
//     commondir or config.worktree there.
//
// Whatever spells the step — git update-index --cacheinfo, git add of a
// nested repository, a script writing index bytes, cp or mv of a file made
// earlier, GIT_INDEX_FILE and a rename, index.lock renamed by hand, a
// symlink or /proc/self/fd path to the index — it is one of these calls.

// repoSets are the paths git status in the root enters as submodules.
type repoSets struct {
	mu sync.RWMutex
	// id: the root index as last read; links: its gitlinks' directories
	// and the submodules' at the start (absolute), ancestors: the
	// directories between the root and those, names: their last names
	// (for Watched).
	id        [4]int64
	links     map[string]bool
	ancestors map[string]bool
	names     map[string]bool
	// gitDirs: the git directories submodules' .git files named at the
	// start, and those of repositories accepted at gitlink paths since.
	gitDirs map[string]bool
	// accepted: the gitlinks each accepted repository's index had when it
	// was accepted, by its git directory, and its worktree.
	accepted map[string]acceptedRepo
}

// acceptedRepo is a repository acceptRepo kept where a command put it, or
// a .git directory a command made in place (made: judged again at each
// look, madeRepos).
type acceptedRepo struct {
	worktree string
	links    map[string]bool
	made     bool
	// bare: a directory made a git directory by a HEAD (bareHead), its
	// own worktree here.
	bare bool
	// linked: a linked worktree's git directory (worktrees/NAME).
	linked bool
}

// knownGitlinks reports whether gd is the git directory of a submodule
// populated at the start or of a repository accepted since, whose index is
// judged against the gitlinks it had then (not the git tracker's), and
// gives those.
func (m *mounter) knownGitlinks(gd string) (func(string) bool, bool) {
	if known, ok := m.subs.KnownGitlinks(gd); ok {
		return known, true
	}
	r := &m.repos
	r.mu.RLock()
	defer r.mu.RUnlock()
	a, ok := r.accepted[filepath.Clean(gd)]
	// Not one made in place: a gitlink in its index names a path whose
	// .git, made by a command, is judged as any (a cp -r of a repository
	// copies its index by an open).
	return func(p string) bool { return a.links[p] }, ok && !a.made
}

// isIndex says whether p is an index the git tracker looks at — in the
// root's .git, or the index of the linked worktree's git directory when
// the root is one (Spec.GitDirs' first) — and gives its git directory
// (".git", ".git/modules/…", or that directory).
func (m *mounter) isIndex(p string) (string, bool) {
	if len(m.spec.Writable) == 0 {
		return "", false
	}
	if len(m.spec.GitDirs) > 0 && p == filepath.Join(m.spec.GitDirs[0], "index") {
		return m.spec.GitDirs[0], true
	}
	rel, ok := strings.CutPrefix(p, filepath.Join(m.spec.Writable[0], ".git")+"/")
	if !ok {
		if _, sub := m.knownGitlinks(filepath.Dir(p)); sub && filepath.Base(p) == "index" {
			return filepath.Dir(p), true // a submodule's own .git directory (not absorbed)
		}
		return "", false
	}
	return gitstate.IndexGitDir(rel)
}

// rootIndex is the index git reads for the root: its .git's, or the linked
// worktree's.
func (m *mounter) rootIndex() string {
	root := m.spec.Writable[0]
	if fi, err := os.Lstat(filepath.Join(root, ".git")); (err != nil || !fi.IsDir()) && len(m.spec.GitDirs) > 0 {
		return filepath.Join(m.spec.GitDirs[0], "index")
	}
	return filepath.Join(root, ".git", "index")
}

// watchedRepoName says whether Judge looks at entries named name for the
// repository path: an index, a shared index, a .git, and the names of the
// gitlinks' paths and the submodules' git directories.
func (m *mounter) watchedRepoName(name string) bool {
	if name == "index" || name == ".git" || strings.HasPrefix(name, putPrefix) || gitDirName[name] || name == "config.worktree" || name == "hooks" || gitHooks[name] || strings.HasPrefix(name, "sharedindex.") {
		return true
	}
	r := &m.repos
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.names[name]
}

// judgeRepo is Judge's verdict on p for the repository path, and whether
// it has one.
func (m *mounter) judgeRepo(p string, op copyup.Op) (copyup.Verdict, bool) {
	root := m.spec.Writable[0]
	git := filepath.Join(root, ".git")
	name := filepath.Base(p)
	approved := m.approved != nil && m.approved()
	if strings.HasPrefix(name, putPrefix) {
		return copyup.Refused, true // the helper's own (putCopy)
	}
	if name == "config" && m.inStagedGitDir(p) {
		// A .git directory staged while the command runs (renamed into
		// place, at a gitlink's path): its config is judged with it at
		// the end, as a copy of what the look read, which no command holds
		// open (unstage); meanwhile git's own step, config.lock renamed
		// into place, puts a judged copy in place (stageConfig), and
		// nothing else makes, writes or links it.
		switch {
		case op == copyup.OpRename:
			return copyup.Staged, true
		case op == copyup.OpWrite && absent(p):
			return copyup.Free, true // fails, or is made (OpMake)
		}
		return copyup.Refused, true
	}
	if _, ok := m.isIndex(p); ok && m.git != nil {
		switch {
		case op == copyup.OpRename && !approved:
			return copyup.Staged, true // stageIndex
		case op == copyup.OpRename:
			return copyup.Free, true
		case op == copyup.OpMakeDir:
			return copyup.Free, true
		}
		// git writes none in place, nor makes or links one: a write would
		// reach the host's git before any look.
		return copyup.Refused, true
	}
	if strings.HasPrefix(name, "sharedindex.") && under(p, git) {
		var st unix.Stat_t
		if op == copyup.OpWrite || op == copyup.OpLink || unix.Lstat(p, &st) == nil {
			return copyup.Refused, true
		}
		return copyup.Free, true
	}
	m.refreshRepos(false)
	r := &m.repos
	dir := filepath.Dir(p)
	if name == ".git" && dir != m.spec.Writable[0] && op != copyup.OpWrite {
		if op == copyup.OpLink {
			// A symlink or hard link: the host's git would follow it to
			// what no look judges.
			return copyup.Refused, true
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		// A repository made anew here is judged anew when it ends: the one
		// accepted here before is gone.
		for d := range r.gitDirs {
			if a, ok := r.accepted[d]; under(d, p) || ok && a.worktree == dir {
				delete(r.gitDirs, d)
				delete(r.accepted, d)
			}
		}
		if op == copyup.OpMakeDir && !r.links[dir] && r.names != nil {
			// An empty directory, made in place (git init, git clone,
			// cp -r, mv's copy) and kept from its first name on: what
			// git would obey there is judged as it is written (its
			// config renamed into place by git config: stageConfig; no
			// commondir or config.worktree; a config made by hand is
			// staged, judged when the command ends), and it is not renamed
			// away (moveAway). Staged instead, it would be a mount point
			// until the command ends: git init x && rm -rf x, or mv x y,
			// would fail or leave the repository behind.
			if r.gitDirs == nil {
				r.gitDirs = map[string]bool{}
			}
			if r.accepted == nil {
				r.accepted = map[string]acceptedRepo{}
			}
			r.gitDirs[p] = true
			r.accepted[p] = acceptedRepo{worktree: dir, links: map[string]bool{}, made: true}
			for w := dir; w != m.spec.Writable[0] && under(w, m.spec.Writable[0]); w = filepath.Dir(w) {
				r.names[filepath.Base(w)] = true
			}
			return copyup.Free, true
		}
		// stageRepo: a .git file (naming a git directory elsewhere), a
		// directory renamed into place, a .git at a gitlink's path: staged,
		// in turn with the index's judgements (which ask whether a
		// repository is at a gitlink's path).
		return copyup.Staged, true
	}
	if gitDirName[name] && op != copyup.OpMoveAway {
		if v, ok := m.bareHead(p, op); ok {
			return v, true
		}
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	if name == ".git" && op == copyup.OpWrite {
		// A kept repository's .git file, rewritten in place ("gitdir:
		// elsewhere"), would name what no look judged.
		for _, a := range r.accepted {
			if a.worktree == dir {
				return copyup.Refused, true
			}
		}
	}
	if v, ok := m.judgeHook(p, op); ok {
		return v, true
	}
	_, made := r.accepted[dir]
	switch {
	case r.gitDirs[p] && op != copyup.OpWrite:
		return copyup.Refused, true
	case made && name == "config.lock" && op != copyup.OpLink:
		return copyup.Free, true
	case made && name == "config" && r.accepted[dir].made && op == copyup.OpWrite && (m.judge.isStaged(p) || absent(p)):
		// The command's own config, staged (below), or an open about to
		// make one (judged as that, OpMake).
		return copyup.Free, true
	case made && name == "config" && r.accepted[dir].made && op == copyup.OpMake:
		// A new repository's config made by hand or copied (cp -r, mv's
		// copy): staged, so the host's git, which a shell prompt or an
		// editor runs there at any moment, reads an empty config while the
		// command writes this one, and the look at its end judges what it
		// wrote (unstage: moved aside if it sets more than git writes).
		// Made in place, it was obeyed from its first write to that look
		// (a core.fsmonitor run by a prompt's git status meanwhile).
		return copyup.Staged, true
	case made && name == "config" && op == copyup.OpRename:
		// git config's own step (config.lock renamed into place): a
		// copy, judged as the repository was (stageConfig), which also
		// ends a staging of the config it replaces.
		if approved && !m.judge.isStaged(p) {
			return copyup.Free, true
		}
		return copyup.Staged, true
	case name == "commondir" && op == copyup.OpWrite && r.accepted[dir].linked && emptyFile(p):
		// git worktree add's, made as its HEAD's git directory was kept:
		// written once (what it names cannot set a work tree there: no
		// config.worktree is made).
		return copyup.Free, true
	case (name == "commondir" || name == "config" || name == "config.lock" || name == "config.worktree") && r.gitDirs[dir]:
		// What git status in the root obeys there: git writes none in a
		// submodule's repository but at its clone (staged, above) and at
		// the user's own git config.
		return copyup.Refused, true
	case r.links[p] && op == copyup.OpLink:
		return copyup.Refused, true
	case (r.links[p] || r.ancestors[p]) && op == copyup.OpRename:
		return copyup.Crossed, true
	}
	for d := range r.gitDirs {
		if under(d, p) && op == copyup.OpRename {
			return copyup.Refused, true
		}
	}
	return copyup.Free, false
}

// gitHooks are the names git runs hooks by (githooks(5), git 2.39–2.47).
// The host's git runs some at no step of the user's: post-index-change at
// a git status that refreshes the index (a shell prompt's, an editor's),
// reference-transaction at an editor's automatic fetch. A name a later git
// adds is judged only at the look (madeHooks).
var gitHooks = map[string]bool{
	"applypatch-msg": true, "pre-applypatch": true, "post-applypatch": true, "pre-commit": true,
	"pre-merge-commit": true, "prepare-commit-msg": true, "commit-msg": true, "post-commit": true,
	"pre-rebase": true, "post-checkout": true, "post-merge": true, "pre-push": true,
	"pre-receive": true, "update": true, "proc-receive": true, "post-receive": true,
	"post-update": true, "reference-transaction": true, "push-to-checkout": true, "pre-auto-gc": true,
	"post-rewrite": true, "sendemail-validate": true, "fsmonitor-watchman": true, "p4-changelist": true,
	"p4-prepare-changelist": true, "p4-post-changelist": true, "p4-pre-submit": true, "post-index-change": true,
}

// judgeHook, with r.mu read-locked, is Judge's verdict on p, a hook (or
// the hooks directory) of a repository a command made or that was kept
// where a command put it (not a directory a HEAD made one: its hooks run
// only at a push into it). A hook made there
// by hand is staged, as a protected entry is: the host's git, which runs
// post-index-change at a git status, sees an empty, non-executable file
// until the command ends, when the hook goes to the quarantine unless an
// approved command made it. None is linked or written in place, and no
// directory is renamed onto hooks (mv copies it name by name, each
// judged).
func (m *mounter) judgeHook(p string, op copyup.Op) (copyup.Verdict, bool) {
	r := &m.repos
	name, dir := filepath.Base(p), filepath.Dir(p)
	if name == "hooks" {
		if a, ok := r.accepted[dir]; ok && !a.bare {
			switch op {
			case copyup.OpLink:
				return copyup.Refused, true
			case copyup.OpRename:
				return copyup.Crossed, true
			}
		}
		return copyup.Free, false
	}
	if !gitHooks[name] || filepath.Base(dir) != "hooks" {
		return copyup.Free, false
	}
	if a, ok := r.accepted[filepath.Dir(dir)]; !ok || a.bare {
		return copyup.Free, false
	}
	staged := m.judge.isStaged(p)
	switch op {
	case copyup.OpLink:
		return copyup.Refused, true
	case copyup.OpMake, copyup.OpRename:
		return copyup.Staged, true
	case copyup.OpWrite:
		if staged || absent(p) {
			return copyup.Free, true // its own, or one an open makes (OpMake)
		}
		return copyup.Refused, true
	}
	return copyup.Free, false
}

// gitDirName are the names whose presence makes a directory a git
// directory for git (is_git_directory): a HEAD, with objects/ and refs/
// beside it or a commondir naming a directory that has them.
var gitDirName = map[string]bool{"HEAD": true, "objects": true, "refs": true, "commondir": true}

// bareHead is Judge's verdict on the entry p (one of gitDirName) that op
// makes or writes in a directory below the root's top that lies in no git
// directory, where it makes that directory a git directory: git takes it
// for a repository of its own (a bare one, or one whose core.worktree
// names a work tree) when run there (a shell prompt's git status in
// docs/guide), and obeys its config (core.fsmonitor), or with a commondir
// the config that names and its own config.worktree. Whichever of HEAD,
// objects, refs comes last, one already there when the session started
// (docs/HEAD in the project) included, is judged: a directory whose config
// sets more than git writes, or that has a commondir or config.worktree
// (git makes neither where git init --bare or clone --bare made HEAD),
// is refused it; else it is kept from then on as a .git a command made is
// (made: its config written only by a judged rename or staged, judged at
// each look, and not renamed away).
func (m *mounter) bareHead(p string, op copyup.Op) (copyup.Verdict, bool) {
	root := m.spec.Writable[0]
	dir := filepath.Dir(p)
	name := filepath.Base(p)
	there := func(n string) bool {
		_, err := os.Lstat(filepath.Join(dir, n))
		return err == nil
	}
	switch {
	case name == "HEAD" && op == copyup.OpMakeDir:
		return copyup.Free, false // no HEAD for git
	case op == copyup.OpWrite && !there(name):
		return copyup.Free, false // the open that makes it is judged as that (OpMake)
	case name != "HEAD" && there(name):
		// Made again (EEXIST), or replaced: what it completes was
		// complete before, and judged at the HEAD's turn.
		return copyup.Free, false
	}
	has := func(n string) bool { return n == name || there(n) }
	if !has("HEAD") || !(has("objects") && has("refs") || has("commondir")) {
		return copyup.Free, false // no git directory yet
	}
	rel, err := filepath.Rel(root, dir)
	if err != nil || !filepath.IsLocal(rel) || dir == root || filepath.Base(dir) == ".git" {
		return copyup.Free, false // the root's own (protected), a .git (judgeRepo)
	}
	r := &m.repos
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.gitDirs[dir] {
		return copyup.Free, false // kept: git's own HEAD written again
	}
	// Inside a git directory (a .git, or one kept) git makes HEADs in no
	// git directory (logs/HEAD, refs/remotes/origin/HEAD) and git
	// directories of its own (modules/NAME, worktrees/NAME), the user's
	// there at the start among them: only one this call completes is
	// judged. Left alone, a directory made a git directory there (and
	// shown elsewhere by a symlink, ln -s ../sub/.git/x docs/x) would be
	// one no look judged.
	inGit := slices.Contains(strings.Split(rel, string(filepath.Separator)), ".git")
	for d := range r.gitDirs {
		inGit = inGit || under(dir, d)
	}
	if inGit && (name == "HEAD" && there("HEAD") || there("HEAD") && (there("objects") && there("refs") || there("commondir"))) {
		return copyup.Free, false // complete before: not made by this call
	}
	// A linked worktree's (HEAD and a commondir, which git worktree add
	// writes in turn): its config is its common directory's, which with
	// no work tree of its own makes git run nothing there, but for its
	// config.worktree (core.worktree, core.fsmonitor, where the common
	// config sets extensions.worktreeConfig): git worktree add writes
	// none, and once kept none is made (judgeRepo).
	worktree := inGit && filepath.Base(filepath.Dir(dir)) == "worktrees"
	if has("commondir") && !worktree || has("config.worktree") {
		return copyup.Refused, true
	}
	if !m.copyBareConfig(dir) {
		return copyup.Refused, true
	}
	if r.names == nil {
		return copyup.Free, false
	}
	if r.gitDirs == nil {
		r.gitDirs = map[string]bool{}
	}
	if r.accepted == nil {
		r.accepted = map[string]acceptedRepo{}
	}
	r.gitDirs[dir] = true
	r.accepted[dir] = acceptedRepo{worktree: dir, links: map[string]bool{}, made: true, bare: true, linked: worktree}
	for w := dir; w != root && under(w, root); w = filepath.Dir(w) {
		r.names[filepath.Base(w)] = true
	}
	return copyup.Free, true
}

// copyBareConfig, with m.repos.mu held, judges the config of dir, about
// to be kept as a git directory (bareHead), and replaces it with a copy of
// the bytes judged: a command that made it before the HEAD may hold it
// open, to write core.fsmonitor once the directory is one, which the
// host's git would obey until the next look. It says whether dir may be
// kept (no config, or one that sets only what git writes).
func (m *mounter) copyBareConfig(dir string) bool {
	d, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(d)
	data, st, errno := readRegular(d, "config")
	switch {
	case errno == unix.ENOENT:
		return true
	case errno != 0 || gitstate.ConfigUnknown(data) != "":
		return false
	}
	return putCopy(d, "config", data, st, true) == 0
}

// emptyFile says whether p is an empty regular file.
func emptyFile(p string) bool {
	var st unix.Stat_t
	return unix.Lstat(p, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG && st.Size == 0
}

// absent says whether p names nothing.
func absent(p string) bool {
	var st unix.Stat_t
	return unix.Lstat(p, &st) == unix.ENOENT
}

// madeRepos, with m.mu held, judges each .git directory commands made in
// place (Judge) as a repository at a gitlink's path is judged when it is
// unstaged: one whose config, commondir or own submodules are more than
// git writes (gitstate.Hostile: a config made by hand, copied, or left from
// a config that git config's judged rename could not replace) goes to the
// quarantine if aside says so, and the envelope says why; else (an
// approved command's, or the user's between commands) it is theirs, and
// forgotten, as one whose .git is gone.
func (m *mounter) madeRepos(aside func() bool) (moved, notes []string, errs []error) {
	root := m.spec.Writable[0]
	r := &m.repos
	r.mu.RLock()
	var made []string
	for d, a := range r.accepted {
		if a.made {
			made = append(made, d)
		}
	}
	r.mu.RUnlock()
	slices.Sort(made)
	for _, d := range made {
		r.mu.RLock()
		a := r.accepted[d]
		r.mu.RUnlock()
		why := ""
		if a.bare {
			// Its files are the project's (docs/guide): only its config goes.
			mm, nn, ee := m.madeBare(d, aside)
			moved, notes, errs = append(moved, mm...), append(notes, nn...), append(errs, ee...)
			continue
		}
		if fi, err := os.Lstat(d); err != nil || !fi.IsDir() {
			why = "-" // gone, or made again (judged as such)
		} else if why = gitstate.Hostile(root, a.worktree); why == "" {
			if aside() {
				hm, hn, herrs := m.madeHooks(d, a.worktree)
				moved, notes, errs = append(moved, hm...), append(notes, hn...), append(errs, herrs...)
			}
			continue
		} else if !aside() {
			why = "-" // an approved command's, or the user's on the host: theirs
		}
		r.mu.Lock()
		delete(r.gitDirs, d)
		delete(r.accepted, d)
		r.mu.Unlock()
		if why == "-" {
			continue
		}
		to, err := m.quarantine(d)
		if to == "" {
			errs = append(errs, err)
			continue
		}
		rel, _ := filepath.Rel(root, a.worktree)
		moved = append(moved, d+" → "+to)
		notes = append(notes, fmt.Sprintf("%s: the repository a command made here %s, which git on the host would obey there (a shell prompt's or an editor's git status, or git status in the project once a commit puts a gitlink to it in the index): moved aside (the files stay)", rel, why))
	}
	return moved, notes, errs
}

// madeBare, with m.mu held, judges the config of a directory a HEAD made a
// git directory (bareHead): one that sets more than git writes goes to the
// quarantine if aside says so, else (an approved command's, the user's) the
// directory is theirs and forgotten, as one whose HEAD is gone.
func (m *mounter) madeBare(d string, aside func() bool) (moved, notes []string, errs []error) {
	root := m.spec.Writable[0]
	forget := func() {
		m.repos.mu.Lock()
		delete(m.repos.gitDirs, d)
		delete(m.repos.accepted, d)
		m.repos.mu.Unlock()
	}
	if _, err := os.Lstat(filepath.Join(d, "HEAD")); err != nil {
		forget()
		return nil, nil, nil
	}
	config := filepath.Join(d, "config")
	var key string
	if fi, err := os.Lstat(config); err == nil && !fi.Mode().IsRegular() {
		key = "a config that is no regular file"
	} else if b, err := os.ReadFile(config); err == nil {
		key = gitstate.ConfigUnknown(b)
	}
	if key == "" {
		// Its hooks run only at a push into it; a hooks directory there
		// may be the project's own (src/hooks).
		return nil, nil, nil
	}
	if !aside() {
		forget()
		return nil, nil, nil
	}
	to, err := m.quarantine(config)
	if to == "" {
		return nil, nil, []error{err}
	}
	rel, _ := filepath.Rel(root, d)
	return []string{config + " → " + to}, []string{fmt.Sprintf("%s: a command made this directory a git directory (HEAD, objects, refs) whose config sets %s, which git run there would obey (a shell prompt's git status): its config moved aside", rel, key)}, nil
}

// madeHooks, with m.mu held, moves to the quarantine the hooks of the
// repository a command made (its git directory gd): git init and git clone
// write only samples there (*.sample, which git never runs), and what else
// is there a command wrote, for the user's commit there to run on the host.
// A hooks that is not a directory (a symlink elsewhere) goes whole.
func (m *mounter) madeHooks(gd, worktree string) (moved, notes []string, errs []error) {
	rel, _ := filepath.Rel(m.spec.Writable[0], worktree)
	hooks := filepath.Join(gd, "hooks")
	fi, err := os.Lstat(hooks)
	if err != nil {
		return nil, nil, nil
	}
	var ps []string
	if !fi.IsDir() {
		ps = []string{hooks}
	} else if ents, err := os.ReadDir(hooks); err == nil {
		for _, e := range ents {
			if !strings.HasSuffix(e.Name(), ".sample") {
				ps = append(ps, filepath.Join(hooks, e.Name()))
			}
		}
	}
	for _, p := range ps {
		to, err := m.quarantine(p)
		if to == "" {
			errs = append(errs, err)
			continue
		}
		moved = append(moved, p+" → "+to)
		notes = append(notes, hookText(rel, filepath.Base(p)))
	}
	return moved, notes, errs
}

// moveAway is Judge's verdict on renaming p away: a repository a command
// made and that was kept (acceptRepo) was judged at its path, and only
// there are its .git and config guarded; renamed elsewhere with its
// worktree (mv ev evil), a later command would set its core.fsmonitor
// and commit a gitlink to it. So a rename of the worktree, its .git or its
// git directory, or of a directory they lie in, crosses file systems
// (EXDEV: mv copies name by name, and the .git it makes at the new path is
// staged and judged as any).
func (m *mounter) moveAway(p string) copyup.Verdict {
	if fi, err := os.Lstat(p); err == nil && fi.IsDir() && m.inGitDir(p) {
		return copyup.Crossed // a directory: what it holds goes with it
	}
	r := &m.repos
	r.mu.RLock()
	defer r.mu.RUnlock()
	for d, a := range r.accepted {
		if under(d, p) || under(a.worktree, p) {
			return copyup.Crossed
		}
	}
	// A directory a staged entry lies in: the mount showing it would go
	// with the directory, and the look that ends the staging would find
	// nothing at its path.
	if m.judge.stagedUnder(p) {
		return copyup.Crossed
	}
	return copyup.Free
}

// inGitDir says whether p lies strictly inside a git directory below the
// root: a .git directory (the root's, a nested repository's), or one the
// session keeps (gitDirs). A HEAD made there makes no repository of the
// directory it is in (bareHead leaves git's own alone: logs/HEAD,
// worktrees/NAME/HEAD), so a directory given HEAD, objects, refs and a
// config there and renamed out would be a repository no one judged (mv
// sub/.git/x docs/x): such a rename crosses file systems (EXDEV), and mv
// copies name by name, each judged where it is made. git renames no
// directory out of a git directory.
func (m *mounter) inGitDir(p string) bool {
	root := m.spec.Writable[0]
	rel, err := filepath.Rel(root, p)
	if err != nil || !filepath.IsLocal(rel) {
		return false
	}
	if parts := strings.Split(filepath.Dir(rel), string(filepath.Separator)); slices.Contains(parts, ".git") {
		return true
	}
	r := &m.repos
	r.mu.RLock()
	defer r.mu.RUnlock()
	for d := range r.gitDirs {
		if p != d && under(p, d) {
			return true
		}
	}
	return false
}

// refreshRepos reads the root's index again if it changed (or always, if
// force), and notes its gitlinks' paths.
func (m *mounter) refreshRepos(force bool) {
	if len(m.spec.Writable) == 0 {
		return
	}
	index := m.rootIndex()
	var st unix.Stat_t
	id := [4]int64{}
	if unix.Lstat(index, &st) == nil {
		id = [4]int64{int64(st.Ino), st.Size, st.Ctim.Sec, st.Ctim.Nsec}
	}
	r := &m.repos
	r.mu.RLock()
	same := !force && r.links != nil && r.id == id
	r.mu.RUnlock()
	if same {
		return
	}
	var data []byte
	if f, err := os.OpenFile(index, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0); err == nil {
		data, _ = io.ReadAll(io.LimitReader(f, 1<<30))
		f.Close()
	}
	m.noteGitlinks(id, data)
}

// noteGitlinks notes the gitlinks of the root's index data (id as
// refreshRepos takes it), with the submodules' at the start.
func (m *mounter) noteGitlinks(id [4]int64, data []byte) {
	root := m.spec.Writable[0]
	rels := m.subs.Paths()
	if ix, err := gitstate.Scan(data); err == nil {
		for i := range ix.Entries {
			if e := &ix.Entries[i]; e.Gitlink() && filepath.IsLocal(filepath.FromSlash(e.Path)) {
				rels = append(rels, filepath.FromSlash(e.Path))
			}
		}
	}
	m.repos.mu.RLock()
	for _, a := range m.repos.accepted {
		for l := range a.links {
			if rel, err := filepath.Rel(root, filepath.Join(a.worktree, filepath.FromSlash(l))); err == nil && filepath.IsLocal(rel) {
				rels = append(rels, rel)
			}
		}
	}
	m.repos.mu.RUnlock()
	links, ancestors, names := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, rel := range rels {
		p := filepath.Join(root, rel)
		links[p], names[filepath.Base(p)] = true, true
		for d := filepath.Dir(p); d != root && under(d, root); d = filepath.Dir(d) {
			ancestors[d], names[filepath.Base(d)] = true, true
		}
	}
	r := &m.repos
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.gitDirs == nil {
		r.gitDirs = map[string]bool{}
		for _, d := range m.subs.GitDirs() {
			r.gitDirs[d] = true
		}
	}
	for d := range r.gitDirs {
		names[filepath.Base(d)] = true
		for a := filepath.Dir(d); a != root && under(a, root); a = filepath.Dir(a) {
			names[filepath.Base(a)] = true
		}
	}
	for _, a := range r.accepted { // their worktrees, for moveAway
		for w := a.worktree; w != root && under(w, root); w = filepath.Dir(w) {
			names[filepath.Base(w)] = true
		}
	}
	m.judge.mu.RLock()
	for p := range m.judge.staged { // the directories staged entries lie in, for moveAway
		for w := filepath.Dir(p); w != root && under(w, root); w = filepath.Dir(w) {
			names[filepath.Base(w)] = true
		}
	}
	m.judge.mu.RUnlock()
	r.id, r.links, r.ancestors, r.names = id, links, ancestors, names
}

// stageIndex puts the index a command renames onto p in place as the git
// tracker would leave it: the command's file is renamed aside by mk, read,
// judged, and a copy of the judged bytes (with the file's mode and times:
// git compares files' times with the index's) is renamed onto p. The
// command's file is then removed: a descriptor it kept writes nothing the
// host's git reads.
func (m *mounter) stageIndex(p string, mk func(dir int, name string) unix.Errno) unix.Errno {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ending {
		return unix.EPERM
	}
	gd, _ := m.isIndex(p)
	if m.git == nil {
		return unix.EPERM
	}
	// The directory beneath the root, or the linked worktree's git
	// directory itself.
	base, rel := m.spec.Writable[0], ""
	if filepath.IsAbs(gd) {
		base = gd
	} else if r, err := filepath.Rel(base, filepath.Dir(p)); err == nil && filepath.IsLocal(r) {
		rel = r
	} else {
		return unix.EPERM
	}
	baseFD, err := unix.Open(base, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return errnoOf(err)
	}
	defer unix.Close(baseFD)
	dir := baseFD
	if rel != "" {
		if dir, err = beneath.Dir(baseFD, rel); err != nil {
			return errnoOf(err)
		}
		defer unix.Close(dir)
	}
	in := ".shellgate-index-" + beneath.RandomName()
	if errno := mk(dir, in); errno != 0 {
		return errno
	}
	defer unix.Unlinkat(dir, in, 0)
	data, st, errno := readRegular(dir, in)
	if errno != 0 {
		return errno
	}
	if p == m.rootIndex() {
		m.pinPending(data)
	}
	out, ok := []byte(nil), false
	if known, sub := m.knownGitlinks(gd); sub && filepath.IsAbs(gd) && under(gd, m.spec.Writable[0]) {
		// A submodule's own .git directory, which the git tracker does
		// not follow: its gitlinks are those it had at the start.
		out, ok = gitstate.DropGitlinks(data, known)
	} else {
		out, ok = m.git.Judge(gd, data)
	}
	if !ok {
		m.removed = append(m.removed, p+": a command's index could not be checked here (a split index, or one that does not parse): not put in place")
		return unix.EPERM
	}
	if errno := putCopy(dir, filepath.Base(p), out, st, true); errno != 0 {
		return errno
	}
	if p == m.rootIndex() {
		var now unix.Stat_t
		if unix.Fstatat(dir, filepath.Base(p), &now, unix.AT_SYMLINK_NOFOLLOW) == nil {
			id := [4]int64{int64(now.Ino), now.Size, now.Ctim.Sec, now.Ctim.Nsec}
			if bytes.Equal(out, data) {
				// Its gitlinks are noted (pinPending); one it no longer has
				// only stages a .git there until the next look.
				m.repos.mu.Lock()
				m.repos.id = id
				m.repos.mu.Unlock()
			} else {
				m.noteGitlinks(id, out)
			}
		}
	}
	if !bytes.Equal(out, data) {
		m.removed = append(m.removed, p+": as a command wrote it, it held gitlinks, sparse directory entries or flags no approved command left: written without them (git status in the root would run the config of the repositories the gitlinks name; the files stay)")
	}
	return 0
}

// stagedRepo says whether a .git a command made is staged, not yet judged.
func (m *mounter) stagedRepo() bool {
	if m == nil {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, s := range m.staged {
		if s.repo {
			return true
		}
	}
	return false
}

// inStagedGitDir says whether p lies in a .git directory staged now.
func (m *mounter) inStagedGitDir(p string) bool {
	d := filepath.Dir(p)
	return filepath.Base(d) == ".git" && m.judge.isStaged(d)
}

// isMadeConfig says whether p is the config of a repository a command
// made and that was kept (acceptRepo), or of a .git directory staged now.
func (m *mounter) isMadeConfig(p string) bool {
	if filepath.Base(p) != "config" {
		return false
	}
	if m.inStagedGitDir(p) {
		return true
	}
	r := &m.repos
	r.mu.RLock()
	defer r.mu.RUnlock()
	_, ok := r.accepted[filepath.Dir(p)]
	return ok
}

// stageConfig puts the config a command renames onto p, the config of a
// repository a command made and that was kept, in place as git config
// leaves it, if it sets only what git writes itself (gitstate.ConfigUnknown:
// git remote add, user.email); else the call fails (EPERM) and the config
// stays as it was. As stageIndex does, it puts a copy of the judged bytes
// in place, never the command's file, which it may hold open.
func (m *mounter) stageConfig(p string, mk func(dir int, name string) unix.Errno) unix.Errno {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ending || !m.isMadeConfig(p) {
		return unix.EPERM
	}
	root := m.spec.Writable[0]
	rel, err := filepath.Rel(root, filepath.Dir(p))
	if err != nil || !filepath.IsLocal(rel) {
		return unix.EPERM
	}
	rootFD, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return errnoOf(err)
	}
	defer unix.Close(rootFD)
	dir, err := beneath.Dir(rootFD, rel)
	if err != nil {
		return errnoOf(err)
	}
	defer unix.Close(dir)
	in := ".shellgate-config-" + beneath.RandomName()
	if errno := mk(dir, in); errno != 0 {
		return errno
	}
	defer unix.Unlinkat(dir, in, 0)
	data, st, errno := readRegular(dir, in)
	if errno != 0 {
		return errno
	}
	if key := gitstate.ConfigUnknown(data); key != "" && (m.approved == nil || !m.approved()) {
		r, _ := filepath.Rel(root, p)
		m.removed = append(m.removed, fmt.Sprintf("%s: a command's config set %s, which git on the host would obey in a repository a command made: not put in place (git writes only its format keys, remotes, branches and identity there)", r, key))
		return unix.EPERM
	}
	// A config the command made by hand, staged, is replaced by this one:
	// judged, it goes in place.
	m.dropStaged(p)
	if errno := putCopy(dir, "config", data, st, false); errno != 0 {
		return errno
	}
	return 0
}

// stageMadeConfig stages the config a command makes by hand in a
// repository it made (Judge): unstage judges it.
func (m *mounter) stageMadeConfig(p string, mk func(dir int, name string) unix.Errno) unix.Errno {
	return m.stageMarked(p, mk, func(s *stagedEntry) { s.config = true })
}

// stageHook stages a hook a command makes by hand in a repository it
// made (judgeHook): unstage moves it aside unless an approved command
// made it.
func (m *mounter) stageHook(p string, mk func(dir int, name string) unix.Errno) unix.Errno {
	return m.stageMarked(p, mk, func(s *stagedEntry) { s.hook = true })
}

// stageMarked stages p as stageLocked does and, once staged, marks its
// entry for unstage's judgement.
func (m *mounter) stageMarked(p string, mk func(dir int, name string) unix.Errno, mark func(*stagedEntry)) unix.Errno {
	m.mu.Lock()
	defer m.mu.Unlock()
	errno := m.stageLocked(p, mk)
	if s := m.staged[p]; errno == 0 && s != nil {
		mark(s)
	}
	return errno
}

// isMadeHook says whether p is a hook of a repository a command made or
// put (judgeHook).
func (m *mounter) isMadeHook(p string) bool {
	hooks := filepath.Dir(p)
	if !gitHooks[filepath.Base(p)] || filepath.Base(hooks) != "hooks" {
		return false
	}
	r := &m.repos
	r.mu.RLock()
	defer r.mu.RUnlock()
	a, ok := r.accepted[filepath.Dir(hooks)]
	return ok && !a.bare
}

// hookNote is what the envelope says of the hook p of a repository a
// command made, moved aside.
func (m *mounter) hookNote(p string) string {
	gd := filepath.Dir(filepath.Dir(p))
	m.repos.mu.RLock()
	w := m.repos.accepted[gd].worktree
	m.repos.mu.RUnlock()
	if w == "" {
		w = filepath.Dir(gd)
	}
	rel, _ := filepath.Rel(m.spec.Writable[0], w)
	return hookText(rel, filepath.Base(p))
}

func hookText(rel, name string) string {
	return fmt.Sprintf("%s: the hook %s in the repository a command made here, which git on the host would run there (post-index-change at a git status, the others at a commit, checkout, merge or fetch): moved aside", rel, name)
}

// stagedRepoConfig, with m.mu held, replaces the config of the git
// directory of the staged .git at p (entry s) that stays with a copy of
// its bytes, judged again here, before the host sees it: a job that made
// it, or wrote it before its look, may hold it open to write what git on
// the host would run once it is in place, and a repository kept is not
// judged again. It says why the repository goes instead, if its bytes
// now set more than git writes.
func (m *mounter) stagedRepoConfig(p string, s *stagedEntry) string {
	root := m.spec.Writable[0]
	var gd int
	var err error
	if s.dir {
		gd, err = beneath.Dir(s.fd, ".git")
	} else {
		g := gitDirOf(filepath.Dir(p))
		git := filepath.Join(root, ".git")
		rel, rerr := filepath.Rel(root, g)
		if g == "" || rerr != nil || !filepath.IsLocal(rel) || g == git || under(g, filepath.Join(git, "worktrees")) {
			return "" // none, or the root's own: the session's guard keeps those
		}
		rootFD, oerr := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if oerr != nil {
			return ""
		}
		gd, err = beneath.Dir(rootFD, rel)
		unix.Close(rootFD)
	}
	if err != nil {
		return ""
	}
	defer unix.Close(gd)
	data, st, errno := readRegular(gd, "config")
	switch {
	case errno == unix.ENOENT:
		return ""
	case errno != 0:
		return "has a config that cannot be read"
	}
	if key := gitstate.ConfigUnknown(data); key != "" {
		return "sets " + key + " in its config"
	}
	if errno := putCopy(gd, "config", data, st, true); errno != 0 && errno != unix.EROFS && errno != unix.EBUSY {
		return "has a config that could not be copied"
	}
	return ""
}

// stagedRepoHooks, with m.mu held, moves to the quarantine what a staged
// .git at p (entry s) that stays brings into hooks/ besides git's samples,
// while the host still sees an empty .git there, if aside says so: a
// directory renamed onto .git, or a git directory a .git file names, with
// a hook a command wrote (post-index-change, which the host's git status
// runs) is more than git init or git clone makes, as in a repository a
// command made in place (madeHooks). The git directory a .git file names
// is judged only where it is the session's to judge: not the root's own,
// nor one of its linked worktrees' (whose hooks are the root's).
func (m *mounter) stagedRepoHooks(p string, s *stagedEntry, aside func() bool) (moved, notes []string) {
	root := m.spec.Writable[0]
	w := filepath.Dir(p)
	relW, _ := filepath.Rel(root, w)
	if !s.dir {
		gd := gitDirOf(w) // read through the staged entry, still shown at p
		git := filepath.Join(root, ".git")
		if gd == "" || !under(gd, root) || gd == git || under(gd, filepath.Join(git, "worktrees")) || !aside() {
			return nil, nil
		}
		mm, nn, _ := m.madeHooks(gd, w)
		return mm, nn
	}
	rel := filepath.Join(relW, ".git", "hooks")
	hooks, err := beneath.Dir(s.fd, ".git/hooks")
	if err != nil {
		// A hooks that is no directory (a symlink elsewhere) goes whole.
		var st unix.Stat_t
		if unix.Fstatat(s.fd, ".git/hooks", &st, unix.AT_SYMLINK_NOFOLLOW) != nil || !aside() {
			return nil, nil
		}
		if gd, err := beneath.Dir(s.fd, ".git"); err == nil {
			if to, _ := beneath.QuarantineEntry(root, m.spec.Quarantine, gd, rel); to != "" {
				moved, notes = append(moved, filepath.Join(root, rel)+" → "+to), append(notes, hookText(relW, "hooks"))
			}
			unix.Close(gd)
		}
		return moved, notes
	}
	defer unix.Close(hooks)
	list, err := unix.Openat(hooks, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil
	}
	f := os.NewFile(uintptr(list), "hooks")
	ents, _ := f.ReadDir(-1)
	f.Close()
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".sample") || !aside() {
			continue
		}
		if to, _ := beneath.QuarantineEntry(root, m.spec.Quarantine, hooks, filepath.Join(rel, e.Name())); to != "" {
			moved, notes = append(moved, filepath.Join(root, rel, e.Name())+" → "+to), append(notes, hookText(relW, e.Name()))
		}
	}
	return moved, notes
}

// stagedConfig, with m.mu held, judges the config a command made by hand
// in a repository it made (p, staged in item): one that sets more than git
// writes goes to the quarantine if aside says so (the repository's other
// files stay), and the note says why; else it goes in place, as a copy of
// the bytes judged (keep: data and st), never the command's file, which a
// job may hold open to write once it is in place.
func (m *mounter) stagedConfig(p string, item int, aside func() bool) (goes bool, data []byte, st *unix.Stat_t) {
	root := m.spec.Writable[0]
	key := "a config that is no regular file"
	data, st, errno := readRegular(item, filepath.Base(p))
	if errno == 0 {
		key = gitstate.ConfigUnknown(data)
	}
	if key == "" || !aside() {
		return false, data, st
	}
	d := filepath.Dir(p)
	m.repos.mu.RLock()
	a := m.repos.accepted[d]
	m.repos.mu.RUnlock()
	if a.bare {
		rel, _ := filepath.Rel(root, d)
		m.removed = append(m.removed, fmt.Sprintf("%s: a command made this directory a git directory (HEAD, objects, refs) whose config sets %s, which git run there would obey (a shell prompt's git status): its config moved aside", rel, key))
		return true, nil, nil
	}
	w := a.worktree
	if w == "" {
		w = filepath.Dir(d)
	}
	rel, _ := filepath.Rel(root, w)
	m.removed = append(m.removed, fmt.Sprintf("%s: the repository a command made here sets %s in a config written by hand, which git on the host would obey there (a shell prompt's or an editor's git status; the host saw an empty config while the command ran): its config moved aside (the files stay)", rel, key))
	return true, nil, nil
}

// stageRepo makes the .git at p that a command makes below the root's top
// and Judge stages (a .git file, naming a git directory elsewhere; a
// directory renamed into place; any .git at a gitlink's path), with m.mu
// held, as stageIndex judges an index: a repository is made at a gitlink's
// path either before the index is judged (which then drops the gitlink) or
// after (and staged). Not only at a gitlink's path: git on the host enters
// any repository below the root, the user's shell prompt or editor on
// their own (VS Code runs git status in each it finds), the user's git
// status in the root once a commit the command made (git commit-tree,
// update-ref: in no index) puts a gitlink there at a git reset or
// checkout. So each is judged as a submodule's is before the host sees
// more than an empty .git, and one that is kept cannot have its config
// written but by a judged rename, or be moved away from the path it was
// judged at (judgeRepo). A .git directory made empty (mkdir) is made in
// place instead, and judged as it fills (Judge, madeRepos).
func (m *mounter) stageRepo(p string, mk func(dir int, name string) unix.Errno) unix.Errno {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ending {
		return unix.EPERM
	}
	m.refreshRepos(false)
	errno := m.stageLocked(p, mk)
	if errno == 0 {
		// The directories it lies in are judged when renamed (moveAway).
		r := &m.repos
		r.mu.Lock()
		for w := filepath.Dir(p); w != m.spec.Writable[0] && under(w, m.spec.Writable[0]); w = filepath.Dir(w) {
			r.names[filepath.Base(w)] = true
		}
		r.mu.Unlock()
	}
	return errno
}

// pinPending, with m.mu held, makes the paths of the gitlinks in index
// data (the root's) that are new to the session mount points, made empty
// directories where nothing is, before the index is judged: whether a
// repository is at such a path is then asked of a path nothing can be
// renamed onto, whose .git only stageRepo makes. They are noted as
// gitlinks' paths at once, and unpinned when protected paths are next
// looked at (after the git tracker judged the index).
func (m *mounter) pinPending(data []byte) {
	ix, err := gitstate.Scan(data)
	if err != nil {
		return
	}
	m.refreshRepos(false)
	root := m.spec.Writable[0]
	r := &m.repos
	var fresh []string
	r.mu.RLock()
	for i := range ix.Entries {
		e := &ix.Entries[i]
		rel := filepath.FromSlash(e.Path)
		if e.Gitlink() && filepath.IsLocal(rel) && !r.links[filepath.Join(root, rel)] && len(fresh) < maxStaged {
			fresh = append(fresh, rel)
		}
	}
	r.mu.RUnlock()
	if len(fresh) == 0 {
		return
	}
	rootFD, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	defer unix.Close(rootFD)
	r.mu.Lock()
	for _, rel := range fresh {
		p := filepath.Join(root, rel)
		r.links[p], r.names[filepath.Base(p)] = true, true
		for d := filepath.Dir(p); d != root && under(d, root); d = filepath.Dir(d) {
			r.ancestors[d], r.names[filepath.Base(d)] = true, true
		}
	}
	r.mu.Unlock()
	for _, rel := range fresh {
		fd, err := mkdirBeneath(rootFD, rel)
		if err != nil {
			continue // not a directory: the index's judgement reads it as it is
		}
		if beneath.Bind(fd, "", false) == nil {
			m.repoPins = append(m.repoPins, filepath.Join(root, rel))
		}
		unix.Close(fd)
	}
}

// unpinPending, with m.mu held, ends pinPending's mounts.
func (m *mounter) unpinPending() {
	for _, p := range m.repoPins {
		unix.Unmount(p, unix.MNT_DETACH)
	}
	m.repoPins = nil
}

// mkdirBeneath opens the directory rel beneath dirFD, making what is
// missing on the way, through no symlink.
func mkdirBeneath(dirFD int, rel string) (int, error) {
	fd, err := unix.Dup(dirFD)
	if err != nil {
		return -1, err
	}
	for _, name := range strings.Split(rel, string(filepath.Separator)) {
		if err := unix.Mkdirat(fd, name, 0o755); err != nil && err != unix.EEXIST {
			unix.Close(fd)
			return -1, err
		}
		next, err := beneath.Dir(fd, name)
		unix.Close(fd)
		if err != nil {
			return -1, err
		}
		fd = next
	}
	return fd, nil
}

// readRegular reads name in dir, a regular file of at most 1 GiB.
func readRegular(dir int, name string) ([]byte, *unix.Stat_t, unix.Errno) {
	fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, errnoOf(err)
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, nil, errnoOf(err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || st.Size > 1<<30 {
		return nil, nil, unix.EPERM
	}
	data, err := io.ReadAll(io.LimitReader(f, 1<<30))
	if err != nil {
		return nil, nil, errnoOf(err)
	}
	return data, &st, 0
}

// acceptRepo, with m.mu held, keeps the repository a command put at a
// gitlink's path (dir, its worktree) as the session's submodules are: its
// git directory is not replaced, and no command writes its config or
// makes a commondir there (judgeRepo).
func (m *mounter) acceptRepo(dir string) {
	gd := gitDirOf(dir)
	if gd == "" {
		return
	}
	// Its own gitlinks are its clone's: its index is judged against them
	// from now on, and a .git at their paths is staged.
	links := map[string]bool{}
	if b, err := os.ReadFile(filepath.Join(gd, "index")); err == nil {
		if ix, err := gitstate.Scan(b); err == nil {
			for i := range ix.Entries {
				if e := &ix.Entries[i]; e.Gitlink() && filepath.IsLocal(filepath.FromSlash(e.Path)) {
					links[e.Path] = true
				}
			}
		}
	}
	r := &m.repos
	r.mu.Lock()
	if r.gitDirs == nil {
		r.gitDirs = map[string]bool{}
	}
	if r.accepted == nil {
		r.accepted = map[string]acceptedRepo{}
	}
	r.gitDirs[gd] = true
	r.accepted[gd] = acceptedRepo{worktree: dir, links: links}
	r.mu.Unlock()
	m.refreshRepos(true)
}

// gitDirOf is the git directory of the repository whose worktree is dir
// (its .git, or what its .git file names), "" when none.
func gitDirOf(dir string) string {
	dotgit := filepath.Join(dir, ".git")
	fi, err := os.Lstat(dotgit)
	switch {
	case err != nil:
		return ""
	case fi.IsDir():
		return dotgit
	case !fi.Mode().IsRegular() || fi.Size() > 4096:
		return ""
	}
	b, err := os.ReadFile(dotgit)
	rest, ok := strings.CutPrefix(string(b), "gitdir:")
	if err != nil || !ok {
		return ""
	}
	gd := strings.TrimSpace(rest)
	if !filepath.IsAbs(gd) {
		gd = filepath.Join(dir, gd)
	}
	return filepath.Clean(gd)
}

// putPrefix starts the names putCopy writes its copies under before it
// renames them into place: no command opens, makes, links or renames such
// a name (judgeRepo), so none holds the copy open to write it once it is
// an index or a config.
const putPrefix = ".shellgate-put-"

// putCopy writes data to a new name in dir with st's mode (and, with
// times, its access and modification times) and renames it over name: what
// a command wrote goes in as a copy the helper made after judging it, never
// as the command's own file, which the command may still hold open.
func putCopy(dir int, name string, data []byte, st *unix.Stat_t, times bool) unix.Errno {
	tmp := putPrefix + beneath.RandomName()
	fd, err := unix.Openat(dir, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, st.Mode&0o777)
	if err != nil {
		return errnoOf(err)
	}
	for b := data; len(b) > 0 && err == nil; {
		var n int
		n, err = unix.Write(fd, b)
		b = b[n:]
	}
	if err == nil {
		err = unix.Fchmod(fd, st.Mode&0o777)
	}
	if err == nil && times {
		err = unix.UtimesNanoAt(dir, tmp, []unix.Timespec{st.Atim, st.Mtim}, unix.AT_SYMLINK_NOFOLLOW)
	}
	unix.Close(fd)
	if err == nil {
		err = unix.Renameat(dir, tmp, dir, name)
	}
	if err != nil {
		unix.Unlinkat(dir, tmp, 0)
		return errnoOf(err)
	}
	return 0
}
