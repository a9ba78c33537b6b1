package sandbox

// Adversarial review of the repository watch (repowatch_linux.go) and the
// judgement of the repositories it finds (guardNested, beforeStart): ways a
// sandboxed command could leave, anywhere in the root, a repository whose
// config or hooks the host's git runs once the user runs git there. A test
// marked FINDING fails while the hole is open (each was run without its
// t.Skip and failed); one marked "blocked" is a regression test for an
// attack that fails today.

import (
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

// FINDING: a .git directory that is not a repository (no HEAD) hides the
// bare repository beside it. git tries evil/.git, finds no repository there,
// and then takes evil itself as a bare git dir (setup.c: is_git_directory of
// the directory after that of .git); openRepo takes any .git directory as the
// git dir and judges only evil/.git/config (absent). Fix: in openRepo, use
// .git only when it is a repository as git sees it (bareRepo on it, the
// same test as is_git_directory), else fall through to bareRepo(workFD).
func TestRepoWatchReviewEmptyDotGitBesideBare(t *testing.T) {
	t.Skip("FINDING: an empty .git hides the bare repository beside it (confirmed failing without this skip)")
	r := newReviewSession(t, nil)
	r.sh(t, `mkdir -p evil/.git && `+bareEvil("evil"))
	if r.hostRanIn(t, "evil", "status") {
		t.Error("git status in evil ran the fsmonitor of the bare repository behind an empty evil/.git")
	}
}

// FINDING: HEAD spellings git takes and bareRepo does not. git reads a
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
			t.Skip("FINDING: bareRepo is stricter than git's is_git_directory (confirmed failing without this skip)")
			r := newReviewSession(t, nil)
			r.sh(t, bareEvil("evil")+` && `+spell)
			if r.hostRanIn(t, "evil", "status") {
				t.Errorf("git status in evil ran the fsmonitor of a bare repository with %s", name)
			}
		})
	}
}

// FINDING: what is judged at the close only is judged with the close's
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
			t.Skip("FINDING: a bad .git is quarantined, the bare repository beside it kept at the close (confirmed failing without this skip)")
			r := newReviewSession(t, nil)
			r.sh(t, bareEvil("evil")+` && `+plant)
			if r.hostRanIn(t, "evil", "status") {
				t.Errorf("git status in evil ran the bare repository's fsmonitor once its .git (%s) was quarantined", name)
			}
			t.Logf("quarantined %q", r.quarantined())
		})
	}
}
