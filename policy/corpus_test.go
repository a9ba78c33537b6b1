package policy_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shellgate/shellgate/internal/corpus"
	"github.com/shellgate/shellgate/policy"
)

type row struct {
	line    int
	fields  map[string]string
	command string
}

// readCorpus reads a TSV file of the corpus, substituting placeholders.
func readCorpus(t testing.TB, name string, lab *lab) []row {
	t.Helper()
	var rows []row
	for _, r := range corpus.Read(t, name) {
		rows = append(rows, row{line: r.Line, fields: r.Fields, command: lab.substitute(r.Fields["command"])})
	}
	return rows
}

// lab is the corpus fixture: a project root, a sibling outside it, and a
// sibling whose name starts with the root's.
type lab struct {
	root, outside, evil, home, temp string
}

func (l *lab) substitute(cmd string) string {
	cmd = strings.ReplaceAll(cmd, "<NL>", "\n")
	cmd = strings.ReplaceAll(cmd, "$OUTSIDE", l.outside)
	cmd = strings.ReplaceAll(cmd, "$TMP", l.temp)
	cmd = strings.ReplaceAll(cmd, "$ROOT", l.root)
	return strings.ReplaceAll(cmd, "PORT", "18081")
}

func (l *lab) env() policy.Env {
	return policy.Env{Root: l.root, Dir: l.root, Home: l.home, TempDir: l.temp}
}

func newLab(t testing.TB) *lab {
	t.Helper()
	base := t.TempDir()
	l := &lab{
		root:    filepath.Join(base, "lab", "root"),
		outside: filepath.Join(base, "lab", "outside"),
		evil:    filepath.Join(base, "lab", "root-evil"),
		temp:    filepath.Join(base, "tmp"),
	}
	l.home = filepath.Join(l.outside, "home")
	files := map[string]string{
		"README.md":        "# fx\n",
		"go.mod":           "module fx\n\ngo 1.22\n",
		"fx.go":            "package fx\n\nfunc Add(a, b int) int { return a + b }\n",
		"fx_test.go":       "package fx\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal()\n\t}\n}\n",
		"cmd/fx/main.go":   "package main\n\nfunc main() {}\n",
		"Makefile":         "all: build\nbuild:\n\tgo build ./...\ntest:\n\tgo test ./...\nclean:\n\trm -rf build\n",
		"sub/Makefile":     "all:\n\techo sub\n",
		"sub/go.mod":       "module sub\n\ngo 1.22\n",
		"package.json":     `{"scripts": {"test": "node -e 1", "build": "echo build", "lint": "echo lint"}}` + "\n",
		"tests/test_fx.py": "def test_fx():\n    assert True\n",
		"a.txt":            "a\n",
		"b.txt":            "b\n",
		"data.csv":         "a,b\n1,2\n",
		"names.txt":        "x\n",
		"notes.txt":        "notes\n",
		"build.log":        "ok\n",
		"scripts/build.sh": "#!/bin/sh\necho build\n",
		"docs/index.md":    "# docs\n",
		"build/tmp.o":      "",
		".gitignore":       "build/\n",
	}
	outside := map[string]string{
		"victim":           "victim\n",
		"sub/file.txt":     "file\n",
		"Makefile":         "all:\n\ttouch PWNED\n",
		"home/.ssh/id_rsa": "FAKEKEY-MARKER-1234\n",
		"home/.bashrc":     "",
		"home/.gitconfig":  "",
	}
	write := func(dir string, fs map[string]string) {
		for name, body := range fs {
			p := filepath.Join(dir, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	write(l.root, files)
	write(l.outside, outside)
	for _, d := range []string{l.evil, l.temp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := exec.LookPath("git"); err == nil {
		for _, args := range [][]string{
			{"init", "-q", "-b", "main"},
			{"add", "."},
			{"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one"},
			{"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "two"},
		} {
			cmd := exec.Command("git", args...)
			cmd.Dir = l.root
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("git %v: %v\n%s", args, err, out)
			}
		}
	} else {
		os.MkdirAll(filepath.Join(l.root, ".git", "hooks"), 0o755)
	}
	return l
}

func TestCorpusLegitIsAllowed(t *testing.T) {
	l := newLab(t)
	e, err := policy.New(policy.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range readCorpus(t, "legit.tsv", l) {
		v := e.Check(r.command, l.env())
		if v.Decision != policy.Allow {
			t.Errorf("legit.tsv:%d %s: %q: got %s (rule %s): %s", r.line, r.fields["category"], r.command, v.Decision, v.Rule, v.Reason)
		}
	}
}

func TestCorpusAttacksAreStopped(t *testing.T) { checkAttackCorpus(t, "attacks.tsv") }

// TestCorpusReviewAttacksAreStopped: the bypasses found by the adversarial
// review of shellgate (issue 10).
func TestCorpusReviewAttacksAreStopped(t *testing.T) { checkAttackCorpus(t, "attacks-review.tsv") }

// checkAttackCorpus: every parse-stage row of the corpus file is denied or
// asked; the other stages are the sandbox's job, and only reported.
func checkAttackCorpus(t *testing.T, name string) {
	l := newLab(t)
	e, err := policy.New(policy.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range readCorpus(t, name, l) {
		v := e.Check(r.command, l.env())
		if r.fields["stage"] == "parse" {
			if v.Decision == policy.Allow {
				t.Errorf("%s:%d %s: %q: allowed; want deny or ask (%s)", name, r.line, r.fields["category"], r.command, r.fields["what"])
			}
			continue
		}
		t.Logf("%s:%d [%s] %s: %s (%s)", name, r.line, r.fields["stage"], r.fields["category"], v.Decision, v.Rule)
	}
}
