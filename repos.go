package shellgate

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/shellgate/shellgate/envelope"
	"github.com/shellgate/shellgate/internal/audit"
	"github.com/shellgate/shellgate/internal/hint"
	"github.com/shellgate/shellgate/internal/protect"
	"github.com/shellgate/shellgate/internal/repowatch"
	"github.com/shellgate/shellgate/internal/sandbox"
)

// repos watches the root for what runs code later below its top level (see
// package repowatch): what is there when the Gate starts is kept read-only
// in the sandbox like the root's own; what appears is told in the envelope
// of the command after which it was seen, and in the audit log.
type repos struct {
	start sync.Once
	ready chan struct{} // closed once the first walk is done
	tree  *repowatch.Tree
}

// newRepos is the watch of a Gate whose commands may write the root: it
// starts with the first sandbox session.
func (g *Gate) newRepos() *repos {
	if !g.sandboxed() || g.cfg.Sandbox.Profile == sandbox.ReadOnly {
		return nil
	}
	return &repos{ready: make(chan struct{})}
}

// watching starts the first walk of the root, if it has not started, to run
// beside the sandbox's start.
func (g *Gate) watching() {
	if g.repos == nil {
		return
	}
	g.repos.start.Do(func() {
		go func() {
			defer close(g.repos.ready)
			g.repos.tree = repowatch.Watch(g.root, sandbox.QuarantineDir)
		}()
	})
}

// walked waits for the first walk, and reports whether there was one: a
// Gate whose sandbox never started has none.
func (g *Gate) walked() bool {
	if g.repos == nil {
		return false
	}
	g.repos.start.Do(func() { close(g.repos.ready) })
	<-g.repos.ready
	return g.repos.tree != nil
}

// nestedProtected are the paths in the root the walk found that the sandbox
// keeps read-only where they are: the git files of nested repositories that
// run code (config, hooks, info, a .git file pointing elsewhere) and the
// protected entries of subdirectories.
func (g *Gate) nestedProtected() []string {
	if !g.walked() {
		return nil
	}
	start := g.repos.tree.AtStart()
	var ps []string
	for _, r := range start.Repos {
		if r.Dir == "." {
			continue // the root's own: DefaultProtected
		}
		git := filepath.Join(g.root, r.Git)
		// What its config makes git run from its work tree (a hooks
		// directory, a filter's script), as the root's.
		ps = append(ps, protect.NestedRunsFrom(filepath.Join(g.root, r.Dir), g.home)...)
		fi, err := os.Lstat(git)
		switch {
		case err != nil:
		case !fi.IsDir():
			ps = append(ps, git) // "gitdir: …": where git looks
		default:
			for _, p := range protect.RootPaths() {
				if rest, ok := strings.CutPrefix(p, ".git/"); ok {
					ps = append(ps, filepath.Join(git, rest))
				}
			}
		}
	}
	for _, p := range start.Protected {
		ps = append(ps, filepath.Join(g.root, p))
	}
	return existing(ps)
}

// redirects are the files of a git directory that make git read its config
// elsewhere; absent, a nested repository's are watched for (keptAbsent).
var redirects = []string{"commondir", "config.worktree"}

// existing are those of ps that exist, and the git directories' redirects
// that do not: made later, the helper moves them aside (a commondir made in
// a submodule's git directory under .git/modules pointed the user's git
// status in the root, which recurses into it, at a config of the command's).
func existing(ps []string) []string {
	var out []string
	for _, p := range ps {
		if _, err := os.Lstat(p); err == nil || slices.Contains(redirects, filepath.Base(p)) {
			out = append(out, p)
		}
	}
	return out
}

// noteAppeared tells, in env, what appeared in the root since the last
// command that was told (and what an earlier session moved aside untold):
// a few system calls when nothing did.
func (g *Gate) noteAppeared(env *envelope.Envelope, session string) {
	g.noteUntold(env)
	if !g.walked() {
		return
	}
	f := withoutRoot(g.repos.tree.Appeared())
	if f.Empty() {
		return
	}
	for _, n := range (hint.Appeared{Repos: repoDirs(f), Protected: f.Protected}).Notes() {
		env.Note(n)
	}
	env.Settle()
	g.auditAppeared(f, session)
}

// closeRepos stops the watch and logs what appeared that no command was told.
func (g *Gate) closeRepos() {
	if !g.walked() {
		return
	}
	if f := withoutRoot(g.repos.tree.Close()); !f.Empty() {
		g.auditAppeared(f, "")
	}
}

// withoutRoot leaves out the root's own repository: what git init makes
// there is the sandbox's to quarantine.
func withoutRoot(f repowatch.Found) repowatch.Found {
	f.Repos = slices.DeleteFunc(f.Repos, func(r repowatch.Repo) bool { return r.Dir == "." })
	return f
}

// repoDirs are the directories of the repositories found.
func repoDirs(f repowatch.Found) []string {
	dirs := make([]string, len(f.Repos))
	for i, r := range f.Repos {
		dirs[i] = r.Dir
	}
	return dirs
}

// auditAppeared writes what appeared to the audit log.
func (g *Gate) auditAppeared(f repowatch.Found, session string) {
	if g.auditLog == nil {
		return
	}
	var ps []string
	for _, r := range f.Repos {
		ps = append(ps, "repository "+r.Dir)
	}
	ps = append(ps, f.Protected...)
	g.auditLog.Write(audit.Entry{Event: audit.EventAppeared, Time: time.Now().UTC(), Session: session, Root: g.root, Appeared: ps})
}
