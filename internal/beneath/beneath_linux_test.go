package beneath

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// Every symlink in .git goes but those of the object store, wherever it
// points; what a symlink points to is left as it was, and the notes say where
// each led.
func TestSweepGit(t *testing.T) {
	root := t.TempDir()
	victim := filepath.Join(t.TempDir(), "bashrc")
	must(t, os.WriteFile(victim, []byte("mine\n"), 0o644))
	for _, d := range []string{".git/logs", ".git/objects/pack", ".git/refs/heads"} {
		must(t, os.MkdirAll(filepath.Join(root, d), 0o755))
	}
	for _, l := range []string{".git/logs/HEAD", ".git/COMMIT_EDITMSG", ".git/refs/heads/x", ".git/objects/pack/p"} {
		must(t, os.Symlink(victim, filepath.Join(root, l)))
	}
	removed := SweepGit(root, nil)
	slices.Sort(removed)
	var want []string
	for _, p := range []string{".git/COMMIT_EDITMSG", ".git/logs/HEAD", ".git/refs/heads/x"} {
		want = append(want, "removed the symlink "+p+" (to "+victim+"), which git writes through")
	}
	if !slices.Equal(removed, want) {
		t.Errorf("removed %q, want %q", removed, want)
	}
	if _, err := os.Lstat(filepath.Join(root, ".git/objects/pack/p")); err != nil {
		t.Errorf("the object store's symlink went: %v", err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "mine\n" {
		t.Errorf("the target changed: %q", b)
	}
	// A .git that is itself a symlink is not walked: its target is elsewhere.
	other := t.TempDir()
	must(t, os.Symlink(filepath.Join(root, ".git"), filepath.Join(other, ".git")))
	if got := SweepGit(other, nil); len(got) != 0 {
		t.Errorf("walked through a symlinked .git: %q", got)
	}
}

// Open and Dir never follow a symlink or leave their directory, and Open
// refuses what could block (a FIFO).
func TestOpenAndDirStayBeneath(t *testing.T) {
	dir := t.TempDir()
	must(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "sub/f"), []byte("x"), 0o644))
	must(t, os.Symlink("/etc", filepath.Join(dir, "link")))
	must(t, syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644))
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	must(t, err)
	defer unix.Close(fd)
	if sub, err := Dir(fd, "sub"); err != nil {
		t.Errorf("Dir(sub): %v", err)
	} else {
		unix.Close(sub)
	}
	for _, rel := range []string{"link", "../", "sub/../.."} {
		if sub, err := Dir(fd, rel); err == nil {
			unix.Close(sub)
			t.Errorf("Dir(%q) opened", rel)
		}
	}
	if f, err := Open(fd, "sub/f", 0); err != nil {
		t.Errorf("Open(sub/f): %v", err)
	} else {
		f.Close()
	}
	for _, name := range []string{"fifo", "link", "sub"} {
		if f, err := Open(fd, name, 0); err == nil {
			f.Close()
			t.Errorf("Open(%q) opened it", name)
		}
	}
	// A directory only, opened without O_NONBLOCK (it never waits): not a
	// FIFO, which would block the open, nor a file or a symlink.
	if f, err := Open(fd, "sub", unix.O_DIRECTORY); err != nil {
		t.Errorf("Open(sub, O_DIRECTORY): %v", err)
	} else {
		names, err := f.Readdirnames(-1)
		if fl, _ := unix.FcntlInt(f.Fd(), unix.F_GETFL, 0); err != nil || len(names) != 1 || fl&unix.O_NONBLOCK != 0 {
			t.Errorf("sub lists %q (%v), flags %#x", names, err, fl)
		}
		f.Close()
	}
	for _, name := range []string{"fifo", "link", "sub/f"} {
		if f, err := Open(fd, name, unix.O_DIRECTORY); err == nil {
			f.Close()
			t.Errorf("Open(%q, O_DIRECTORY) opened it", name)
		}
	}
	if n := RandomName(); len(n) != 8 || n == RandomName() {
		t.Errorf("RandomName() = %q", n)
	}
}

// A file in .git that shares its inode with a name elsewhere (a package
// store's, linked into the root by pnpm) becomes a file of its own, in the
// root's .git and in a nested repository's, so that git appending to it
// leaves the other name as it was; the object stores' links stay, the root's
// and a submodule's (git never writes an object in place), but not a reflog's
// of a branch named objects/main; and a nested .git reached through a symlink
// is not walked.
func TestSweepGitHardLinks(t *testing.T) {
	root, store := t.TempDir(), t.TempDir()
	shared := filepath.Join(store, "index.js")
	must(t, os.WriteFile(shared, []byte("module.exports = 1\n"), 0o644))
	elsewhere := filepath.Join(store, "repo/.git")
	for _, d := range []string{".git/logs/refs/heads/objects", ".git/objects/pack", ".git/modules/lib/objects/pack",
		".git/modules/lib/logs/refs/heads/objects", "vendor/lib/.git/logs", "evil"} {
		must(t, os.MkdirAll(filepath.Join(root, d), 0o755))
	}
	must(t, os.MkdirAll(elsewhere, 0o755))
	copied := []string{".git/logs/HEAD", ".git/logs/refs/heads/objects/main", ".git/modules/lib/logs/refs/heads/objects/main",
		"vendor/lib/.git/COMMIT_EDITMSG", "vendor/lib/.git/logs/HEAD"}
	for _, l := range append([]string{".git/objects/pack/p.pack", ".git/modules/lib/objects/pack/p.pack"}, copied...) {
		must(t, os.Link(shared, filepath.Join(root, l)))
	}
	must(t, os.Link(shared, filepath.Join(elsewhere, "COMMIT_EDITMSG")))
	must(t, os.Symlink(filepath.Join(store, "repo"), filepath.Join(root, "evil/lib")))
	notes := SweepGit(root, []string{"vendor/lib/.git", "evil/lib/.git"})
	if len(notes) != len(copied) {
		t.Errorf("notes %q, want %d copies", notes, len(copied))
	}
	for _, l := range copied {
		p := filepath.Join(root, l)
		f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
		must(t, err)
		_, err = f.WriteString("0000 1111 user commit\n")
		must(t, err)
		must(t, f.Close())
		if b, _ := os.ReadFile(p); string(b) != "module.exports = 1\n0000 1111 user commit\n" {
			t.Errorf("%s holds %q", l, b)
		}
	}
	if b, _ := os.ReadFile(shared); string(b) != "module.exports = 1\n" {
		t.Errorf("git's write reached the store: %q", b)
	}
	var st syscall.Stat_t
	must(t, syscall.Stat(shared, &st))
	if st.Nlink != 4 { // the store's, the two object stores', and the one beside evil/lib's target
		t.Errorf("the store's file has %d names, want 4", st.Nlink)
	}
}

// No number of entries a command makes in .git, nor a depth git can name,
// hides a symlink from the sweep: 20001 files in a directory listed before
// COMMIT_EDITMSG, and a reflog twenty levels down (a branch a/b/…/t that a
// command made the current one).
func TestSweepGitHasNoBlindSpot(t *testing.T) {
	root := t.TempDir()
	victim := filepath.Join(t.TempDir(), "bashrc")
	must(t, os.WriteFile(victim, []byte("mine\n"), 0o644))
	junk := filepath.Join(root, ".git/bjunk")
	must(t, os.MkdirAll(junk, 0o755))
	for i := range 20001 {
		must(t, os.WriteFile(filepath.Join(junk, strconv.Itoa(i)), nil, 0o644))
	}
	deep := filepath.Join(root, ".git/logs/refs/heads/a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q/r/s")
	must(t, os.MkdirAll(deep, 0o755))
	for _, l := range []string{".git/COMMIT_EDITMSG", ".git/logs/refs/heads/a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q/r/s/t"} {
		must(t, os.Symlink(victim, filepath.Join(root, l)))
	}
	if removed := SweepGit(root, nil); len(removed) != 2 {
		t.Errorf("removed %q, want both symlinks", removed)
	}
	for _, l := range []string{".git/COMMIT_EDITMSG", ".git/logs/refs/heads/a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q/r/s/t"} {
		if _, err := os.Lstat(filepath.Join(root, l)); err == nil {
			t.Errorf("%s is still there", l)
		}
	}
}

// A GitSweeper skips a sweep only while nothing it looked at changed: what a
// command plants after a clean sweep is undone by the next one, in a
// directory made after the watches too, and a hard link made from outside .git
// to one of its files (which its directory's watch does not report).
func TestGitSweeperMissesNothing(t *testing.T) {
	root := t.TempDir()
	victim := filepath.Join(t.TempDir(), "bashrc")
	must(t, os.WriteFile(victim, []byte("mine\n"), 0o644))
	for _, d := range []string{".git/logs/refs/heads", ".git/objects/pack", ".git/refs/heads", ".git/hooks"} {
		must(t, os.MkdirAll(filepath.Join(root, d), 0o755))
	}
	for _, f := range []string{".git/HEAD", ".git/config", ".git/logs/HEAD", ".git/refs/heads/main"} {
		must(t, os.WriteFile(filepath.Join(root, f), []byte("x\n"), 0o644))
	}
	s := NewGitSweeper()
	defer s.Close()
	quiet := func(what string) {
		t.Helper()
		before := s.whole
		if got := s.Sweep(root, nil); len(got) != 0 {
			t.Fatalf("%s: undid %q", what, got)
		}
		if s.whole != before {
			t.Errorf("%s: swept again with nothing changed", what)
		}
	}
	catches := func(what string, plant func(), want int) {
		t.Helper()
		plant()
		if got := s.Sweep(root, nil); len(got) != want {
			t.Errorf("%s: undid %q, want %d", what, got, want)
		}
		s.Sweep(root, nil) // the sweep's own undoing is an event: whole once more
		quiet("after " + what)
	}
	if got := s.Sweep(root, nil); len(got) != 0 {
		t.Fatalf("the first sweep undid %q", got)
	}
	quiet("a second sweep")
	quiet("a third sweep")
	catches("a symlink in hooks", func() { must(t, os.Symlink(victim, filepath.Join(root, ".git/hooks/pre-commit"))) }, 1)
	catches("a symlink in a directory made since", func() {
		must(t, os.MkdirAll(filepath.Join(root, ".git/refs/heads/feature/deep"), 0o755))
		must(t, os.Symlink(victim, filepath.Join(root, ".git/refs/heads/feature/deep/x")))
	}, 1)
	catches("a symlink in a directory made by the last whole sweep's", func() {
		must(t, os.Symlink(victim, filepath.Join(root, ".git/refs/heads/feature/deep/y")))
	}, 1)
	catches("a hard link to .git/config made outside .git", func() {
		must(t, os.Link(filepath.Join(root, ".git/config"), filepath.Join(root, "config-too")))
	}, 1)
	catches("a hard link in .git to a file outside", func() {
		must(t, os.Link(victim, filepath.Join(root, ".git/logs/refs/heads/main")))
	}, 1)
	catches("a FIFO renamed in", func() {
		must(t, syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644))
		must(t, os.Rename(filepath.Join(root, "fifo"), filepath.Join(root, ".git/COMMIT_EDITMSG")))
	}, 1)
	catches("a directory with a symlink renamed in", func() {
		must(t, os.MkdirAll(filepath.Join(root, "d/e"), 0o755))
		must(t, os.Symlink(victim, filepath.Join(root, "d/e/l")))
		must(t, os.Rename(filepath.Join(root, "d"), filepath.Join(root, ".git/info")))
	}, 1)
	catches("a .git replaced", func() {
		must(t, os.Rename(filepath.Join(root, ".git"), filepath.Join(root, "old-git")))
		must(t, os.MkdirAll(filepath.Join(root, ".git/refs"), 0o755))
		must(t, os.Symlink(victim, filepath.Join(root, ".git/refs/l")))
	}, 1)
	// A root without .git: skipped until one appears, however it comes.
	for _, c := range []struct {
		name  string
		plant func()
	}{
		{"a .git made with a symlink in it", func() {
			must(t, os.MkdirAll(filepath.Join(root, ".git/hooks"), 0o755))
			must(t, os.Symlink(victim, filepath.Join(root, ".git/hooks/pre-commit")))
		}},
		{"a .git renamed in with a symlink in it", func() {
			must(t, os.MkdirAll(filepath.Join(root, "g/refs"), 0o755))
			must(t, os.Symlink(victim, filepath.Join(root, "g/refs/l")))
			must(t, os.Rename(filepath.Join(root, "g"), filepath.Join(root, ".git")))
		}},
	} {
		must(t, os.RemoveAll(filepath.Join(root, ".git")))
		s.Sweep(root, nil)
		quiet("a root without .git, before " + c.name)
		quiet("a root without .git, again")
		catches(c.name, c.plant, 1)
	}
	// Something it cannot sweep keeps every sweep whole: a .git that is a
	// symlink (to a directory elsewhere).
	must(t, os.RemoveAll(filepath.Join(root, ".git")))
	must(t, os.Symlink(t.TempDir(), filepath.Join(root, ".git")))
	s.Sweep(root, nil)
	before := s.whole
	s.Sweep(root, nil)
	if s.whole == before {
		t.Error("skipped a sweep of a root whose .git is a symlink")
	}
	must(t, os.Remove(filepath.Join(root, ".git")))
	// Other directories to sweep: whole again.
	must(t, os.MkdirAll(filepath.Join(root, ".git/refs"), 0o755))
	s.Sweep(root, nil)
	before = s.whole
	s.Sweep(root, []string{"sub/.git"})
	if s.whole == before {
		t.Error("skipped a sweep of other directories")
	}
	if b, _ := os.ReadFile(victim); string(b) != "mine\n" {
		t.Errorf("the target changed: %q", b)
	}
}

// A sweeper watching after three (a one-shot session's) sweeps whole three
// times and opens no inotify instance for them, whose close would wait for
// the kernel to free its marks, and still undoes what a command planted;
// from the fourth sweep on it watches, and skips what nothing changed.
func TestGitSweeperWatchingAfter(t *testing.T) {
	root := t.TempDir()
	victim := filepath.Join(t.TempDir(), "bashrc")
	must(t, os.WriteFile(victim, []byte("mine\n"), 0o644))
	s := NewGitSweeperWatchingAfter(3)
	defer s.Close()
	// A root without .git, then one with.
	if got := s.Sweep(root, nil); len(got) != 0 {
		t.Fatalf("the first sweep undid %q", got)
	}
	must(t, os.MkdirAll(filepath.Join(root, ".git/hooks"), 0o755))
	must(t, os.Symlink(victim, filepath.Join(root, ".git/hooks/pre-commit")))
	if got := s.Sweep(root, nil); len(got) != 1 {
		t.Errorf("a symlink in hooks: undid %q, want 1", got)
	}
	if got := s.Sweep(root, nil); len(got) != 0 {
		t.Errorf("a third sweep undid %q", got)
	}
	if s.whole != 3 {
		t.Errorf("%d whole sweeps of 3", s.whole)
	}
	if s.w.fd != -1 {
		t.Error("an inotify instance was opened by the first three sweeps")
	}
	s.Sweep(root, nil) // the fourth: whole, and watched
	if s.w.fd == -1 || !s.w.ok {
		t.Error("the fourth sweep watches nothing")
	}
	s.Sweep(root, nil)
	if s.whole != 4 {
		t.Errorf("a fifth sweep with nothing changed was whole (%d whole)", s.whole)
	}
}

// What goes to the quarantine is no repository for git there: a git
// directory's HEAD is renamed, so a prompt's git status while the user
// reviews it runs nothing its config says; anything else is left as it is.
func TestDefuseGitDir(t *testing.T) {
	tests := []struct {
		name    string
		entries []string // directories end in /
		defused bool
	}{
		{"git directory", []string{"HEAD", "objects/", "refs/", "config"}, true},
		{"linked worktree's", []string{"HEAD", "commondir"}, true},
		{"a HEAD alone", []string{"HEAD", "config"}, false},
		{"no HEAD", []string{"objects/", "refs/"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, e := range tt.entries {
				p := filepath.Join(dir, "g", e)
				must(t, os.MkdirAll(filepath.Dir(p), 0o755))
				if e[len(e)-1] == '/' {
					must(t, os.MkdirAll(p, 0o755))
				} else {
					must(t, os.WriteFile(p, []byte("x\n"), 0o644))
				}
			}
			fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
			must(t, err)
			defer unix.Close(fd)
			defuseGitDir(fd, "g")
			_, headErr := os.Lstat(filepath.Join(dir, "g", "HEAD"))
			_, movedErr := os.Lstat(filepath.Join(dir, "g", QuarantinedHEAD))
			if defused := headErr != nil && movedErr == nil; defused != tt.defused {
				t.Errorf("defused %v, want %v (HEAD: %v, %s: %v)", defused, tt.defused, headErr, QuarantinedHEAD, movedErr)
			}
		})
	}
	defuseGitDir(unix.AT_FDCWD, filepath.Join(t.TempDir(), "none")) // nothing there: no panic
}
