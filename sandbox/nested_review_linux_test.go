package sandbox

// Adversarial review of guardNested (nested_linux.go): ways a sandboxed
// command could make the host's ordinary git commands in the root run a
// program it planted in a nested repository. A test marked FINDING fails
// while the hole is open; one marked "blocked" is a regression test for an
// attack that fails today.

import (
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// reviewEnv is what git needs to commit inside the session.
var reviewEnv = []string{"GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@b", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@b", "GIT_CONFIG_NOSYSTEM=1"}

// reviewSession is a git lab, a session on it, and PWNED, the file a planted
// program touches on the host.
type reviewSession struct {
	l     *lab
	s     *Session
	pwned string
}

func newReviewSession(t *testing.T, setup func(l *lab, git func(dir string, args ...string))) *reviewSession {
	t.Helper()
	l := gitLab(t)
	if setup != nil {
		setup(l, func(dir string, args ...string) {
			t.Helper()
			if out, err := hostGit(t, l.home, dir, args...); err != nil {
				t.Fatalf("git %v: %v\n%s", args, err, out)
			}
		})
	}
	return &reviewSession{l: l, s: start(t, quarantineSpec(l)), pwned: filepath.Join(l.base, "PWNED")}
}

// sh runs command lines in the session, one after another, each a command of
// its own; each must succeed.
func (r *reviewSession) sh(t *testing.T, commands ...string) {
	t.Helper()
	for _, c := range commands {
		if out, code := run(t, r.s, r.l.root, c, append([]string{"PWNED=" + r.pwned}, reviewEnv...)...); code != 0 {
			t.Fatalf("%s: exit %d\n%s", c, code, out)
		}
	}
}

// hostRan closes the session, runs git with args in the root on the host, as
// the user would afterwards, and reports whether a planted program ran.
func (r *reviewSession) hostRan(t *testing.T, args ...string) bool {
	t.Helper()
	r.s.Close()
	out, err := hostGit(t, r.l.home, r.l.root, args...)
	t.Logf("host git %v: %v\n%s", args, err, out)
	return exists(r.pwned)
}

// quarantined lists what the quarantine holds.
func (r *reviewSession) quarantined() []string {
	var got []string
	q := filepath.Join(r.l.root, ".shellgate-quarantine")
	filepath.Walk(q, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			rel, _ := filepath.Rel(q, p)
			got = append(got, rel)
		}
		return nil
	})
	return got
}

// evilRepo makes a repository at dir (relative to the root) whose config runs
// $PWNED's touch as its fsmonitor: a shell fragment.
func evilRepo(dir string) string {
	return `git init -q ` + dir + ` && git -C ` + dir + ` commit -q --allow-empty -m y && git -C ` + dir + ` config core.fsmonitor "touch $PWNED; false"`
}

// indexEntry is an entry of a crafted index.
type indexEntry struct {
	path string
	mode uint32
}

// craftIndex writes a version 2 SHA-1 index holding entries as given (no
// path check, no sorting), as a command can write any bytes to .git/index.
func craftIndex(entries ...indexEntry) []byte {
	b := []byte("DIRC")
	b = binary.BigEndian.AppendUint32(b, 2)
	b = binary.BigEndian.AppendUint32(b, uint32(len(entries)))
	oid, _ := hex.DecodeString(strings.Repeat("ab", 20))
	for _, e := range entries {
		start := len(b)
		b = append(b, make([]byte, 24)...) // ctime, mtime, dev, ino
		b = binary.BigEndian.AppendUint32(b, e.mode)
		b = append(b, make([]byte, 12)...) // uid, gid, size
		b = append(b, oid...)
		b = binary.BigEndian.AppendUint16(b, uint16(min(len(e.path), 0xfff)))
		b = append(b, e.path...)
		b = append(b, make([]byte, 8-(len(b)-start)%8)...)
	}
	sum := sha1.Sum(b)
	return append(b, sum[:]...)
}

// payload writes b beside the root (readable, not writable, in the session)
// and returns its path.
func (r *reviewSession) payload(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(r.l.shared, name)
	must(t, os.WriteFile(p, b, 0o644))
	return p
}

// FINDING (fixed): a nested repository's core.worktree (a key the guard takes as
// plain: git writes it for absorbed submodules) moves its work tree, and git
// looks for the gitlinks of its index there — the guard looks beneath the
// repository's own directory. Here sub's work tree is x, sub's index names y,
// and git status in the root runs x/y's fsmonitor; the guard judged sub/y
// (absent) and never x/y. Fix: resolve core.worktree (from config and
// config.worktree, relative to the git dir) as git does and follow gitlinks
// from there — or count core.worktree as code unless it leads back to the
// directory the repository was found in.
func TestNestedReviewCoreWorktree(t *testing.T) {
	r := newReviewSession(t, nil)
	r.sh(t, `git init -q sub && git -C sub commit -q --allow-empty -m y && git init -q x && `+evilRepo("x/y")+` &&
git -C sub update-index --add --cacheinfo 160000,$(git -C x/y rev-parse HEAD),y && git -C sub config core.worktree ../../x &&
git update-index --add --cacheinfo 160000,$(git -C sub rev-parse HEAD),sub`)
	if r.hostRan(t, "status") {
		t.Error("git status on the host ran x/y's fsmonitor, reached through sub's core.worktree")
	}
}

// FINDING (fixed): git takes an index path as it is (it checks paths when it adds
// them, not when it reads an index), so a crafted index entry "./evil",
// "a/../evil" or "evil/" is a gitlink git status walks into — lstat and chdir
// resolve it to evil — while the guard skips every path that is not clean
// ("git takes no such path"). Fix: follow filepath.Clean(link) when it is
// local (and treat an absolute or escaping one as a reason to quarantine the
// index), instead of skipping it.
func TestNestedReviewUncleanGitlinkPath(t *testing.T) {
	for _, path := range []string{"./evil", "a/../evil", "evil/"} {
		t.Run(path, func(t *testing.T) {
			r := newReviewSession(t, nil)
			index := r.payload(t, "index", craftIndex(indexEntry{path, gitlinkMode}))
			r.sh(t, `mkdir a && `+evilRepo("evil")+` && cp `+index+` .git/index && git ls-files -s`)
			if r.hostRan(t, "status") {
				t.Errorf("git status on the host ran the fsmonitor of the repository an index path %q names", path)
			}
		})
	}
}

// FINDING (fixed): the index cache is keyed by the main index's stamp alone, but a
// split index's gitlinks live in sharedindex.<hash>, which git reads by name
// and trusts as long as its last 20 bytes are still <hash> (the checksum is
// not verified outside fsck). A command rewrites the shared index in place
// with a gitlink added and the old trailer kept; .git/index is untouched, so
// the guard keeps the old, gitlink-free reading. Fix: stamp the shared index
// too (key the cache on both stamps), or re-read both whenever either changed.
func TestNestedReviewSharedIndexRewritten(t *testing.T) {
	r := newReviewSession(t, nil)
	r.sh(t,
		`git update-index --split-index && ls .git/sharedindex.*`,
		evilRepo("sub")+` && GIT_INDEX_FILE=/tmp/i git read-tree HEAD && GIT_INDEX_FILE=/tmp/i git update-index --add --cacheinfo 160000,$(git -C sub rev-parse HEAD),sub &&
s=$(ls .git/sharedindex.*) && { head -c -20 /tmp/i; tail -c 20 $s; } > /tmp/new && dd if=/tmp/new of=$s conv=notrunc status=none && git ls-files -s | grep -q '^160000.*sub$'`)
	if r.hostRan(t, "status") {
		t.Error("git status on the host ran the fsmonitor of a repository named in a rewritten shared index")
	}
}

// FINDING (fixed): a submodule's git dir in .git/modules/<name> is judged only while
// <path>/.git leads to it. A command removes lib/.git (or all of lib) and
// plants a hook (or a config) in .git/modules/lib; the guard finds no
// repository at the gitlink and judges nothing. The user's next
// `git submodule update` (or `git pull --recurse-submodules`, `git checkout
// --recurse-submodules`) finds the submodule unpopulated, reconnects the
// existing .git/modules/lib and checks out in it: post-checkout runs. Fix:
// judge every repository under .git/modules (recursively: modules/a/modules/b)
// as a nested one, whether or not a work tree points at it; and a gitlink
// without .git whose .git/modules/<name> exists likewise.
func TestNestedReviewModulesWithoutGitfile(t *testing.T) {
	var upstream string
	r := newReviewSession(t, func(l *lab, git func(string, ...string)) {
		upstream = besideRoot(l, git, "up")
		git(l.root, "-c", "protocol.file.allow=always", "submodule", "-q", "add", upstream, "lib")
		git(l.root, "commit", "-q", "-m", "lib")
	})
	r.sh(t, `rm lib/.git && printf '#!/bin/sh\ntouch %s\n' "$PWNED" > .git/modules/lib/hooks/post-checkout && chmod +x .git/modules/lib/hooks/post-checkout`)
	if r.hostRan(t, "submodule", "update") {
		t.Error("git submodule update on the host ran a hook planted in .git/modules/lib")
	}
}

// FINDING (fixed): past maxNested gitlinks the guard stops following and only
// reports an error, which protect drops; the rest is not judged. Git walks
// only into populated gitlinks, so 4200 gitlinks to nothing, sorted before
// the real one, cost git nothing and hide it from the guard. Fix: count
// repositories found, not gitlinks queued, and past the bound fail closed
// (quarantine the index that holds the excess, say).
func TestNestedReviewManyGitlinks(t *testing.T) {
	r := newReviewSession(t, nil)
	r.sh(t, evilRepo("zz")+` && oid=$(git -C zz rev-parse HEAD) && for i in $(seq -w 0 4199); do printf '160000 %s\ta%s\n' $oid $i; done | git update-index --index-info &&
git update-index --add --cacheinfo 160000,$oid,zz`)
	if r.hostRan(t, "status") {
		t.Error("git status on the host ran the fsmonitor of a repository behind 4200 empty gitlinks")
	}
}

// FINDING (fixed): the guard opens pointers and the shared index with O_NONBLOCK,
// but os.NewFile makes such a descriptor pollable, so reading a FIFO that a
// job holds open for writing waits for data for ever: commondir (checked to
// exist, not to be a regular file) and sharedindex.<hash> (read without the
// S_IFREG check .git/index gets). The helper hangs in protect, holding its
// lock, when the command ends: the command never reports its exit, and no
// other command starts. Fix: Fstat every file before reading it and refuse
// what is not a regular file (as gitlinks does for the index), or read with
// unix.Read on a raw descriptor.
func TestNestedReviewFIFOHang(t *testing.T) {
	for name, plant := range map[string]string{
		"commondir": `git init -q sub && git -C sub commit -q --allow-empty -m y && git update-index --add --cacheinfo 160000,$(git -C sub rev-parse HEAD),sub &&
mkfifo sub/.git/commondir`,
		"shared index": `git update-index --split-index && s=$(ls .git/sharedindex.*) && rm $s && mkfifo $s && cp .git/index .git/i && mv .git/i .git/index`,
	} {
		t.Run(name, func(t *testing.T) {
			r := newReviewSession(t, nil)
			fifo := map[string]string{"commondir": "sub/.git/commondir", "shared index": "$(ls .git/sharedindex.*)"}[name]
			l, out := launch(t, r.s, r.l.root, plant+` && exec 3<> `+fifo+` && { sleep 60 > /dev/null 2>&1 & disown; }`, reviewEnv...)
			done := make(chan struct{})
			go func() { l.Wait(); close(done) }()
			select {
			case <-done:
				if code, _ := l.Wait(); code == nil || *code != 0 {
					t.Fatalf("exit %v\n%s", code, out())
				}
			case <-time.After(10 * time.Second):
				t.Errorf("the command's exit was not reported within 10s: the helper hangs reading a FIFO %s", name)
			}
		})
	}
}

// FINDING (fixed): a nested repository's own config, there before the session, that
// includes another file (include.path) is accepted with that key; the
// included file is neither stamped nor read. A command adds core.fsmonitor
// to the included file and the config, unchanged, stays. Fix: follow
// include.path/includeIf.*.path (relative to the config's directory) when
// judging and stamping, or treat an include as code whose stamp covers the
// included file. (core.hooksPath is the same: the directory it names is not
// judged, only <common dir>/hooks.)
func TestNestedReviewUsersInclude(t *testing.T) {
	r := newReviewSession(t, func(l *lab, git func(string, ...string)) {
		sub := filepath.Join(l.root, "sub")
		git(l.root, "init", "-q", "sub")
		git(sub, "commit", "-q", "--allow-empty", "-m", "y")
		must(t, os.WriteFile(filepath.Join(sub, ".git", "extra.cfg"), []byte("[user]\n\tname = me\n"), 0o644))
		git(sub, "config", "include.path", "extra.cfg")
		git(l.root, "add", "sub")
	})
	r.sh(t, `printf '[core]\n\tfsmonitor = "touch %s; false"\n' "$PWNED" >> sub/.git/extra.cfg`)
	if r.hostRan(t, "status") {
		t.Error("git status on the host ran an fsmonitor added to a file the user's nested config includes")
	}
}

// FINDING (false positive, fixed): an ordinary, harmless setting in a
// nested repository — `git -C sub config pull.rebase true`, `push.default`,
// `diff.colorMoved` — is "a key beyond what git writes", so the whole config
// (remote, branch tracking) goes to the quarantine and the nested repository
// loses them. Fix: an allow-list of keys that never run code (pull.*,
// push.default, color.*, diff.colormoved, merge.ff, rerere.enabled, …) next
// to the plain ones, or a deny-list of those that do.
func TestNestedReviewHarmlessKeyKept(t *testing.T) {
	r := newReviewSession(t, nil)
	r.sh(t, `git init -q sub && git -C sub commit -q --allow-empty -m y && git update-index --add --cacheinfo 160000,$(git -C sub rev-parse HEAD),sub`,
		`git -C sub config pull.rebase true && git -C sub config push.default current`, `true`)
	r.s.Close()
	if q := r.quarantined(); len(q) > 0 {
		t.Errorf("quarantined %q for harmless settings", q)
	}
}

// blocked: each way to point a nested repository's .git, or its git files,
// elsewhere in another spelling is judged as a pointer the guard cannot
// follow, or followed where git goes.
func TestNestedReviewPointerSpellings(t *testing.T) {
	for name, plant := range map[string]string{
		// .git a symlink to an evil git dir.
		"symlink .git": evilRepo("evil") + ` && mkdir sub && ln -s ../evil/.git sub/.git`,
		// git stops at the NUL; the guard cannot open such a name.
		"gitfile with NUL": evilRepo("evil") + ` && mkdir sub && printf 'gitdir: ../evil/.git\0junk\n' > sub/.git`,
		// CRLF: git strips \r and \n at the end, as the guard does.
		"gitfile with CRLF": evilRepo("evil") + ` && mkdir sub && printf 'gitdir: ../evil/.git\r\n' > sub/.git`,
		// An absolute path into the root.
		"absolute gitfile": evilRepo("evil") + ` && mkdir sub && printf 'gitdir: %s/evil/.git\n' "$PWD" > sub/.git`,
		// A path through a symlinked directory.
		"gitfile through a symlink": evilRepo("evil") + ` && mkdir sub && ln -s evil e && printf 'gitdir: ../e/.git\n' > sub/.git`,
		// config a symlink to a config elsewhere.
		"config symlink": `git init -q sub && git -C sub commit -q --allow-empty -m y && printf '[core]\n\tfsmonitor = "touch %s; false"\n' "$PWNED" > cfg && rm sub/.git/config && ln -s ../../cfg sub/.git/config`,
		// config.worktree with extensions.worktreeConfig.
		"config.worktree": `git init -q sub && git -C sub commit -q --allow-empty -m y && git -C sub config extensions.worktreeConfig true && git -C sub config --worktree core.fsmonitor "touch $PWNED; false"`,
		// The key on a section header's line, which git takes.
		"key on the header line": `git init -q sub && git -C sub commit -q --allow-empty -m y && printf '[core] fsmonitor = "touch %s; false"\n' "$PWNED" >> sub/.git/config`,
	} {
		t.Run(name, func(t *testing.T) {
			r := newReviewSession(t, nil)
			r.sh(t, plant+` && git update-index --add --cacheinfo 160000,`+strings.Repeat("ab", 20)+`,sub`)
			if r.hostRan(t, "status") {
				t.Errorf("git status on the host ran a planted fsmonitor (quarantined %q)", r.quarantined())
			}
		})
	}
}

// blocked: an index git reads but the guard cannot — a symlink to another
// index, a version 2 index with extended flags — is quarantined.
func TestNestedReviewIndexSpellings(t *testing.T) {
	for name, plant := range map[string]string{
		"index a symlink": evilRepo("sub") + ` && GIT_INDEX_FILE=$PWD/other git read-tree HEAD && GIT_INDEX_FILE=$PWD/other git update-index --add --cacheinfo 160000,$(git -C sub rev-parse HEAD),sub && rm .git/index && ln -s ../other .git/index`,
		"index in place":  evilRepo("sub") + ` && GIT_INDEX_FILE=/tmp/i git read-tree HEAD && GIT_INDEX_FILE=/tmp/i git update-index --add --cacheinfo 160000,$(git -C sub rev-parse HEAD),sub && dd if=/tmp/i of=.git/index conv=notrunc status=none`,
	} {
		t.Run(name, func(t *testing.T) {
			r := newReviewSession(t, nil)
			r.sh(t, `true`, plant)
			if r.hostRan(t, "status") {
				t.Errorf("git status on the host ran a planted fsmonitor (quarantined %q)", r.quarantined())
			}
		})
	}
}

// blocked: the quarantine renamed away, or a config moved aside re-linked:
// what it holds stays read-only and out of git's way.
func TestNestedReviewQuarantineTampering(t *testing.T) {
	r := newReviewSession(t, nil)
	r.sh(t, evilRepo("sub")+` && git update-index --add --cacheinfo 160000,$(git -C sub rev-parse HEAD),sub`,
		`mv .shellgate-quarantine q2 || true; c=$(find q2 .shellgate-quarantine -name config 2>/dev/null | head -1); cp $c sub/.git/config || true; ln $c sub/.git/config2 2>/dev/null; mv $c sub/.git/config 2>/dev/null; true`)
	if r.hostRan(t, "status") {
		t.Error("git status on the host ran the fsmonitor of a config taken back from the quarantine")
	}
}

// blocked (no false positive): ordinary git work with nested repositories
// in the sandbox — a clone whose submodules are initialised, a commit in it,
// user.name set, the user's own submodule updated and committed in — leaves
// nothing in the quarantine and git working.
func TestNestedReviewOrdinaryWork(t *testing.T) {
	var upstream string
	r := newReviewSession(t, func(l *lab, git func(string, ...string)) {
		upstream = filepath.Join(l.shared, "up")
		inner := besideRoot(l, git, "inner")
		git(l.shared, "init", "-q", "up")
		git(upstream, "-c", "protocol.file.allow=always", "submodule", "-q", "add", inner, "inner")
		git(upstream, "commit", "-q", "-m", "u")
		git(l.root, "-c", "protocol.file.allow=always", "submodule", "-q", "add", upstream, "lib")
		git(l.root, "commit", "-q", "-m", "lib")
	})
	r.sh(t,
		`git clone -q `+upstream+` vendored && git -C vendored -c protocol.file.allow=always submodule -q update --init && git add vendored && git commit -q -m v`,
		`git -C vendored config user.name x && git -C vendored/inner config user.email x@y && git -C vendored commit -q --allow-empty -m w`,
		`git -C lib -c protocol.file.allow=always submodule -q update --init && git -C lib checkout -q -b feature && git -C lib commit -q --allow-empty -m f && git add lib && git commit -q -m f`,
		`git status --short && git -C lib submodule status && git -C vendored submodule status`, `true`)
	r.s.Close()
	if q := r.quarantined(); len(q) > 0 {
		t.Errorf("quarantined %q", q)
	}
	if out, err := hostGit(t, r.l.home, filepath.Join(r.l.root, "lib"), "submodule", "status"); err != nil {
		t.Errorf("git submodule status: %v\n%s", err, out)
	}
}

// FINDING (fixed): the index reader takes the entry count from the header and reads
// every entry, however many: a sparse .git/index of zeros (costing no disk)
// whose header claims 2^28 entries is 16 GiB the helper reads at each pass
// (about 40 s here; 2^32 entries, 256 GiB, take some ten minutes), holding
// its lock, when the command ends — and again whenever a job touches the
// file. Fix: bound the index (size, entry count: git's own indexes of
// millions of entries are a few hundred MB) and treat one past the bound as
// unreadable (quarantined), before reading it.
func TestNestedReviewHugeSparseIndex(t *testing.T) {
	r := newReviewSession(t, nil)
	l, out := launch(t, r.s, r.l.root, `printf 'DIRC\0\0\0\2\x10\0\0\0' > .git/index && truncate -s $((12+(64<<28)+20)) .git/index`, reviewEnv...)
	done := make(chan struct{})
	go func() { l.Wait(); close(done) }()
	select {
	case <-done:
		if code, _ := l.Wait(); code == nil || *code != 0 {
			t.Fatalf("exit %v\n%s", code, out())
		}
	case <-time.After(10 * time.Second):
		t.Error("the command's exit was not reported within 10s: the helper reads a 16 GiB sparse index")
	}
}

// FINDING (fixed): git reads the entries of an index with an IEOT extension (index
// entry offset table, written with EOIE when index.threads is on) from the
// offsets that table gives, in threads — not one after another from the
// header, as the guard does. A crafted index whose table sends the last
// block to an entry hidden in an optional extension ("Zhid", which git
// ignores) shows the guard 40000 files and git a gitlink "zzz". Git uses the
// table when it has at least 3 threads: by default min(entries/10000, CPUs),
// so 40000 entries on any machine of 3 or more CPUs; index.threads=4 stands
// for such a machine here (this one has 2). Fix: read the index as git does
// when EOIE and IEOT are present (entries from the IEOT offsets, and fail
// closed when the two readings differ), or refuse an index with IEOT whose
// blocks are not exactly the sequential entries.
func TestNestedReviewIndexEntryOffsetTable(t *testing.T) {
	r := newReviewSession(t, nil)
	index := r.payload(t, "index", craftIEOTIndex(40000, "zzz"))
	r.sh(t, evilRepo("zzz")+` && cp `+index+` .git/index`)
	r.s.Close()
	out, err := hostGit(t, r.l.home, r.l.root, "-c", "index.threads=4", "status", "--short")
	if exists(r.pwned) {
		t.Errorf("git status on the host (3 or more CPUs) ran the fsmonitor of a gitlink only the IEOT extension names: %v\n%s", err, out[max(0, len(out)-200):])
	}
}

// craftIEOTIndex writes a version 2 index of n regular files read in order,
// whose IEOT extension gives git the first n-1 of them and, as the last, a
// gitlink named hidden kept in an optional extension.
func craftIEOTIndex(n int, hidden string) []byte {
	oid, _ := hex.DecodeString(strings.Repeat("ab", 20))
	entry := func(path string, mode uint32) []byte {
		b := make([]byte, 24, 64)
		b = binary.BigEndian.AppendUint32(b, mode)
		b = append(b, make([]byte, 12)...)
		b = append(b, oid...)
		b = binary.BigEndian.AppendUint16(b, uint16(len(path)))
		b = append(b, path...)
		return append(b, make([]byte, 8-len(b)%8)...)
	}
	b := []byte("DIRC")
	b = binary.BigEndian.AppendUint32(b, 2)
	b = binary.BigEndian.AppendUint32(b, uint32(n))
	for i := 0; i < n; i++ {
		b = append(b, entry(fmt.Sprintf("a%05d", i), 0o100644)...)
	}
	firstExt := len(b)
	ieot := binary.BigEndian.AppendUint32(nil, 1)
	for _, v := range []int{12, n - 1, firstExt + 8, 1} {
		ieot = binary.BigEndian.AppendUint32(ieot, uint32(v))
	}
	eoie := sha1.New()
	for _, ext := range []struct {
		sig  string
		body []byte
	}{{"Zhid", entry(hidden, gitlinkMode)}, {"IEOT", ieot}} {
		head := binary.BigEndian.AppendUint32([]byte(ext.sig), uint32(len(ext.body)))
		eoie.Write(head)
		b = append(append(b, head...), ext.body...)
	}
	b = binary.BigEndian.AppendUint32(append(b, "EOIE"...), 24)
	b = binary.BigEndian.AppendUint32(b, uint32(firstExt))
	b = eoie.Sum(b)
	sum := sha1.Sum(b)
	return append(b, sum[:]...)
}

// FINDING (false positive, fixed): the user's own nested repository, there before
// the session but not yet named by a gitlink, is accepted only if the guard
// reached it at the start. A sandboxed `git add own` (an embedded repository
// added by an ordinary command) makes the guard judge it for the first time
// and move the user's own hooks (installed by pre-commit, husky …), config
// or .git file (a worktree of a repository elsewhere) to the quarantine,
// breaking that repository. Fix: at the start, also accept the nested
// repositories found by walking the work tree (bounded), or judge a
// repository's files by their change time against the session's start.
func TestNestedReviewUsersOwnNotYetLinked(t *testing.T) {
	for name, setup := range map[string]func(l *lab, own string, git func(string, ...string)){
		"hook": func(l *lab, own string, git func(string, ...string)) {
			must(t, os.WriteFile(filepath.Join(own, ".git", "hooks", "pre-commit"), []byte("#!/bin/sh\nexit 0\n"), 0o755))
		},
		"config": func(l *lab, own string, git func(string, ...string)) {
			git(own, "config", "core.editor", "vim")
		},
		"gitfile": func(l *lab, own string, git func(string, ...string)) {
			must(t, os.RemoveAll(own))
			elsewhere := filepath.Join(l.shared, "elsewhere")
			git(l.shared, "init", "-q", "--separate-git-dir="+elsewhere, own)
			git(own, "commit", "-q", "--allow-empty", "-m", "y")
		},
	} {
		t.Run(name, func(t *testing.T) {
			r := newReviewSession(t, func(l *lab, git func(string, ...string)) {
				own := filepath.Join(l.root, "own")
				git(l.root, "init", "-q", "own")
				git(own, "commit", "-q", "--allow-empty", "-m", "y")
				setup(l, own, git)
			})
			r.sh(t, `git add own 2>/dev/null; git ls-files -s own | grep -q ^160000`, `true`)
			r.s.Close()
			if q := r.quarantined(); len(q) > 0 {
				t.Errorf("quarantined the user's own %q", q)
			}
		})
	}
}
