package helper

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/shellgate/shellgate/internal/protect"
)

// A workspace file at the root is found however many entries a command made
// there first: 40 000 files, which the directory may list before it.
func TestRootMatchesEveryEntry(t *testing.T) {
	root := t.TempDir()
	for i := range 40000 {
		if err := os.WriteFile(filepath.Join(root, "j"+strconv.Itoa(i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var want []string
	for _, n := range []string{"a.code-workspace", "f.code-workspace", "z.code-workspace"} {
		p := filepath.Join(root, n)
		if err := os.WriteFile(p, []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
		want = append(want, p)
	}
	m := newMounter(&Spec{Writable: []string{root}, Patterns: []string{"*.code-workspace"}})
	got := m.rootMatches(m.listRoot())
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("matched %q, want %q", got, want)
	}
}

// rootMatches names the root's entries that match a pattern, exactly as
// filepath.Match says, whatever literal text begins and ends the pattern.
func TestRootMatchesAsMatch(t *testing.T) {
	root := t.TempDir()
	patterns := append(protect.RootPatterns(), "exact", "a?b", "[mx]ise.toml", `lit\*.x`, "ab*ba", "q*", "*")
	names := []string{"a.code-workspace", ".code-workspace", "code-workspace", "lefthook.yml", "lefthook.", "lefthook", ".lefthook.yaml",
		"mise.local.toml", "mise.toml", ".mise.x.toml", "exact", "exactly", "aXb", "ab", "mise.toml", "xise.toml", "lit*.x", "litx.x",
		"aba", "abba", "ab-ba", "q", "src", "README.md"}
	m := newMounter(&Spec{Writable: []string{root}, Patterns: patterns})
	var want []string
	for _, n := range names {
		for _, pat := range patterns {
			if ok, _ := filepath.Match(pat, n); ok {
				want = append(want, filepath.Join(root, n))
				break
			}
		}
	}
	if got := m.rootMatches(rootListing{names: names}); !slices.Equal(got, want) {
		t.Errorf("matched %q, want %q", got, want)
	}
	patterns = patterns[:len(patterns)-1] // without "*"
	m = newMounter(&Spec{Writable: []string{root}, Patterns: patterns})
	want = want[:0]
	for _, n := range names {
		for _, pat := range patterns {
			if ok, _ := filepath.Match(pat, n); ok {
				want = append(want, filepath.Join(root, n))
				break
			}
		}
	}
	if got := m.rootMatches(rootListing{names: names}); !slices.Equal(got, want) {
		t.Errorf("without *: matched %q, want %q", got, want)
	}
}

// The git directories swept as the root's .git are those of the nested
// repositories kept read-only: a .git directory's, or the one a .git file
// names elsewhere in the root; not one outside the root (read-only there),
// nor the root's own or its submodules' (swept with it), nor a directory
// that is no repository's.
func TestNestedGitDirs(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	files := map[string]string{
		"vendor/lib/.git/config": "",
		"vendor/lib/.git/hooks":  "",
		"sep/.git":               "gitdir: ../.gitdirs/sep\n",
		"abs/.git":               "gitdir: " + filepath.Join(root, ".gitdirs/abs") + "\n",
		"out/.git":               "gitdir: " + outside + "\n",
		"sub/.git":               "gitdir: ../.git/modules/sub\n",
		"up/.git":                "gitdir: ../../elsewhere\n",
		"junk/.git":              "not a gitdir line\n",
		"packages/app/.claude":   "",
		".git/config":            "",
	}
	m := newMounter(&Spec{Writable: []string{root}})
	for name, body := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		m.noteNestedGit(p)
	}
	slices.Sort(m.nestedGit)
	if want := []string{".gitdirs/abs", ".gitdirs/sep", "vendor/lib/.git"}; !slices.Equal(m.nestedGit, want) {
		t.Errorf("swept %q, want %q", m.nestedGit, want)
	}
}

// A root whose .git is a file naming a git directory inside it has that
// directory swept, as a .git directory would be.
func TestRootGitFileDirSwept(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, ".git"), []byte("gitdir: .rootgit\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if m := newMounter(&Spec{Writable: []string{root}}); !slices.Equal(m.nestedGit, []string{".rootgit"}) {
		t.Errorf("swept %q, want .rootgit", m.nestedGit)
	}
}

// protect looks only at the protected paths whose entry in the root was
// there when it listed the root in one go; a root too large for one listing
// has every path looked at, as before.
func TestRootListingSnapshot(t *testing.T) {
	root := t.TempDir()
	for _, n := range []string{".vscode", "src"} {
		if err := os.Mkdir(filepath.Join(root, n), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	m := newMounter(&Spec{Writable: []string{root}})
	l := m.listRoot()
	for p, want := range map[string]bool{
		filepath.Join(root, ".vscode"):          true,
		filepath.Join(root, ".vscode/settings"): true,
		filepath.Join(root, ".git/hooks"):       false,
		filepath.Join(root, ".envrc"):           false,
		"/elsewhere/.git/config":                true, // not in the root: looked at
	} {
		if got := m.mayExist(l, p); got != want {
			t.Errorf("mayExist(%s) = %v, want %v", p, got, want)
		}
	}
	// The paths protect looks at are those mayExist allows, in the spec's
	// order, whatever the root lists.
	m.spec.Protected = []string{filepath.Join(root, ".git/hooks"), "/elsewhere/.git/config", filepath.Join(root, ".vscode/settings"),
		filepath.Join(root, ".envrc"), filepath.Join(root, ".vscode"), filepath.Join(root, "src/.envrc"), root}
	for _, names := range [][]string{nil, {".vscode", "src"}, {"src", ".git", ".vscode", "other"}, {".envrc"}} {
		l := rootListing{names: names, present: map[string]bool{}}
		for _, n := range names {
			l.present[n] = true
		}
		want := slices.DeleteFunc(slices.Clone(m.spec.Protected), func(p string) bool { return !m.mayExist(l, p) })
		if got := m.mayExistProtected(l); !slices.Equal(got, want) {
			t.Errorf("root listing %q: protected paths looked at %q, want %q", names, got, want)
		}
	}
	for i := range 5000 {
		if err := os.WriteFile(filepath.Join(root, "j"+strconv.Itoa(i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if l := m.listRoot(); l.present != nil || !m.mayExist(l, filepath.Join(root, ".envrc")) || len(l.names) != 5002 {
		t.Errorf("a root of 5 002 entries: snapshot %v, %d names; want none, every name", l.present != nil, len(l.names))
	} else if got := m.mayExistProtected(l); !slices.Equal(got, m.spec.Protected) {
		t.Errorf("a root of 5 002 entries: protected paths looked at %q, want every one", got)
	}
}
