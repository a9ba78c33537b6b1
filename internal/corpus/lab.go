package corpus

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Lab is the corpus's fixture (see testdata/corpus/README.md): a project root
// that is a git repository with two commits, a sibling outside it with a victim
// file and a fake home holding a fake key, and a sibling whose name starts with
// the root's.
type Lab struct {
	Base, Root, Outside, Evil, Home, Temp string
}

// FakeKey is in the lab's fake secrets; it must never reach a command's output.
const FakeKey = "FAKEKEY-MARKER-1234"

// NewLab builds a fresh lab under base.
func NewLab(tb testing.TB, base string) *Lab {
	tb.Helper()
	l := &Lab{
		Base:    filepath.Join(base, "lab"),
		Root:    filepath.Join(base, "lab", "root"),
		Outside: filepath.Join(base, "lab", "outside"),
		Evil:    filepath.Join(base, "lab", "root-evil"),
		Temp:    filepath.Join(base, "tmp"),
	}
	l.Home = filepath.Join(l.Outside, "home")
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
		"home/.ssh/id_rsa": FakeKey + "\n",
		"home/.bashrc":     "",
		"home/.gitconfig":  "",
	}
	write := func(dir string, fs map[string]string) {
		for name, body := range fs {
			p := filepath.Join(dir, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				tb.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				tb.Fatal(err)
			}
		}
	}
	write(l.Root, files)
	write(l.Outside, outside)
	for _, d := range []string{l.Evil, l.Temp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			tb.Fatal(err)
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
			cmd.Dir = l.Root
			if out, err := cmd.CombinedOutput(); err != nil {
				tb.Fatalf("git %v: %v\n%s", args, err, out)
			}
		}
	} else {
		os.MkdirAll(filepath.Join(l.Root, ".git", "hooks"), 0o755)
	}
	return l
}

// Substitute fills in a row's placeholders: <NL>, $OUTSIDE, $ROOT, and PORT (the
// listener's port).
func (l *Lab) Substitute(cmd string, port int) string {
	cmd = strings.ReplaceAll(cmd, "<NL>", "\n")
	cmd = strings.ReplaceAll(cmd, "$OUTSIDE", l.Outside)
	cmd = strings.ReplaceAll(cmd, "$TMP", l.Temp)
	cmd = strings.ReplaceAll(cmd, "$ROOT", l.Root)
	return strings.ReplaceAll(cmd, "PORT", strconv.Itoa(port))
}
