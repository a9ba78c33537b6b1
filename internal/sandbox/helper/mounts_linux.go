package helper

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/shellgate/shellgate/internal/beneath"
	"github.com/shellgate/shellgate/internal/gitstate"
	"github.com/shellgate/shellgate/internal/protect"
	"golang.org/x/sys/unix"
)

// mounter builds the session's view of the filesystem in its mount namespace.
type mounter struct {
	spec *Spec

	mu    sync.Mutex
	ready bool // the mount namespace is the session's own
	// ending: the session's end killed its processes; a call still in the
	// supervisor's hands stages nothing after the end's last look (endStaging).
	ending    bool
	protected map[string]bool // protected paths made read-only
	pinned    map[string]bool // directories made mount points
	kept      map[string]bool // keep's paths, bound again if the host replaces one
	// keptAbsent: keep's paths that were absent, watched for (moveKeptNew).
	keptAbsent map[string]bool
	// forced: protected paths made read-only where they are only because
	// moving them aside failed (a command renaming them that moment): they
	// were to go, and are not the user's (see chosen).
	forced map[string]bool
	// gitAtStart: the root had a .git (directory, or a worktree's file) when
	// the session started; gitDirAtStart: a directory.
	gitAtStart, gitDirAtStart bool
	// configAtStart: the root's .git directory had its config then.
	configAtStart bool
	// moves: when each protected path was last moved aside in the session,
	// and the time before (see again); redirects: those moveGitNew or
	// moveKeptNew moved, which no ordinary command makes.
	moves     map[string][2]time.Time
	redirects map[string]bool
	removed   []string // what was undone in .git since takeRemoved
	// nestedGit: the git directories of the nested repositories found when
	// the session started, and the one the root's .git file names in the
	// root (relative to it), swept as the root's .git.
	nestedGit []string
	git       *gitstate.Tracker
	// subs: the root's submodules not populated at the start (see
	// gitstate.Submodules), nil when the root had no .git directory.
	subs    *gitstate.Submodules
	gitSent int    // the tracker's count gitKnown last gave, -1 before
	listBuf []byte // listRoot's
	rootDir *int   // listRoot's: the root, open; nil until its first look
	// protectedUnder: the indices in Spec.Protected of the paths under each
	// entry of the root, by the entry's name, and protectedElsewhere those
	// of the paths outside the root (mayExistProtected); made at its first
	// call.
	protectedUnder     map[string][]int
	protectedElsewhere []int
	patterns           []string    // rootMatches': Spec.Patterns, folded
	patternEnds        [][2]string // rootMatches': literalEnds of each of patterns
	// gitSweep sweeps .git (beneath.SweepGit), and skips the sweep when
	// nothing there changed since the last (in a git root, the two sweeps
	// of a call were ~170 syscalls of it); in a one-shot session, the
	// first three are whole and watch nothing
	// (beneath.NewGitSweeperWatchingAfter).
	gitSweep *beneath.GitSweeper
	// staged: the protected entries commands made, shown at their paths
	// in the session alone (stage_linux.go); judge: what Judge looks for.
	staged map[string]*stagedEntry
	judge  judgeSets
	hidden hiddenSet
	// repos: the paths git status in the root enters as submodules
	// (repos_linux.go); approved says an approved command runs, and no
	// job has run since the last command began.
	repos    repoSets
	approved func() bool
	repoPins []string // pinPending's
}

func newMounter(spec *Spec) *mounter {
	m := &mounter{spec: spec, protected: map[string]bool{}, pinned: map[string]bool{}, kept: map[string]bool{}, keptAbsent: map[string]bool{}, forced: map[string]bool{}, moves: map[string][2]time.Time{}, redirects: map[string]bool{}, staged: map[string]*stagedEntry{}, gitSent: -1, gitSweep: beneath.NewGitSweeper()}
	if spec.OneShot {
		// Three sweeps in all for a short command: the watches would not
		// pay for the wait their inotify instance's close puts on the
		// run's path.
		m.gitSweep = beneath.NewGitSweeperWatchingAfter(3)
	}
	if len(spec.Writable) > 0 {
		fi, err := os.Lstat(filepath.Join(spec.Writable[0], ".git"))
		m.gitAtStart, m.git = err == nil, gitstate.New(spec.Writable[0], spec.GitDirs[:min(len(spec.GitDirs), 1)]...)
		m.gitDirAtStart = err == nil && fi.IsDir()
		if m.gitDirAtStart {
			_, err := os.Lstat(filepath.Join(spec.Writable[0], ".git", "config"))
			m.configAtStart = err == nil
		}
		if m.gitDirAtStart {
			m.subs = gitstate.NewSubmodules(spec.Writable[0])
		}
		m.noteNestedGit(filepath.Join(spec.Writable[0], ".git")) // a .git file naming a directory in the root
	}
	return m
}

// private stops mount events from travelling between the session and the host.
func (m *mounter) private() error {
	err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, "")
	m.ready = err == nil
	return err
}

// protect makes the protected paths that exist read-only, however they are
// reached: a bind mount covers the file itself, not one name of it. The
// directories between a writable path and a protected one (.git for
// .git/hooks) become mount points too, still writable: a mount point cannot be
// renamed or removed, so `mv .git g && mkdir -p .git/hooks` cannot put a
// fresh, writable hooks directory where git will look.
//
// It runs when the session starts and again around every command, so that a
// protected path that appears later is dealt with before anything on the
// host reads it; it returns the paths it protected this time. If moveAside
// says so, those that appeared (all but the user's own, on the host between
// commands, or those an approved command made) are moved to Spec.Quarantine
// instead, each into a read-only directory of its own — and so are those that
// kept, if not nil, does not keep (an approval did not name them) — and returned as moved
// ("path → where"): what a command wrote there never reaches the host's
// tools. git works without a config, hooks or info of its own, so `git init`
// in a project without one still works.
func (m *mounter) protect(moveAside func() bool, kept func(path string) bool) (now, moved []string, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.ready {
		return nil, nil, nil
	}
	// Asked only when something new is there: most calls find nothing.
	aside := func() bool { return false }
	if moveAside != nil && m.spec.Quarantine != "" {
		aside = sync.OnceValue(moveAside)
	}
	// A protected path goes as aside says, and one not kept (not named by
	// the approval that kept the rest) goes anyway.
	asidePath := func(p string) bool {
		return aside() || kept != nil && m.spec.Quarantine != "" && !kept(p)
	}
	// What commands made where only the session sees it: to the
	// quarantine or in place, as the rest.
	repoAside := func(dir string) (bool, string) {
		if !aside() {
			return false, ""
		}
		why := gitstate.Hostile(m.spec.Writable[0], dir)
		return why != "", why
	}
	staged, serrs := m.unstage(asidePath, repoAside, aside)
	// What is not in the root is not looked at again (a root of a few
	// entries spares ~200 lstats a command).
	listing := m.listRoot()
	protected := append(m.mayExistProtected(listing), m.rootMatches(listing)...)
	// One in the root that holds what its entry judges harmless stays,
	// read-only where it is: one a command made unstaged, and one
	// stagedHarmless put back (a copy no command writes).
	asideNow := func(p string) bool { return asidePath(p) && !m.harmlessNow(p) }
	moved, unmoved, errs := m.moveNew(protected, listing, asideNow)
	moved, errs = append(staged, moved...), append(serrs, errs...)
	pin := func(path string, resolve bool) bool {
		if m.pinned[path] {
			return true
		}
		err := m.bind(path, resolve, false)
		if err != nil && !errors.Is(err, errOutside) {
			errs = append(errs, fmt.Errorf("pin %w", err))
		}
		m.pinned[path] = err == nil
		return err == nil
	}
	if m.git != nil { // what the session did not start with, as aside decides
		check := m.git.Check
		if m.rootDir != nil { // the root listRoot keeps open
			check = func(aside func() bool, quarantine func(string) (string, error)) ([]string, []string, error) {
				return m.git.CheckIn(*m.rootDir, aside, quarantine)
			}
		}
		gm, notes, err := check(aside, m.quarantine)
		moved, m.removed, errs = append(moved, gm...), append(m.removed, notes...), append(errs, err)
	}
	m.unpinPending() // the index judged: its gitlinks are known or gone
	if len(m.keptAbsent) > 0 && m.spec.Quarantine != "" {
		km, kerrs := m.moveKeptNew(aside)
		moved, errs = append(moved, km...), append(errs, kerrs...)
	}
	if m.subs.Any() && m.spec.Quarantine != "" {
		sm, notes, serrs := m.subs.Check(aside, m.quarantine)
		moved, m.removed, errs = append(moved, sm...), append(m.removed, notes...), append(errs, serrs...)
	}
	if m.spec.Quarantine != "" && len(m.spec.Writable) > 0 {
		mm, notes, merrs := m.madeRepos(aside)
		moved, m.removed, errs = append(moved, mm...), append(m.removed, notes...), append(errs, merrs...)
	}
	for _, p := range protected {
		// Replaced on the host since it was bound (no command can rename
		// over a mount point in the session): the user's, bound again where
		// it is.
		rebind := m.protected[p]
		if rebind && !m.unbound(p) {
			continue
		}
		delete(m.protected, p)
		fi, err := os.Lstat(p)
		if err != nil {
			continue
		}
		// Made since the moves looked, or again after its move (a command
		// or a job runs on): moved as those were, not pinned in place for
		// good, as the user's own would be.
		if !rebind && !unmoved[p] && asideNow(p) {
			to, err := m.quarantine(p)
			if err == nil {
				moved = append(moved, p+" → "+to)
				continue
			}
			errs = append(errs, err) // protected where it is, then
			m.forced[p] = true
			if fi, err = os.Lstat(p); err != nil {
				continue
			}
		}
		if m.bindInPlace(p, fi, pin, &errs) {
			m.protected[p] = true
			now = append(now, p)
		}
	}
	// keep's paths (a nested repository's config) the host replaced since:
	// bound again, as keep bound them.
	for p := range m.kept {
		if m.protected[p] && m.unbound(p) {
			if err := m.bind(p, false, true); err != nil && !errors.Is(err, errOutside) && !os.IsNotExist(err) {
				errs = append(errs, err)
			}
		}
	}
	if len(m.spec.Writable) > 0 {
		m.removed = append(m.removed, m.gitSweep.Sweep(m.spec.Writable[0], m.nestedGit, m.spec.GitDirs...)...)
		m.refreshRepos(false) // the gitlinks' paths, for Watched
	}
	return now, moved, errors.Join(errs...)
}

// moveNew moves to the quarantine the protected paths that appeared, as
// asidePath says of each: the root's .git when it is not a directory and
// was not there at the start (it points git elsewhere, "gitdir: …", where a
// command can write the config git will run), then the rest. Moves come
// before any pinning: a directory pinned for one path (.git) would keep
// another (.git/config) from being renamed out of it. It returns what it
// moved ("path → where") and what it could not move (left to be pinned).
func (m *mounter) moveNew(protected []string, listing rootListing, asidePath func(string) bool) (moved []string, unmoved map[string]bool, errs []error) {
	unmoved = map[string]bool{}
	move := func(p string) {
		if to, err := m.quarantine(p); err == nil {
			moved = append(moved, p+" → "+to)
		} else {
			errs = append(errs, err) // protected where it is, then
			m.forced[p] = true
			unmoved[p] = true
		}
	}
	if len(m.spec.Writable) > 0 {
		g := filepath.Join(m.spec.Writable[0], ".git")
		if !m.mayExist(listing, g) {
			// not there
		} else if fi, err := os.Lstat(g); err == nil && !fi.IsDir() && !m.gitAtStart && asidePath(g) {
			move(g)
		}
	}
	for _, p := range protected {
		if m.protected[p] {
			continue
		}
		if _, err := os.Lstat(p); err != nil || !asidePath(p) {
			continue
		}
		move(p)
	}
	return moved, unmoved, errs
}

// gitKnown is what the git tracker knows (gitstate.Tracker.Known), then
// "", when it learned something since the last call; nil otherwise.
func (m *mounter) gitKnown() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.git == nil || m.gitSent == m.git.KnownCount() {
		return nil
	}
	known, n := m.git.Known()
	m.gitSent = n
	return append(known, "") // never empty, so that it is sent
}

// chosen is now, what protect made read-only where it is, without the paths
// it pinned only because moving them aside failed: the rest stay by choice
// (the user's own, or kept by an approval), and checkpoints may keep them.
func (m *mounter) chosen(now []string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.DeleteFunc(slices.Clone(now), func(p string) bool { return m.forced[p] })
}

// bindInPlace makes p (fi) read-only where it is, pinning the directories
// leading to it, and says whether it is protected now.
func (m *mounter) bindInPlace(p string, fi os.FileInfo, pin func(string, bool) bool, errs *[]error) bool {
	for _, dir := range m.between(p) {
		pin(dir, true)
	}
	if fi.Mode()&os.ModeSymlink != 0 && !pin(p, false) {
		return false // a symlink that could be replaced by a file of the command's
	}
	// The file or directory it is, or a symlink leads to.
	if err := m.bind(p, true, true); err != nil && !errors.Is(err, errOutside) {
		if !os.IsNotExist(err) { // a dangling symlink: its target is bound once it exists
			*errs = append(*errs, err)
		}
		return false
	}
	return true
}

// unbound reports whether p, made read-only by a bind mount of its own,
// lost that mount: the host replaced the file (`git config` on the host
// renames config.lock over .git/config; so do `git remote add`, `git branch
// -u`, and an undo putting back an older config), and the kernel detaches
// the mounts of a name renamed over or removed in another namespace. The new
// file would be writable to the next command, and bound again only by the
// next look. A kernel that does not say (before Linux 5.8) is taken at its
// mount as before.
func (m *mounter) unbound(p string) bool {
	var st unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, p, unix.AT_SYMLINK_NOFOLLOW, 0, &st); err != nil {
		return !os.IsNotExist(err) // gone: nothing to bind until it is back
	}
	return st.Attributes_mask&unix.STATX_ATTR_MOUNT_ROOT != 0 && st.Attributes&unix.STATX_ATTR_MOUNT_ROOT == 0
}

// keep makes paths read-only where they are, from now on: a nested
// repository's git files, a subproject's protected entries, found when the
// session started (see Session.KeepReadOnly). Unlike Spec.Protected, nothing
// is pinned on the way to them, and what is not there is not waited for. It
// returns what it could not make read-only, each with why.
func (m *mounter) keep(paths []string) (failed []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.ready {
		return nil
	}
	// Each bind costs more the more a namespace holds: a project a command
	// filled with nested repositories or protected entries (20000 of them)
	// would hold every later session's first command past its start limit.
	// The shallowest are kept; the rest are told.
	if len(paths)+len(m.kept) > maxKept {
		paths = slices.Clone(paths)
		slices.SortStableFunc(paths, func(a, b string) int {
			return cmp.Or(cmp.Compare(strings.Count(a, "/"), strings.Count(b, "/")), strings.Compare(a, b))
		})
		n := max(maxKept-len(m.kept), 0)
		failed = append(failed, fmt.Sprintf("%d nested repositories' git files and subprojects' protected entries, the deepest (%s …): past the %d a session keeps read-only", len(paths)-n, paths[n], maxKept))
		paths = paths[:n]
	}
	for _, p := range paths {
		m.noteNestedGit(p)
		m.kept[p] = true
		if m.protected[p] && !m.unbound(p) {
			continue
		}
		if err := m.bind(p, false, true); errors.Is(err, os.ErrNotExist) && redirect(p) {
			m.keptAbsent[p] = true // moved aside if it appears (moveKeptNew)
			continue
		} else if err != nil && !errors.Is(err, errOutside) && !errors.Is(err, os.ErrNotExist) {
			failed = append(failed, err.Error())
			continue
		}
		m.protected[p] = true
	}
	return failed
}

// redirect reports whether p names a file of a git directory that makes
// git read its config elsewhere.
func redirect(p string) bool {
	b := filepath.Base(p)
	return b == "commondir" || b == "config.worktree"
}

// moveKeptNew moves aside, with m.mu held, those of keep's paths that were
// absent (a nested repository's or a submodule's commondir or
// config.worktree) and exist now, if aside says so; else (the user's, made
// on the host between commands) it keeps them read-only as keep does. It
// returns what it moved ("path → where").
func (m *mounter) moveKeptNew(aside func() bool) (moved []string, errs []error) {
	for p := range m.keptAbsent {
		if _, err := os.Lstat(p); err != nil {
			continue
		}
		if !aside() {
			delete(m.keptAbsent, p)
			if err := m.bind(p, false, true); err == nil {
				m.protected[p] = true
			}
			continue
		}
		to, err := m.quarantine(p)
		if to != "" {
			moved = append(moved, p+" → "+to)
			m.redirects[p] = true
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return moved, errs
}

// maxKept is the most paths keep makes read-only in a session.
const maxKept = 2000

// noteNestedGit records the git directory of the nested repository p is a
// git file of, kept read-only: its .git/config, hooks or info, or its .git
// file naming a git directory elsewhere in the root (git init
// --separate-git-dir). Git on the host writes the rest of that directory
// (logs/HEAD, COMMIT_EDITMSG) when the user commits there, through a symlink
// or a hard link a command left, as at the root.
func (m *mounter) noteNestedGit(p string) {
	if len(m.spec.Writable) == 0 {
		return
	}
	root, dir := m.spec.Writable[0], filepath.Dir(p)
	if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() && filepath.Base(p) == ".git" {
		b, err := os.ReadFile(p) // read-only from now on: what it names stays
		rest, found := strings.CutPrefix(string(b), "gitdir:")
		if err != nil || !found || len(b) > 4096 {
			return
		}
		if dir = strings.TrimSpace(rest); !filepath.IsAbs(dir) {
			dir = filepath.Join(filepath.Dir(p), dir)
		}
	} else if filepath.Base(dir) != ".git" {
		return
	}
	rel, err := filepath.Rel(root, filepath.Clean(dir))
	if err != nil || rel == ".git" || strings.HasPrefix(rel, ".git/") || !filepath.IsLocal(rel) || slices.Contains(m.nestedGit, rel) {
		return
	}
	m.nestedGit = append(m.nestedGit, rel)
}

// rootListing is what the root held when protect last listed it.
type rootListing struct {
	names   []string        // every entry, for Spec.Patterns
	present map[string]bool // the same, folded (protect.Fold); nil when the listing is no snapshot
}

// rootListBuf is the buffer of one getdents: a root whose entries fit in it
// (some 1 000 short names) is listed by one call.
const rootListBuf = 32 << 10

// listRoot lists the root. The kernel lists a directory in one getdents
// call under the directory's lock, which creating, removing and renaming
// entries there take too: when the root fits in one call, the listing is
// the root as it was at one moment, and a protected path whose entry in
// the root was not there then did not exist then either (present says so).
// A larger root is listed whole (its names) but is no such snapshot: a
// command renaming entries meanwhile could keep one out of it.
func (m *mounter) listRoot() rootListing {
	var l rootListing
	if len(m.spec.Writable) == 0 {
		return l
	}
	// The root is opened once and read again from its start at each look:
	// in the session's mount namespace its path leads to the same directory
	// for the whole session (a mount of it that no command can move or
	// cover), and an open and a close of it were two of each look's calls.
	if m.rootDir == nil {
		fd, err := unix.Open(m.spec.Writable[0], unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return l
		}
		m.rootDir = &fd
	}
	fd := *m.rootDir
	if _, err := unix.Seek(fd, 0, io.SeekStart); err != nil {
		return l
	}
	if m.listBuf == nil {
		m.listBuf = make([]byte, rootListBuf)
	}
	// Every entry, however many: a bound would let a command hide a
	// workspace file behind entries of its own (40 000 files, which the
	// directory lists before it).
	calls := 0
	for {
		n, err := unix.Getdents(fd, m.listBuf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return rootListing{names: l.names} // the names so far; no snapshot
		}
		if n <= 0 {
			break
		}
		calls++
		_, _, l.names = unix.ParseDirent(m.listBuf[:n], -1, l.names)
	}
	if calls <= 1 {
		l.present = make(map[string]bool, len(l.names))
		for _, n := range l.names {
			// Folded: in a root that folds case, .VSCODE listed is the
			// .vscode a protected path names.
			l.present[protect.Fold(n)] = true
		}
	}
	return l
}

// mayExist reports whether protected path p may exist, by the listing: false
// only for a path in the root whose entry there was not listed.
func (m *mounter) mayExist(l rootListing, p string) bool {
	if l.present == nil || len(m.spec.Writable) == 0 {
		return true
	}
	rel, ok := strings.CutPrefix(p, m.spec.Writable[0]+string(filepath.Separator))
	if !ok {
		return true
	}
	first, _, _ := strings.Cut(rel, string(filepath.Separator))
	return l.present[protect.Fold(first)]
}

// mayExistProtected is Spec.Protected without the paths mayExist rules out,
// in Spec.Protected's order, found through the entries listed rather than
// by looking at each of the ~100 paths: a root lists a few dozen entries,
// nearly none of them a protected path's, and each look (two a command)
// went through every path, most of its time after an idle gap.
func (m *mounter) mayExistProtected(l rootListing) []string {
	if l.present == nil || len(m.spec.Writable) == 0 {
		return slices.Clone(m.spec.Protected)
	}
	if m.protectedUnder == nil {
		m.protectedUnder = map[string][]int{}
		for i, p := range m.spec.Protected {
			rel, ok := strings.CutPrefix(p, m.spec.Writable[0]+string(filepath.Separator))
			if !ok {
				m.protectedElsewhere = append(m.protectedElsewhere, i)
				continue
			}
			first, _, _ := strings.Cut(rel, string(filepath.Separator))
			first = protect.Fold(first)
			m.protectedUnder[first] = append(m.protectedUnder[first], i)
		}
	}
	is := slices.Clone(m.protectedElsewhere)
	for _, n := range l.names {
		is = append(is, m.protectedUnder[protect.Fold(n)]...)
	}
	slices.Sort(is)
	is = slices.Compact(is)
	ps := make([]string, len(is))
	for j, i := range is {
		ps[j] = m.spec.Protected[i]
	}
	return ps
}

// rootMatches are the entries of the root (listed in l) whose names match
// Spec.Patterns (a *.code-workspace): protected like the paths
// Spec.Protected names.
func (m *mounter) rootMatches(l rootListing) []string {
	if len(m.spec.Patterns) == 0 || len(m.spec.Writable) == 0 {
		return nil
	}
	if m.patternEnds == nil {
		for _, pat := range m.spec.Patterns {
			pat = protect.Fold(pat)
			m.patterns = append(m.patterns, pat)
			m.patternEnds = append(m.patternEnds, literalEnds(pat))
		}
	}
	var ps []string
	for _, name := range l.names {
		n := protect.Fold(name) // PROJ.CODE-WORKSPACE where the root folds case
		for i, pat := range m.patterns {
			// A name that lacks the pattern's literal start or end cannot
			// match: most names of a root are told so without a Match.
			if e := m.patternEnds[i]; !strings.HasPrefix(n, e[0]) || !strings.HasSuffix(n, e[1]) || len(n) < len(e[0])+len(e[1]) {
				continue
			}
			if ok, _ := filepath.Match(pat, n); ok {
				ps = append(ps, filepath.Join(m.spec.Writable[0], name))
				break
			}
		}
	}
	return ps
}

// literalEnds are the literal text a name matching pattern (filepath.Match)
// starts with, before its first special character, and ends with, after its
// last (none when it has none: the start is all of it).
func literalEnds(pattern string) [2]string {
	i := strings.IndexAny(pattern, `*?[\`)
	if i < 0 {
		return [2]string{pattern, ""}
	}
	return [2]string{pattern[:i], pattern[strings.LastIndexAny(pattern, `*?[]\`)+1:]}
}

// quarantine moves p, which appeared in the root, into Spec.Quarantine
// (see beneath.Quarantine).
func (m *mounter) quarantine(p string) (to string, err error) {
	defer func() {
		if to != "" {
			m.moves[p] = [2]time.Time{time.Now(), m.moves[p][0]}
		}
	}()
	for _, d := range m.spec.GitDirs { // a linked worktree's: beside itself
		if under(p, d) {
			return beneath.Quarantine(d, "", p)
		}
	}
	if len(m.spec.Writable) == 0 {
		return "", fmt.Errorf("quarantine %s: no project root", p)
	}
	return beneath.Quarantine(m.spec.Writable[0], m.spec.Quarantine, p)
}

// againWithin is how soon after its move a protected path made again is a
// process making it as it goes: a loop makes it again within a
// millisecond; an agent typing `git init`, then `git config …`, into a
// terminal job takes a model's turn between them.
const againWithin = 2 * time.Second

// again returns the paths of moved ("path → where") made again after their
// move: within againWithin of the move before, or, for what git obeys that
// no ordinary command makes (redirects), at any time.
func (m *mounter) again(moved []string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var again []string
	for _, mv := range moved {
		p, _, _ := strings.Cut(mv, " → ")
		t := m.moves[p]
		if !t[1].IsZero() && (m.redirects[p] || t[0].Sub(t[1]) < againWithin) && !slices.Contains(again, p) {
			again = append(again, p)
		}
	}
	return again
}

// moveGitNew moves aside, while a command runs, the protected entries of
// the root's .git that were not there when the session started, when .git
// was a directory then (.git/commondir, .git/config.worktree; a hooks, info
// or config it lacked): git on the host obeys them at once, and no ordinary
// command makes them in a repository that has its config (git init in a
// root without .git makes its config and hooks: those wait for the
// command's end, as the rest of the root's protected paths do, so that
// `git init && git config … && git commit` works). It returns what it moved
// ("path → where").
func (m *mounter) moveGitNew() (moved []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.ready || !m.gitDirAtStart || m.spec.Quarantine == "" || len(m.spec.Writable) == 0 {
		return nil
	}
	git := filepath.Join(m.spec.Writable[0], ".git")
	for _, p := range m.spec.Protected {
		if m.protected[p] || !under(p, git) || p == git {
			continue
		}
		if _, err := os.Lstat(p); err != nil {
			continue
		}
		if to, _ := m.quarantine(p); to != "" { // else the command's end moves it
			moved = append(moved, p+" → "+to)
			m.redirects[p] = true
		}
	}
	km, _ := m.moveKeptNew(func() bool { return true }) // a nested repository's, as well
	return append(moved, km...)
}

// sweepGit removes the symlinks in the root's .git and the nested ones, and
// copies their hard links, as protect does, and nothing else: safe while a
// command runs (git never makes either there).
func (m *mounter) sweepGit() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ready && len(m.spec.Writable) > 0 {
		m.removed = append(m.removed, m.gitSweep.Sweep(m.spec.Writable[0], m.nestedGit, m.spec.GitDirs...)...)
	}
}

// takeRemoved returns the symlinks protect removed from .git since the last
// call.
func (m *mounter) takeRemoved() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.removed
	m.removed = nil
	return r
}

// errOutside: the path leads out of the writable paths.
var errOutside = errors.New("outside the writable paths")

// bind binds path onto itself, read-only if readOnly: with resolve, the file or
// directory it names once symlinks are resolved; without, a symlink itself,
// which then cannot be removed or replaced. It works on one open file
// throughout, so that a command renaming things meanwhile cannot make it bind
// one place onto another or make another mount read-only. A path that leads
// out of the writable paths, or to one of them, is left alone: nothing writes
// outside them anyway, and a command's symlink must not make the helper bind
// the whole project read-only.
func (m *mounter) bind(path string, resolve, readOnly bool) error {
	m.gitSweep.Forget() // what a sweep saw may be under a mount now
	real := path
	if resolve {
		var err error
		if real, err = filepath.EvalSymlinks(path); err != nil {
			return err
		}
	}
	if !slices.ContainsFunc(m.spec.Writable, func(w string) bool { return real != w && under(real, w) }) {
		return errOutside
	}
	fd, err := unix.Open(real, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer unix.Close(fd)
	err = beneath.Bind(fd, "", readOnly)
	if err == unix.ENOSYS && resolve { // before Linux 5.2; no mounts on symlinks
		if readOnly {
			return bindReadOnly(real, real)
		}
		return unix.Mount(real, real, "", unix.MS_BIND|unix.MS_REC, "")
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// between lists the directories strictly between the writable path holding p
// and p, outermost first: [root/.git] for root/.git/hooks.
func (m *mounter) between(p string) []string {
	for _, w := range m.spec.Writable {
		if w == p || !under(p, w) {
			continue
		}
		var dirs []string
		for d := filepath.Dir(p); d != w && under(d, w); d = filepath.Dir(d) {
			dirs = append([]string{d}, dirs...)
		}
		return dirs
	}
	return nil
}

// bindReadOnly binds src onto dst and makes that mount read-only.
func bindReadOnly(src, dst string) error {
	if err := unix.Mount(src, dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind %s: %w", dst, err)
	}
	return remountReadOnly(dst)
}

// remountReadOnly makes the bind mount at dst read-only, keeping the flags the
// kernel locks in a user namespace (nosuid, nodev, noexec, atime).
func remountReadOnly(dst string) error {
	var st unix.Statfs_t
	if err := unix.Statfs(dst, &st); err != nil {
		return err
	}
	keep := uintptr(st.Flags) & (unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC | unix.MS_NOATIME | unix.MS_NODIRATIME | unix.MS_RELATIME)
	if err := unix.Mount("", dst, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY|keep, ""); err != nil {
		return fmt.Errorf("read-only %s: %w", dst, err)
	}
	return nil
}

// under reports whether path is dir or inside it.
func under(path, dir string) bool {
	if dir == "/" {
		return true
	}
	return path == dir || strings.HasPrefix(path, dir+string(filepath.Separator))
}
