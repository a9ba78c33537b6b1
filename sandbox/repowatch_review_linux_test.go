package sandbox

// Adversarial review of the repository watch (repowatch_linux.go) and the
// judgement of the repositories it finds (guardNested, beforeStart): ways a
// sandboxed command could leave, anywhere in the root, a repository whose
// config or hooks the host's git runs once the user runs git there. A test
// marked FINDING fails while the hole is open (each was run without its
// t.Skip and failed); one marked "blocked" is a regression test for an
// attack that fails today.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// bareEvil makes dir (relative to the root) a bare repository that git on
// the host gives a work tree (its own directory) and so runs its fsmonitor.
func bareEvil(dir string) string {
	return `git init -q --bare ` + dir + ` && git -C ` + dir + ` config core.bare false && git -C ` + dir + ` config core.worktree . && git -C ` + dir + ` config core.fsmonitor "touch $PWNED; false"`
}

// hostRanIn is hostRan with git run in dir, relative to the root.
func (r *reviewSession) hostRanIn(t *testing.T, dir string, args ...string) bool {
	t.Helper()
	return r.hostRan(t, append([]string{"-C", dir}, args...)...)
}

// again closes the session and starts another on the same root: the next
// agent run, or the next `shellgate run`.
func (r *reviewSession) again(t *testing.T) {
	t.Helper()
	r.s.Close()
	r.s = start(t, quarantineSpec(r.l))
}

// FINDING (fixed: openRepo takes a .git directory only if gitDirShape says
// git would, else the directory itself as a bare repository): a .git directory that is not a repository (no HEAD) hides the
// bare repository beside it. git tries evil/.git, finds no repository there,
// and then takes evil itself as a bare git dir (setup.c: is_git_directory of
// the directory after that of .git); openRepo takes any .git directory as the
// git dir and judges only evil/.git/config (absent). Fix: in openRepo, use
// .git only when it is a repository as git sees it (bareRepo on it, the
// same test as is_git_directory), else fall through to bareRepo(workFD).
func TestRepoWatchReviewEmptyDotGitBesideBare(t *testing.T) {
	r := newReviewSession(t, nil)
	r.sh(t, `mkdir -p evil/.git && `+bareEvil("evil"))
	if r.hostRanIn(t, "evil", "status") {
		t.Error("git status in evil ran the fsmonitor of the bare repository behind an empty evil/.git")
	}
}

// FINDING (fixed: gitDirShape takes any HEAD with objects and refs, or a
// commondir, of any kind): HEAD spellings git takes and bareRepo does not. git reads a
// detached HEAD with get_oid_hex_any (the first 40 or 64 hex digits, either
// case, anything after) and the refs backend accepts whitespace after the
// name; bareRepo wants exactly 40 or 64 lowercase digits. An `objects` (or
// `refs`) that is an executable file passes git's access(X_OK); bareRepo
// wants a directory. Each makes a repository git runs and the guard does not
// see. Fix: mirror git's is_git_directory exactly — HEAD: "ref:" then
// "refs/", or a symlink, or >= 40 hex digits of either case followed by
// anything; objects and refs: anything access(X_OK) accepts — or, simpler
// and safer, judge every candidate directory holding a HEAD file with a
// config beside it whatever the rest looks like.
func TestRepoWatchReviewHeadSpellings(t *testing.T) {
	oid := "0123456789abcdef0123456789abcdef01234567"
	for name, spell := range map[string]string{
		"oid then junk":     `printf '%s x\n' ` + oid + ` > evil/HEAD`,
		"uppercase oid":     `printf '%s\n' ` + strings.ToUpper(oid) + ` > evil/HEAD`,
		"objects a file":    `rm -r evil/objects && touch evil/objects && chmod +x evil/objects`,
		"refs a file":       `rm -r evil/refs && touch evil/refs && chmod +x evil/refs`,
		"oid, 64 then junk": `printf '%s%s\n' ` + oid + oid[:24] + ` zz > evil/HEAD`,
	} {
		t.Run(name, func(t *testing.T) {
			r := newReviewSession(t, nil)
			r.sh(t, bareEvil("evil")+` && `+spell)
			if r.hostRanIn(t, "evil", "status") {
				t.Errorf("git status in evil ran the fsmonitor of a bare repository with %s", name)
			}
		})
	}
}

// FINDING (fixed: a directory whose .git was quarantined is looked at again
// in the same pass): what is judged at the close only is judged with the close's
// aside (a job ran, or runs), not the command's: a repository a command made
// and the guard saw only after its end is taken for the user's own, made on
// the host. Here a .git the guard cannot follow (a FIFO, a gitdir: leading
// nowhere) beside a bare repository: the command's end moves the .git to
// the quarantine and skips the rest (judge returns false); the close finds
// the bare repository, now the one git uses, and keeps it. Fix: after
// quarantining a bad pointer, judge the same directory again in the same
// pass (loop on openRepo until judge keeps it); and remember which
// candidates appeared while a command ran (the watch knows when it saw
// them) so that the close judges those with aside true.
func TestRepoWatchReviewBadDotGitThenBare(t *testing.T) {
	for name, plant := range map[string]string{
		"fifo":           `mkfifo evil/.git`,
		"gitdir nowhere": `echo 'gitdir: ../nowhere' > evil/.git`,
	} {
		t.Run(name, func(t *testing.T) {
			r := newReviewSession(t, nil)
			r.sh(t, bareEvil("evil")+` && `+plant)
			if r.hostRanIn(t, "evil", "status") {
				t.Errorf("git status in evil ran the bare repository's fsmonitor once its .git (%s) was quarantined", name)
			}
			t.Logf("quarantined %q", r.quarantined())
		})
	}
}

// FINDING (fixed: the watch marks a .git or HEAD made or moved in during the
// session as made, judged without the change-time rule; HEAD's change time
// counts): the change-time rule trusts files older than the session, but a
// command can leave such files for the next session: session 1 writes a git
// dir without HEAD (config with an fsmonitor, objects/, refs/) — no .git,
// no HEAD, so no candidate, nothing judged; session 2 renames the whole
// directory to evil/.git and writes HEAD. A rename sets the change time of
// the directory moved, not of the files in it, and saw() counts files only
// (HEAD is not among those looked at): every file looked at is older than
// session 2, so the fsmonitor is taken for the user's own. A writable cache
// outside the root (never watched) serves as well as stash/ here. Fix: a
// repository is the user's own only if it was there, at that path and with
// the same .git/commondir/hooks inodes, when the session's first walk saw
// it (record dev/ino of each candidate's git dir, common dir and hooks dir
// in the first walk, before any command ends); count the ctime of the hooks
// directory and of HEAD too.
func TestRepoWatchReviewOldFilesFromEarlierSession(t *testing.T) {
	r := newReviewSession(t, nil)
	r.sh(t, `mkdir -p stash/g/objects stash/g/refs/heads && git config -f stash/g/config core.repositoryformatversion 0 && git config -f stash/g/config core.fsmonitor "touch $PWNED; false"`)
	r.again(t)
	r.sh(t, `mkdir evil && mv stash/g evil/.git && echo 'ref: refs/heads/main' > evil/.git/HEAD && git -C evil status --short`)
	if r.hostRanIn(t, "evil", "status") {
		t.Error("git status in evil ran an fsmonitor whose config an earlier session wrote")
	}
}

// FINDING (fixed: the hooks directory's change time counts): the same with the user's own repository (made on the host before
// any session): session 1 leaves a hooks directory with a pre-commit in
// stash/; session 2 swaps it in for own/.git/hooks. Its stamp changed, so it
// is judged; every file looked at (config, pre-commit) is older than session
// 2 — the hooks directory's own change time, which the rename set, is not
// counted — so it stays. Fix: as above (the hooks directory's inode is not
// the one the first walk saw; or count its change time: git itself never
// renames or replaces hooks/).
func TestRepoWatchReviewHooksDirFromEarlierSession(t *testing.T) {
	r := newReviewSession(t, func(l *lab, git func(string, ...string)) {
		git(l.root, "init", "-q", "own")
		git(filepath.Join(l.root, "own"), "commit", "-q", "--allow-empty", "-m", "y")
	})
	r.sh(t, `mkdir -p stash/hooks && printf '#!/bin/sh\ntouch "%s"\n' "$PWNED" > stash/hooks/pre-commit && chmod +x stash/hooks/pre-commit`)
	r.again(t)
	r.sh(t, `mv own/.git/hooks stash/old && mv stash/hooks own/.git/hooks`)
	if r.hostRanIn(t, "own", "commit", "-q", "--allow-empty", "-m", "x") {
		t.Error("git commit in the user's own repository ran a pre-commit an earlier session wrote")
	}
}

// FINDING (fixed: what the close's walk finds where nothing watched, made
// since the start, is judged as a command's): past maxWatched directories a repository is found only by the
// walk at the close — and there judged with the close's aside, which is
// false unless a job ran: what the last command made in an unwatched
// directory is taken for the user's own and stays. The README says such a
// repository is found at the close; it is found, and kept. Fix: at the
// close, judge what the final walk found in unwatched directories with
// aside true whenever any command ran since the directory was last walked
// (a command, not only a job, may have made it) — or walk the unwatched
// directories at every command's end as well (they are few: past the bound
// only).
//
// Checked: with a job left running (the close's aside true) the same
// repository is quarantined, so it is found and kept, not missed.
func TestRepoWatchReviewPastWatchLimit(t *testing.T) {
	r := newReviewSession(t, nil)
	r.sh(t, `mkdir many && cd many && seq 33000 | xargs mkdir`)
	r.sh(t, evilRepo("many/33000/evil"))
	if r.hostRanIn(t, "many/33000/evil", "status") {
		t.Error("git status ran the fsmonitor of a repository made in a directory past the watch's bound")
	}
}

// FINDING (fixed: a walk stopped by its bounds leaves the directory to the
// close's walk, which goes on from there) (a documented limit, but cheap to reach): a tree deeper than
// maxWalkDepth, built where the walk never looks (under a directory named
// .git; a writable cache would do) and moved into the root in one rename, is
// read only to depth 256 from where it landed; what lies deeper is neither
// watched nor listed in unwatched, so not even the close's walk finds it.
// git add . in the root makes it a gitlink like any other. Fix: list a
// directory the walk stops at (depth or budget) in unwatched, so that the
// close walks on from it (with its own depth bound), and see the finding
// above for the aside it is then judged with.
//
// Checked: missed even with a job left running (the close's aside true).
func TestRepoWatchReviewDeepTreeMovedIn(t *testing.T) {
	r := newReviewSession(t, nil)
	deep := strings.Repeat("a/", 260) + "evil"
	r.sh(t, `mkdir -p junk/.git/`+deep+` && `+evilRepo("junk/.git/"+deep)+` && mv junk/.git/a top`)
	if r.hostRanIn(t, "top/"+deep[2:], "status") {
		t.Error("git status ran the fsmonitor of a repository moved in 261 directories deep")
	}
}

// blocked: ways to bring a planted repository in that the watch and the
// change-time rule see — moved in whole from a writable cache outside the
// root; planted in directories whose names were swapped back and forth
// (the watch's path map must follow); HEAD a symlink; a config staged by an
// earlier session linked or renamed into a new repository (link and
// rename set the file's change time); made by a job while an approved
// command runs; the user's own nested repository edited by a command;
// 30000 files made beside the planting (the kernel queue holds 16384
// events: an overflow makes the watch walk the whole root again).
func TestRepoWatchReviewBlocked(t *testing.T) {
	for _, c := range []struct {
		name    string
		earlier string // run in a session before, if not ""
		command string
		at      string
	}{
		{"moved in from a writable cache", "", `mkdir -p $CACHE/x && ` + evilRepo("$CACHE/x/evil") + ` && mv $CACHE/x lib`, "lib/evil"},
		{"names swapped, then planted", "", `mkdir -p a/x b/y && mv a c && mv b a && mv c b && sleep 0.2 && ` + evilRepo("b/x/evil") + ` && ` + evilRepo("a/y/evil"), "b/x/evil"},
		{"swapped after planting", "", evilRepo("a/evil") + ` && mkdir b && mv a c && mv b a && mv c b`, "b/evil"},
		{"inotify queue overflowed while planting", "", `mkdir f && (cd f && seq 30000 | xargs touch) & ` + evilRepo("q/evil") + `; wait`, "q/evil"},
		{"HEAD a symlink", "", bareEvil("evil") + ` && ln -sf refs/heads/main evil/HEAD`, "evil"},
		{"old config hard-linked in", `mkdir stash && git config -f stash/config core.fsmonitor "touch $PWNED; false"`, `git init -q evil && ln -f stash/config evil/.git/config`, "evil"},
		{"old config renamed in", `mkdir stash && git config -f stash/config core.fsmonitor "touch $PWNED; false"`, `git init -q evil && mv stash/config evil/.git/config`, "evil"},
		{"old config copied with cp -p", `mkdir stash && git config -f stash/config core.fsmonitor "touch $PWNED; false" && touch -d 2001-01-01 stash/config`, `git init -q evil && cp -p stash/config evil/.git/config`, "evil"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newReviewSession(t, nil)
			cache := filepath.Join(r.l.base, "cache")
			must(t, os.Mkdir(cache, 0o755))
			spec := quarantineSpec(r.l)
			spec.Writable = append(spec.Writable, cache)
			r.s.Close()
			r.s = start(t, spec)
			if c.earlier != "" {
				r.sh(t, c.earlier)
				r.s.Close()
				r.s = start(t, spec)
			}
			r.sh(t, "CACHE="+cache+"; "+c.command)
			if r.hostRanIn(t, c.at, "status") {
				t.Errorf("git status in %s ran the planted fsmonitor", c.at)
			}
		})
	}
}

// blocked: a job plants a repository while an approved command
// (KeepCreated) runs; the approval does not cover what the job made.
func TestRepoWatchReviewJobBesideApproved(t *testing.T) {
	r := newReviewSession(t, nil)
	r.sh(t, `(sleep 0.3; `+evilRepo("later")+`) > /dev/null 2>&1 & disown`)
	if out, code := run(t, r.s, r.l.root, `sleep 1`, append([]string{"PWNED=" + r.pwned, KeepCreated}, reviewEnv...)...); code != 0 {
		t.Fatalf("approved: exit %d\n%s", code, out)
	}
	if r.hostRanIn(t, "later", "status") {
		t.Error("git status ran the fsmonitor a job planted while an approved command ran")
	}
}

// blocked: the user's own nested repository, from before the session and
// named by no index, given an fsmonitor by a command: its config changed
// after the start.
func TestRepoWatchReviewUsersOwnEdited(t *testing.T) {
	r := newReviewSession(t, func(l *lab, git func(string, ...string)) {
		git(l.root, "init", "-q", "tools/own")
	})
	r.sh(t, `git -C tools/own config core.fsmonitor "touch $PWNED; false"`)
	if r.hostRanIn(t, "tools/own", "status") {
		t.Error("git status ran the fsmonitor a command set in the user's own repository")
	}
}

// FINDING (false positive; fixed: plainKey for the keys, templateHooks for
// the hooks): ordinary git commands write config keys that
// plainKey does not list, so the repository they made or changed in the
// session loses its whole config to the quarantine: a partial clone
// (remote.origin.promisor, remote.origin.partialclonefilter — without them
// every later fetch of a missing blob fails), sparse-checkout
// (extensions.worktreeConfig, core.sparseCheckout in config.worktree), a
// mirror clone (remote.origin.mirror), and a new repository made from the
// user's own init.templateDir, whose hooks (git-secrets, a company's
// pre-commit) are copied into every `git init` and `git clone`. Fix: add
// the keys git itself writes — remote.*.promisor, remote.*.partialclonefilter,
// remote.*.mirror, remote.*.pushurl, extensions.partialclone,
// extensions.worktreeconfig, core.sparsecheckout, core.sparsecheckoutcone,
// index.sparse — to plainKey (none names a program), and take hooks that are
// byte-for-byte those of the user's init.templateDir (read on the host side,
// where the command cannot write) as samples.
func TestRepoWatchReviewOrdinaryGitKept(t *testing.T) {
	for _, c := range []struct {
		name, command, file, want string
	}{
		{"partial clone", `git clone -q --filter=blob:none file://$UP part`, "part/.git/config", "promisor"},
		{"sparse checkout", `git clone -q $UP sp && git -C sp sparse-checkout set d`, "sp/.git/config", "worktreeConfig"},
		{"mirror clone", `git clone -q --mirror $UP m.git`, "m.git/config", "mirror"},
		{"the user's init.templateDir", `git init -q fresh`, "fresh/.git/hooks/pre-commit", "secrets"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var up string
			r := newReviewSession(t, func(l *lab, git func(string, ...string)) {
				up = besideRoot(l, git, "up")
				git(up, "config", "uploadpack.allowFilter", "true")
				if !strings.Contains(c.name, "templateDir") {
					return
				}
				tmpl := filepath.Join(l.home, "tmpl", "hooks")
				must(t, os.MkdirAll(tmpl, 0o755))
				must(t, os.WriteFile(filepath.Join(tmpl, "pre-commit"), []byte("#!/bin/sh\n# git secrets --pre_commit_hook\n"), 0o755))
				must(t, os.WriteFile(filepath.Join(l.home, ".gitconfig"), []byte("[init]\n\ttemplateDir = "+filepath.Dir(tmpl)+"\n"), 0o644))
			})
			r.sh(t, "UP="+up+"; "+c.command)
			r.s.Close()
			if b, err := os.ReadFile(filepath.Join(r.l.root, c.file)); err != nil || !strings.Contains(string(b), c.want) {
				t.Errorf("%s lost what git wrote: %v %q; quarantined %q", c.file, err, b, r.quarantined())
			}
		})
	}
}

// FINDING (fixed: leadsInto: a pointer through /proc, /dev or a symlink into
// a writable path is one the guard cannot follow): a .git file whose gitdir is an absolute path outside the
// writable paths is taken for "a repository no command can write" and not
// judged — but /proc/self/cwd/… and /proc/self/root/<root>/… are such paths
// to the guard and lead, for git on the host, back into the root: to a git
// dir the command planted where the watch does not look (under a directory
// named .git). Fix: resolve the pointer before deciding (open it with
// O_PATH and compare the directory's dev/ino with the root's subtree, or
// refuse any gitdir under /proc, /dev/fd and any path with a symlink in
// it), and judge what it leads to whenever it is inside the root.
func TestRepoWatchReviewProcGitdir(t *testing.T) {
	for _, c := range []struct{ name, gitdir string }{
		{"/proc/self/cwd", "/proc/self/cwd/x/.git/g"},
		{"/proc/self/root", "/proc/self/root$PWD/evil/x/.git/g"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newReviewSession(t, nil)
			r.sh(t, `mkdir -p evil/x/.git && git init -q --bare evil/x/.git/g && git config -f evil/x/.git/g/config core.bare false && git config -f evil/x/.git/g/config core.fsmonitor "touch $PWNED; false" && echo "gitdir: `+c.gitdir+`" > evil/.git && git -C evil status --short`)
			if r.hostRanIn(t, "evil", "status") {
				t.Errorf("git status in evil ran the fsmonitor of the git dir %s leads to", c.gitdir)
			}
			t.Logf("quarantined %q", r.quarantined())
		})
	}
}
