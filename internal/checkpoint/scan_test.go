package checkpoint_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/shellgate/shellgate/internal/lane"

	"github.com/shellgate/shellgate/internal/checkpoint"
	"github.com/shellgate/shellgate/internal/checkpoint/checkpointtest"
)

// TestScanMatchesGit: the checkpoint's own walk takes exactly what
// `git add -A && git write-tree` takes of the same root — the same tree id,
// so the same paths, modes, symlinks and ignore rules (every kind
// of pattern: anchored, negated, **, classes, escapes, directory-only,
// deeper .gitignore files overriding, .git/info/exclude) — and of its .git,
// the same as git add of every file there; a nested repository as git add
// in it takes its files, and its .git as the root's; again after the root
// changed.
func TestScanMatchesGit(t *testing.T) {
	lane.Live(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	lab := checkpointtest.LabDir(t)
	root := filepath.Join(lab, "project")
	os.Mkdir(root, 0o755)
	checkpointtest.Sh(t, root, `set -e
git init -q -b main
cat > .gitignore <<'EOF'
# a comment
*.log
!keep.log
/build/
docs/**/*.tmp
**/cache
a/**/b
\#hash
\!bang
trailing\ 
spaced   
[abc].x
[!a-c].y
[[:digit:]]*.num
sub/*.o
*.d/
odd[
EOF
printf 'x-by-info\n' >> .git/info/exclude
mkdir -p build src/build docs/a/b x/cache a/x/y sub/deep sub/x/deep z.d nested empty lib
for f in a.log keep.log Foo.LOG build/x src/build/x docs/a/b/c.tmp docs/c.tmp docs/c.md x/cache/f cache a/b a/x/y/b \
  '#hash' '!bang' 'trailing ' 'spaced' a.x d.x a.y d.y 1foo.num sub/f.o sub/important.o sub/a.txt sub/keep.txt \
  sub/deep/f sub/x/deep/f z.d/f f.d x-by-info 'odd[' 'with space' lib/f; do printf '%s\n' "$f" > "$f"; done
printf '!important.o\n*.txt\n!/keep.txt\ndeep/\n' > sub/.gitignore
printf '#!/bin/sh\n' > run.sh && chmod 755 run.sh
chmod 600 lib/f
ln -s run.sh link && ln -s lib dirlink && ln -s missing dangling
mkfifo fifo
(cd nested && git init -q && echo n > n && git add n && git -c user.name=t -c user.email=t@e commit -qm n)
git add -A && git -c user.name=t -c user.email=t@e commit -qm base
`)
	s, err := checkpoint.Open(checkpoint.Options{Root: root, Dir: filepath.Join(lab, "store"), IgnoredMaxSize: -1, KeepIgnored: []string{}, LinkMaxSize: -1})
	if err != nil {
		t.Fatal(err)
	}
	check := func(step string) {
		t.Helper()
		id, err := s.Snapshot("run", step, "")
		if err != nil {
			t.Fatal(err)
		}
		r, err := s.Record(id)
		if err != nil {
			t.Fatal(err)
		}
		store := filepath.Join(s.Dir(), "git")
		ours := func(part string) string {
			return strings.TrimSpace(checkpointtest.Sh(t, lab, "git --git-dir '"+store+"' rev-parse "+r.Before+":"+part))
		}
		plain := filepath.Join(lab, "plain-"+step)
		checkpointtest.Sh(t, lab, "git init -q --bare '"+plain+"' && cp '"+root+"/.git/info/exclude' '"+plain+"/info/exclude'")
		want := func(work, excludes string) string {
			return strings.TrimSpace(checkpointtest.Sh(t, work, "rm -f '"+plain+"/index' && GIT_DIR='"+plain+"' GIT_WORK_TREE=. git -c core.excludesFile="+excludes+" -c advice.addEmbeddedRepo=false add -A 2>/dev/null && GIT_DIR='"+plain+"' git write-tree"))
		}
		// The nested repository, which git takes as a gitlink, is kept
		// as a tree of its files and, in the "nested" tree, its .git:
		// each as git add -A of its own.
		without := func(gitDir, tree string) string {
			return strings.TrimSpace(checkpointtest.Sh(t, lab, "g() { git --git-dir '"+gitDir+"' \"$@\"; }; g ls-tree "+tree+" | awk -F'\\t' '$2 != \"nested\"' | g mktree"))
		}
		if got, w := without(store, ours("work")), without(plain, want(root, "/dev/null")); got != w {
			t.Errorf("%s: work tree %s, git's %s:\n%s", step, got, w,
				checkpointtest.Sh(t, lab, "git --git-dir '"+store+"' ls-tree -r "+got+" | sed 's/^/ours /'; GIT_DIR='"+plain+"' git ls-tree -r "+w+" | sed 's/^/git  /'"))
		}
		os.WriteFile(filepath.Join(plain, "info", "exclude"), nil, 0o644)
		if got, w := ours("work/nested"), want(filepath.Join(root, "nested"), "/dev/null"); got != w {
			t.Errorf("%s: the nested repository's tree %s, git's %s", step, got, w)
		}
		if got, w := ours("nested/nested"), want(filepath.Join(root, "nested", ".git"), "/dev/null"); got != w {
			t.Errorf("%s: the nested repository's .git tree %s, git's %s", step, got, w)
		}
		if got, w := ours("git"), want(filepath.Join(root, ".git"), "/dev/null"); got != w {
			t.Errorf("%s: .git tree %s, git's %s", step, got, w)
		}
	}
	check("first")
	// Changes the walk must see from stat alone: content, a mode, a file
	// replaced by a directory, a deletion, a new ignore rule, a new commit
	// in the nested repository.
	checkpointtest.Sh(t, root, `set -e
printf 'changed\n' >> src/build/x
chmod 755 docs/c.md
rm cache && mkdir cache2 && echo c > cache2/f
rm a.x
echo 'lib/' >> .gitignore
(cd nested && echo m > m && git add m && git -c user.name=t -c user.email=t@e commit -qm m)
touch -d '2001-01-01' sub/keep.txt
`)
	check("second")
	checkpointtest.Sh(t, root, "mkfifo fifo2 && printf 'again\\n' > src/build/x")
	check("third")
}

// TestWarmMatchesCold: a store that has checkpointed the root before (its
// walk taking what the watch of the root and the files' stat say did not
// change as it was) takes the same checkpoint as a new store that reads
// every file, after each kind of change a command makes.
func TestWarmMatchesCold(t *testing.T) {
	lane.Live(t)
	lab, root := checkpointtest.Project(t)
	checkpointtest.Sh(t, root, "mkdir -p deep/a/b/c && echo d > deep/a/b/c/f && echo e > deep/a/e")
	warm := open(t, root, filepath.Join(lab, "warm"))
	tree := func(s *checkpoint.Store) string {
		r, err := s.Record(snapshot(t, s, "step"))
		if err != nil {
			t.Fatal(err)
		}
		return r.Before
	}
	tree(warm)
	steps := []string{
		`printf 'same size\n' > deep/a/e && printf 'SAME SIZE\n' > deep/a/e`, // twice within the time resolution
		`echo more >> deep/a/b/c/f`,
		// exact modes (the manifest) of a directory taken as it was
		`mkdir -p perm/a/b && echo p > perm/a/b/p && chmod 600 perm/a/b/p && echo q > perm/q`,
		`echo again >> src/pkg/f2.go`,
		`chmod 640 perm/a/b/p`,
		`echo again >> src/pkg/f3.go && chmod 644 perm/a/b/p && chmod 700 perm/q`,
		`echo again >> src/pkg/f4.go`,
		// a directory the last checkpoint left out (empty), written in
		`mkdir -p src/pkg/empty`,
		`echo x > src/pkg/empty/f`,
		// entries read by name (and past the names kept: whole)
		`mkdir -p many && for i in $(seq 300); do echo $i > many/f$i; done`,
		`for i in $(seq 0 7 300); do echo x >> many/f$i; done && rm many/f1 && ln -s f2 many/f1 && chmod 755 many/f3`,
		`for i in $(seq 300); do echo y >> many/f$i; done`,
		`mv deep/a deep/moved && echo after-move >> deep/moved/b/c/f`,
		`rm -rf deep/moved/b && mkdir -p deep/moved/b && echo new > deep/moved/b/g`,
		`mkdir -p other/sub && echo o > other/sub/o`,
		`rm -rf deep/moved/b && mv other deep/moved/b`, // a watched directory moved in place of another
		`mkdir -p docs && mv src/pkg/f1.go docs/ && chmod 700 docs/f1.go`,
		`ln -sfn run.sh link.md && : > README.md`,
		`rm -rf docs && echo file > docs`,
		`rm docs && mkdir -p docs/x/y && echo z > docs/x/y/z`,
		`echo 'deep/' >> .gitignore`,
		`sed -i 's/deep.//' .gitignore && touch -d 2001-01-01 deep/moved/b/g`,
		`git add -A && git -c user.name=t -c user.email=t@e commit -qm step && git gc -q`,
		`python3 -c 'import mmap; f=open("run.sh","r+b"); m=mmap.mmap(f.fileno(),0); m[0:2]=b"#?"; m.flush(); m.close(); f.close()'`,
		`git reset -q --hard HEAD~1 && git stash -q -u`,
		// a nested repository: made, committed in, its rules changed, its
		// .git's objects and then its .git removed
		`mkdir -p vendor/lib && git -C vendor/lib init -q && echo a > vendor/lib/a`,
		`git -C vendor/lib add -A && git -C vendor/lib -c user.name=t -c user.email=t@e commit -qm a`,
		`echo b >> vendor/lib/a && printf 'x\n' > vendor/lib/.gitignore && echo i > vendor/lib/x`,
		`echo '*.tmp' >> vendor/lib/.git/info/exclude && echo t > vendor/lib/t.tmp && printf '%070000d' 0 > vendor/lib/big.tmp`,
		`git -C vendor/lib -c user.name=t -c user.email=t@e commit -qam b && git -C vendor/lib gc -q`,
		`rm -rf vendor/lib/.git/objects`,
		`rm -rf vendor/lib/.git`,
		`true`,
	}
	for i, step := range steps {
		if strings.Contains(step, "python3") {
			if _, err := exec.LookPath("python3"); err != nil {
				continue
			}
		}
		checkpointtest.Sh(t, root, step)
		got := tree(warm)
		cold := open(t, root, filepath.Join(lab, "cold", strconv.Itoa(i)))
		if want := tree(cold); got != want {
			t.Fatalf("after %q: the warm store took %s, a new one %s", step, got, want)
		}
	}
}

// TestPrune: past MaxCount the oldest records go, their refs with them —
// loose ones and those git's gc packed — and the store stays whole: git
// fsck is clean, and the oldest record left restores.
func TestPrune(t *testing.T) {
	lane.Live(t)
	lab, root := checkpointtest.Project(t)
	s, err := checkpoint.Open(checkpoint.Options{Root: root, Dir: filepath.Join(lab, "store"), MaxCount: 3})
	if err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(s.Dir(), "git")
	states := map[int]string{}
	for i := range 8 {
		if i == 4 {
			checkpointtest.Sh(t, lab, "git --git-dir '"+store+"' gc -q") // packs the refs
		}
		before := checkpointtest.State(t, root)
		id := snapshot(t, s, "edit")
		states[id] = before
		// (a file of the commands' own: one changing the user's notes.txt
		// would be kept as destroying work, see TestCountBoundKeepsDestroyedWork)
		checkpointtest.Sh(t, root, "echo "+strconv.Itoa(i)+" >> out.txt")
		if _, err := s.Finish(id); err != nil {
			t.Fatal(err)
		}
	}
	recs, err := s.Records()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 || recs[0].ID != 6 {
		t.Fatalf("records %+v: want the last 3", recs)
	}
	var want []string
	for _, r := range recs {
		want = append(want, "refs/cp/"+strconv.Itoa(r.ID)+"-a", "refs/cp/"+strconv.Itoa(r.ID)+"-b")
	}
	refs := strings.Fields(checkpointtest.Sh(t, lab, "git --git-dir '"+store+"' for-each-ref --format='%(refname)' refs/cp | sort"))
	if strings.Join(refs, " ") != strings.Join(want, " ") {
		t.Errorf("refs %v, want %v", refs, want)
	}
	checkpointtest.Sh(t, lab, "git --git-dir '"+store+"' fsck --strict --no-dangling")
	restore(t, s, recs[0].ID, states[recs[0].ID])
}
