package protect

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
)

// Linked is what a sandbox must show of a repository whose git directory lies
// outside the root: the root's .git is then a file ("gitdir: …"), as git
// leaves it in a linked worktree (`git worktree add`, how agents often work)
// or in a submodule opened as a project of its own.
type Linked struct {
	// GitDir is the root's own git directory (HEAD, index, logs), written by
	// every commit: writable.
	GitDir string
	// Common is the directory it shares with the main worktree (its
	// commondir); GitDir itself for a submodule. Shown read-only but for
	// Writable.
	Common string
	// Writable are what commits write: GitDir, and the common objects, refs
	// and reflogs.
	Writable []string
	// Protected are the root's .git file and the files in GitDir that make
	// git run code or look elsewhere (config, hooks, commondir …): read-only
	// like the root's.
	Protected []string
}

// Swept are the directories a session writes where git on the host follows
// symlinks (reflogs, refs, HEAD): swept of symlinks as the root's .git is.
func (l Linked) Swept() []string {
	var dirs []string
	for _, d := range l.Writable {
		if filepath.Base(d) != "objects" {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// LinkedGitDir reads the root's .git when it is a file naming a git
// directory outside the root; ok is false otherwise (a .git directory, none,
// or one inside the root, which the root's rules cover).
func LinkedGitDir(root string) (l Linked, ok bool) {
	b, err := readGitFile(filepath.Join(root, ".git"))
	if err != nil {
		return Linked{}, false
	}
	gitDir, found := gitFileDir(root, b)
	if !found || within(gitDir, root) {
		return Linked{}, false
	}
	if fi, err := os.Stat(gitDir); err != nil || !fi.IsDir() {
		return Linked{}, false
	}
	l = Linked{GitDir: gitDir, Common: gitDir, Writable: []string{gitDir}}
	if c, err := readGitFile(filepath.Join(gitDir, "commondir")); err == nil {
		common := strings.TrimSpace(string(c))
		if !filepath.IsAbs(common) {
			common = filepath.Join(gitDir, common)
		}
		if fi, err := os.Stat(common); err == nil && fi.IsDir() {
			l.Common = filepath.Clean(common)
		}
	}
	if l.Common != gitDir {
		for _, d := range []string{"objects", "refs", "logs"} {
			if fi, err := os.Stat(filepath.Join(l.Common, d)); err == nil && fi.IsDir() {
				l.Writable = append(l.Writable, filepath.Join(l.Common, d))
			}
		}
	}
	// The root's .git file too: rewritten, it points the user's git at a
	// git directory a command made.
	l.Protected = append(l.Protected, filepath.Join(root, ".git"))
	for _, name := range []string{"config", "config.worktree", "commondir", "gitdir", "hooks", "info"} {
		l.Protected = append(l.Protected, filepath.Join(gitDir, name))
	}
	return l, true
}

// gitFileDir is the git directory a .git file's content b names, made
// absolute from root.
func gitFileDir(root string, b []byte) (string, bool) {
	rest, found := bytes.CutPrefix(b, []byte("gitdir:"))
	if !found {
		return "", false
	}
	gitDir := strings.TrimSpace(string(rest))
	if !filepath.IsAbs(gitDir) {
		gitDir = filepath.Join(root, gitDir)
	}
	return filepath.Clean(gitDir), true
}

// Prepare makes GitDir's config.worktree, empty, where there is none, so that
// it is protected from the start: git reads it (once extensions.worktreeConfig
// is on, today or later), and one a command made would stay outside the root,
// where no quarantine reaches. An empty file sets nothing.
func (l Linked) Prepare() error {
	f, err := os.OpenFile(filepath.Join(l.GitDir, "config.worktree"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644) // O_EXCL: never through a symlink
	if err != nil {
		if os.IsExist(err) {
			return nil
		}
		return err
	}
	return f.Close()
}

// maxWorktrees bounds the linked worktrees OtherWorktrees protects.
const maxWorktrees = 256

// OtherWorktrees are, when root is a main worktree (its .git a directory),
// the files of each linked worktree it has elsewhere (.git/worktrees/NAME)
// that make git look elsewhere for its config: commondir and
// config.worktree. The user's git in that worktree, outside the root,
// obeys them: a commondir a command rewrote to a git directory of its own
// runs that directory's core.fsmonitor there.
func OtherWorktrees(root string) []string {
	dir := filepath.Join(root, ".git", "worktrees")
	if fi, err := os.Lstat(filepath.Join(root, ".git")); err != nil || !fi.IsDir() {
		return nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var paths []string
	for _, e := range entries {
		if !e.IsDir() || len(paths) >= 2*maxWorktrees {
			continue
		}
		paths = append(paths, filepath.Join(dir, e.Name(), "commondir"), filepath.Join(dir, e.Name(), "config.worktree"))
	}
	return paths
}

// BareRoot lists what git obeys in root when root is itself a git directory
// (a bare repository opened as the project: a HEAD, objects/ and refs/ at its
// top, and no .git): its config, config.worktree, commondir, hooks and info,
// to be protected as a .git directory's are. Git on the host runs what they
// say in that repository (a hook at a push into it, core.fsmonitor where a
// core.worktree gives it one); nil for any other root.
func BareRoot(root string) []string {
	if _, err := os.Lstat(filepath.Join(root, ".git")); err == nil {
		return nil
	}
	if fi, err := os.Lstat(filepath.Join(root, "HEAD")); err != nil || fi.IsDir() {
		return nil
	}
	for _, d := range []string{"objects", "refs"} {
		if fi, err := os.Stat(filepath.Join(root, d)); err != nil || !fi.IsDir() {
			return nil
		}
	}
	var ps []string
	for _, name := range []string{"config", "config.worktree", "commondir", "hooks", "info"} {
		ps = append(ps, filepath.Join(root, name))
	}
	return ps
}
