package sandbox

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// git runs git on the host in dir, as the user would after the session,
// without the machine's or the user's config.
func hostGit(t *testing.T, home, dir string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.email=a@b", "-c", "user.name=a"}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+home)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func needGit(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git here")
	}
}

// The gitlinks read from an index are those git lists, in every index format
// git writes: versions 2, 3 (extended flags) and 4 (prefix-compressed paths),
// a split index whose gitlinks sit in the shared index, SHA-256 object names.
func TestReadGitIndex(t *testing.T) {
	needGit(t)
	long := strings.Repeat("d", 120) + "/" + strings.Repeat("e", 120) + "/" + strings.Repeat("f", 120)
	for _, c := range []struct {
		name   string
		format string // --object-format
		setup  []string
	}{
		{"version 2", "sha1", nil},
		{"version 3", "sha1", []string{"add -N notes.txt"}},
		{"version 4", "sha1", []string{"update-index --index-version 4"}},
		{"split index", "sha1", []string{"update-index --split-index", "update-index --add --cacheinfo 160000,OID,late/link"}},
		{"sha256", "sha256", []string{"update-index --index-version 4"}},
		// Entry offsets for threads to read from (IEOT, EOIE): written for
		// 1000 entries or more.
		{"offset table", "sha1", []string{"add many", "-c index.recordOffsetTable=true -c index.recordEndOfIndexEntries=true -c index.threads=4 update-index --index-version 3"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			git := func(args ...string) string {
				out, err := hostGit(t, dir, dir, args...)
				if err != nil {
					t.Fatalf("git %v: %v\n%s", args, err, out)
				}
				return out
			}
			git("init", "-q", "--object-format="+c.format)
			oid := strings.Repeat("ab", 20)
			if c.format == "sha256" {
				oid = strings.Repeat("ab", 32)
			}
			for _, p := range []string{"a.txt", "sub/b.txt", long + "/c.txt", "notes.txt"} {
				must(t, os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755))
				must(t, os.WriteFile(filepath.Join(dir, p), []byte(p), 0o644))
			}
			git("add", "a.txt", "sub/b.txt", long+"/c.txt")
			for _, link := range []string{"mod", "sub/nested", long + "/deep"} {
				git("update-index", "--add", "--cacheinfo", "160000,"+oid+","+link)
			}
			for _, s := range c.setup {
				if s == "add many" {
					must(t, os.Mkdir(filepath.Join(dir, "many"), 0o755))
					for i := range 1500 {
						must(t, os.WriteFile(filepath.Join(dir, "many", strconv.Itoa(i)), nil, 0o644))
					}
				}
				git(strings.Fields(strings.ReplaceAll(s, "OID", oid))...)
			}
			if c.name == "offset table" {
				if b, _ := os.ReadFile(filepath.Join(dir, ".git", "index")); !bytes.Contains(b, []byte("IEOT")) || !bytes.Contains(b, []byte("EOIE")) {
					t.Fatal("git wrote no IEOT and EOIE extensions")
				}
			}
			var want []string
			for _, line := range strings.Split(git("ls-files", "-s"), "\n") {
				if strings.HasPrefix(line, "160000 ") {
					want = append(want, line[strings.IndexByte(line, '\t')+1:])
				}
			}
			got := readIndexFile(t, filepath.Join(dir, ".git"), "index", map[string]int{"sha1": 20, "sha256": 32}[c.format])
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) || len(want) < 3 {
				t.Errorf("gitlinks %q, git lists %q", got, want)
			}
		})
	}
}

// readIndexFile reads the index name in gitDir and its shared index, as
// guardNested does.
func readIndexFile(t *testing.T, gitDir, name string, hash int) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(gitDir, name))
	must(t, err)
	idx, err := readGitIndex(bytes.NewReader(b), int64(len(b)), hash)
	must(t, err)
	links := idx.gitlinks
	if idx.shared != "" {
		links = append(links, readIndexFile(t, gitDir, idx.shared, hash)...)
	}
	return links
}

// A cut or damaged index is an error, never a panic or a partial answer.
func TestReadGitIndexDamaged(t *testing.T) {
	needGit(t)
	dir := t.TempDir()
	hostGit(t, dir, dir, "init", "-q")
	hostGit(t, dir, dir, "update-index", "--add", "--cacheinfo", "160000,"+strings.Repeat("ab", 20)+",mod")
	b, err := os.ReadFile(filepath.Join(dir, ".git", "index"))
	must(t, err)
	for n := 0; n < len(b)-20; n++ {
		if _, err := readGitIndex(bytes.NewReader(b[:n]), int64(n), 20); err == nil {
			t.Errorf("an index cut to %d of %d bytes read without error", n, len(b))
		}
	}
	bad := slices.Clone(b)
	copy(bad[4:8], []byte{0, 0, 0, 9})
	if _, err := readGitIndex(bytes.NewReader(bad), int64(len(bad)), 20); err == nil {
		t.Error("index version 9 read without error")
	}
}

func FuzzReadGitIndex(f *testing.F) {
	f.Add([]byte("DIRC\x00\x00\x00\x02\x00\x00\x00\x00"+strings.Repeat("\x00", 20)), 20)
	f.Add([]byte("DIRC\x00\x00\x00\x04\x00\x00\x00\x01"+strings.Repeat("\x00", 60)+"\x00\x03\xff\xff\xff\x7fab\x00"), 20)
	f.Fuzz(func(t *testing.T, b []byte, hash int) {
		if hash != 20 && hash != 32 {
			hash = 20
		}
		readGitIndex(bytes.NewReader(b), int64(len(b)), hash)
	})
}

// gitLab is a lab whose root is a real repository with one commit.
func gitLab(t *testing.T) *lab {
	t.Helper()
	needGit(t)
	l := newLab(t)
	must(t, os.RemoveAll(filepath.Join(l.root, ".git")))
	for _, args := range [][]string{{"init", "-q"}, {"add", "README.md"}, {"commit", "-q", "-m", "x"}} {
		if out, err := hostGit(t, l.home, l.root, args...); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return l
}

// Each way a command can make the host's `git status` — at the root, or in a
// directory of the project the user goes into — run a program a nested
// repository's config names: the sandbox moves that config to the quarantine
// when the command (or the session) ends.
func TestNestedRepositoryAttacks(t *testing.T) {
	// The fsmonitor the nested repository's config names: it runs on the host.
	const monitor = `git -C %s config core.fsmonitor "touch $PWNED; false"`
	for _, c := range []struct {
		name     string
		commands []string // run one after another in one session
		at       string   // where the user runs git status, "" for the root
	}{
		{"nested .git directory", []string{`git init -q sub && git -C sub commit -q --allow-empty -m y && ` + fmtMonitor(monitor, "sub") + ` &&
git update-index --add --cacheinfo 160000,$(git -C sub rev-parse HEAD),sub`}, ""},
		{"submodule-style .git file into .git/modules", []string{`mkdir -p .git/modules && git init -q --separate-git-dir=.git/modules/sub sub && git -C sub commit -q --allow-empty -m y && ` + fmtMonitor(monitor, "sub") + ` &&
git update-index --add --cacheinfo 160000,$(git -C sub rev-parse HEAD),sub`}, ""},
		{"commondir to another repository", []string{`git init -q sub && git -C sub commit -q --allow-empty -m y &&
git init -q --bare sub/evil && ` + fmtMonitor(monitor, "sub/evil") + ` && cp -r sub/.git/objects sub/.git/refs sub/evil/ && echo ../evil > sub/.git/commondir &&
git update-index --add --cacheinfo 160000,$(git -C sub rev-parse HEAD),sub`}, ""},
		{"two levels down", []string{`git init -q sub && git init -q sub/inner && git -C sub/inner commit -q --allow-empty -m y &&
` + fmtMonitor(monitor, "sub/inner") + ` && git -C sub update-index --add --cacheinfo 160000,$(git -C sub/inner rev-parse HEAD),inner &&
git -C sub commit -q -m y && git update-index --add --cacheinfo 160000,$(git -C sub rev-parse HEAD),sub`}, ""},
		{"the gitlink in a split index's shared part", []string{`git init -q sub && git -C sub commit -q --allow-empty -m y && ` + fmtMonitor(monitor, "sub") + ` &&
git update-index --add --cacheinfo 160000,$(git -C sub rev-parse HEAD),sub && git update-index --split-index`}, ""},
		{"the config changed by a job after it was judged", []string{`git init -q sub && git -C sub commit -q --allow-empty -m y &&
git update-index --add --cacheinfo 160000,$(git -C sub rev-parse HEAD),sub`,
			`(sleep 0.3; ` + fmtMonitor(monitor, "sub") + `) > /dev/null 2>&1 & disown`, `sleep 1`}, ""},
		{"a job, after the session's last command", []string{`git init -q sub && git -C sub commit -q --allow-empty -m y &&
git update-index --add --cacheinfo 160000,$(git -C sub rev-parse HEAD),sub`,
			`(sleep 0.3; ` + fmtMonitor(monitor, "sub") + `; sleep 60) > /dev/null 2>&1 & disown; sleep 0.6`}, ""},
		// No index names these: git finds them when the user runs it there.
		{"a new repository deep in the project", []string{`git init -q src/a/b/c && ` + fmtMonitor(monitor, "src/a/b/c")}, "src/a/b/c"},
		{"a new repository, the user in a directory below it", []string{`mkdir -p src && git init -q src && mkdir -p src/pkg/x && ` + fmtMonitor(monitor, "src")}, "src/pkg/x"},
		{"a .git file into a git dir elsewhere in the project", []string{`mkdir -p .cache && git init -q --separate-git-dir=.cache/g docs && ` + fmtMonitor(monitor, "docs")}, "docs"},
		{"made, then its parent renamed", []string{`git init -q tmp1/sub && ` + fmtMonitor(monitor, "tmp1/sub") + ` && mv tmp1 lib`}, "lib/sub"},
		{"made by a job after its command", []string{`(sleep 0.3; git init -q later && ` + fmtMonitor(monitor, "later") + `) > /dev/null 2>&1 & disown`, `sleep 1`}, "later"},
		{"made by a job after the session's last command", []string{`(sleep 0.3; git init -q late && ` + fmtMonitor(monitor, "late") + ` && touch late.done; sleep 60) > /dev/null 2>&1 & disown`}, "late"},
		{"in the quarantine directory, beside what it holds", []string{`git init -q sub && ` + fmtMonitor(monitor, "sub"), `git init -q .shellgate-quarantine/evil && ` + fmtMonitor(monitor, ".shellgate-quarantine/evil")}, ".shellgate-quarantine/evil"},
		{"a bare repository whose work tree is elsewhere", []string{`mkdir -p w && git init -q --bare b && git -C b config core.bare false && git -C b config core.worktree ../w && ` + fmtMonitor(monitor, "b")}, "b"},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := gitLab(t)
			pwned := filepath.Join(l.base, "PWNED")
			s := start(t, quarantineSpec(l))
			for _, command := range c.commands {
				if out, code := run(t, s, l.root, command, "PWNED="+pwned, "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@b", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@b"); code != 0 {
					t.Fatalf("%s: exit %d\n%s", command, code, out)
				}
			}
			if c.at == "late" { // the job's work, after the command
				done := filepath.Join(l.root, "late.done")
				waitFor(t, "the job", func() bool { return exists(done) })
			}
			s.Close()
			if out, err := hostGit(t, l.home, filepath.Join(l.root, c.at), "status"); err != nil {
				t.Logf("git status: %v\n%s", err, out)
			}
			if exists(pwned) {
				t.Errorf("git status on the host in %q ran the nested repository's fsmonitor", c.at)
			}
		})
	}
}

// besideRoot makes a repository with one commit ("y") in the lab, beside
// the root, for commands to clone or add, and returns its path.
func besideRoot(l *lab, git func(dir string, args ...string), name string) string {
	dir := filepath.Join(l.shared, name)
	git(l.shared, "init", "-q", name)
	git(dir, "commit", "-q", "--allow-empty", "-m", "y")
	return dir
}

func fmtMonitor(format, dir string) string { return strings.Replace(format, "%s", dir, 1) }

// What a user or an ordinary command does with nested repositories is left
// as it is: the user's own, with an fsmonitor, from before the session (named
// by a gitlink, or deep in the project where none names it); a new one; a
// repository cloned into the project and added as a gitlink, whose config
// git wrote; one an approved command set an fsmonitor in.
func TestNestedRepositoriesLeftAlone(t *testing.T) {
	l := gitLab(t)
	git := func(dir string, args ...string) {
		if out, err := hostGit(t, l.home, dir, args...); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	own := filepath.Join(l.root, "own")
	git(l.root, "init", "-q", "own")
	git(own, "commit", "-q", "--allow-empty", "-m", "y")
	git(own, "config", "core.fsmonitor", "false")
	git(l.root, "add", "own")
	deep := filepath.Join(l.root, "a/b/c/d/deep") // no index names it
	git(l.root, "init", "-q", "a/b/c/d/deep")
	git(deep, "config", "core.fsmonitor", "false")
	must(t, os.WriteFile(filepath.Join(deep, ".git/hooks/pre-commit"), []byte("#!/bin/sh\nexit 0\n"), 0o755))
	upstream := besideRoot(l, git, "upstream")

	s := start(t, quarantineSpec(l))
	env := []string{"GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@b", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@b"}
	for _, command := range []string{
		`git -C own status --short && git clone -q ` + upstream + ` vendored && git add vendored && git commit -q -m vendored`,
		`git -C vendored log --oneline | grep -q y && git status --short`,
		`git -C a/b/c/d/deep status --short && git init -q fresh && git -C fresh commit -q --allow-empty -m y && git -C fresh config pull.rebase true`,
	} {
		if out, code := run(t, s, l.root, command, env...); code != 0 {
			t.Fatalf("%s: exit %d\n%s", command, code, out)
		}
	}
	if out, code := run(t, s, l.root, `git -C vendored config core.fsmonitor false`, append(env, KeepCreated)...); code != 0 {
		t.Fatalf("approved: exit %d\n%s", code, out)
	}
	run(t, s, l.root, "true", env...)
	s.Close()
	if !exists(filepath.Join(deep, ".git/hooks/pre-commit")) {
		t.Error("the user's own hook in a repository no index names was moved")
	}
	for _, config := range []string{"own/.git/config", "vendored/.git/config", "a/b/c/d/deep/.git/config"} {
		if b, err := os.ReadFile(filepath.Join(l.root, config)); err != nil || !strings.Contains(string(b), "fsmonitor") {
			t.Errorf("%s: %v %q", config, err, b)
		}
	}
	if q, _ := filepath.Glob(filepath.Join(l.root, ".shellgate-quarantine", "*")); len(q) > 0 {
		t.Errorf("quarantined %q", q)
	}
}

// What guardNested adds to every command's start and end in a project with
// nested repositories (three gitlinks, one two levels down), once their
// indexes are read: a few stat calls each. The first pass reads the indexes.
//
//	go test -run '^$' -bench GuardNested ./sandbox
func BenchmarkGuardNested(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("no git here")
	}
	root := b.TempDir()
	t := &testing.T{}
	for _, args := range [][]string{{"init", "-q"}, {"init", "-q", "a"}, {"init", "-q", "b"}, {"init", "-q", "a/c"}} {
		if out, err := hostGit(t, root, root, args...); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	oid := strings.Repeat("ab", 20)
	for _, c := range [][]string{{".", "a"}, {".", "b"}, {"a", "c"}} {
		if out, err := hostGit(t, root, filepath.Join(root, c[0]), "update-index", "--add", "--cacheinfo", "160000,"+oid+","+c[1]); err != nil {
			b.Fatalf("%v\n%s", err, out)
		}
	}
	m := newMounter(&Spec{Writable: []string{root}, Quarantine: filepath.Join(root, ".shellgate-quarantine")})
	no := func() bool { return false }
	if _, err := m.guardNested(passEnd, no); err != nil || len(m.nested.accepted) != 3 {
		b.Fatalf("first pass: %v, accepted %v", err, m.nested.accepted)
	}
	b.ResetTimer()
	for b.Loop() {
		m.guardNested(passEnd, no)
	}
}

// The hooks directory the root's own config names (core.hooksPath, a
// project's .githooks) and the fsmonitor script it names are protected like
// .git/hooks: a command cannot rewrite the hook the user's next commit runs.
func TestRootConfigHooksPathProtected(t *testing.T) {
	l := gitLab(t)
	must(t, os.MkdirAll(filepath.Join(l.root, ".githooks"), 0o755))
	must(t, os.WriteFile(filepath.Join(l.root, ".githooks", "pre-commit"), []byte("#!/bin/sh\nexit 0\n"), 0o755))
	must(t, os.WriteFile(filepath.Join(l.root, "fsmon.sh"), []byte("#!/bin/sh\n"), 0o755))
	// The hooks path set in a file the config includes.
	must(t, os.WriteFile(filepath.Join(l.root, "project.gitconfig"), []byte("[core]\n\thooksPath = .githooks\n"), 0o644))
	for _, kv := range [][]string{{"include.path", "../project.gitconfig"}, {"core.fsmonitor", "fsmon.sh"}} {
		if out, err := hostGit(t, l.home, l.root, "config", kv[0], kv[1]); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
	}
	s := start(t, quarantineSpec(l))
	for _, command := range []string{
		`echo 'touch PWNED' >> .githooks/pre-commit`,
		`printf '#!/bin/sh\ntouch PWNED\n' > .githooks/post-commit && chmod +x .githooks/post-commit`,
		`echo 'touch PWNED' >> fsmon.sh`,
		`printf '[core]\n\tfsmonitor = touch PWNED\n' >> project.gitconfig`,
		`python3 -c 'open(".githooks/pre-commit", "a").write("touch PWNED")'`,
	} {
		if out, code := run(t, s, l.root, command); code == 0 {
			t.Errorf("%s: succeeded\n%s", command, out)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(l.root, ".githooks", "pre-commit")); strings.Contains(string(b), "PWNED") {
		t.Error("the hook the root's core.hooksPath names was changed")
	}
}

// The built-in fsmonitor daemon (core.fsmonitor = true) names no script: no
// file called "true" becomes protected.
func TestGitRunsFromBooleanFsmonitor(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	root := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(root, ".git"), 0o755))
	must(t, os.WriteFile(filepath.Join(root, ".git", "config"), []byte("[core]\n\tfsmonitor = true\n\thooksPath = .githooks\n"), 0o644))
	if got, want := gitRunsFrom(root, os.Getenv("HOME")), []string{filepath.Join(root, ".githooks")}; !slices.Equal(got, want) {
		t.Errorf("gitRunsFrom = %q, want %q", got, want)
	}
}

// The user's global config is read where the session's helper runs, whose
// environment is its own: a relative core.hooksPath there is protected in
// the root as the root's own would be.
func TestGlobalHooksPathProtectedInSession(t *testing.T) {
	l := gitLab(t)
	must(t, os.WriteFile(filepath.Join(l.home, ".gitconfig"), []byte("[core]\n\thooksPath = .hooks\n"), 0o644))
	must(t, os.MkdirAll(filepath.Join(l.root, ".hooks"), 0o755))
	s := start(t, quarantineSpec(l))
	if out, code := run(t, s, l.root, `printf '#!/bin/sh\ntouch PWNED\n' > .hooks/pre-commit`); code == 0 {
		t.Errorf("wrote a hook into the directory the user's global core.hooksPath names\n%s", out)
	}
}

// A relative core.hooksPath in the user's global config names a directory in
// every project, this one included.
func TestGitRunsFromGlobalHooksPath(t *testing.T) {
	home, root := t.TempDir(), t.TempDir()
	must(t, os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[core]\n\thooksPath = .hooks\n"), 0o644))
	if got, want := gitRunsFrom(root, home), []string{filepath.Join(root, ".hooks")}; !slices.Equal(got, want) {
		t.Errorf("gitRunsFrom = %q, want %q", got, want)
	}
}
