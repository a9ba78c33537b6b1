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
	writeFiles(tb, l.Root, files)
	writeFiles(tb, l.Outside, outside)
	for _, d := range []string{l.Evil, l.Temp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			tb.Fatal(err)
		}
	}
	if _, err := exec.LookPath("git"); err == nil {
		gitRepo(tb, l.Root)
	} else {
		os.MkdirAll(filepath.Join(l.Root, ".git", "hooks"), 0o755)
	}
	return l
}

// gitRepo makes dir a git repository on main with two commits, the first of
// everything in it.
func gitRepo(tb testing.TB, dir string) {
	tb.Helper()
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"add", "."},
		{"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one"},
		{"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "two"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			tb.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

// writeFiles writes files (name → content) under dir, making their directories.
func writeFiles(tb testing.TB, dir string, files map[string]string) {
	tb.Helper()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
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

// SandboxLab is the fixture of attacks-sandbox.tsv (see testdata/corpus/README.md),
// in $LAB = Base: a project root that is a git repository with two commits, a
// sibling outside it with a victim and another project, a fake home with
// marker secrets, the directories a row's listeners and measurements go to,
// and $TOOLS, the helper files a row's setup installs.
type SandboxLab struct {
	*Lab
	Net, Live, Tools string
}

// Markers in the sandbox lab's fake secrets, each naming where it is.
var sandboxHome = map[string]string{
	".ssh/id_rsa":                  "-----BEGIN OPENSSH PRIVATE KEY-----\nFAKE-SSH-MARKER " + FakeKey + "\n-----END OPENSSH PRIVATE KEY-----\n",
	".ssh/config":                  "Host *\n  IdentityFile ~/.ssh/id_rsa\n",
	".aws/credentials":             "[default]\naws_access_key_id = AKIAFAKE\naws_secret_access_key = FAKE-AWS-MARKER\n",
	".bash_history":                "export DB_PASSWORD=FAKE-HIST-MARKER\nls\n",
	".codex/auth.json":             `{"OPENAI_API_KEY": "FAKE-CODEX-MARKER"}` + "\n",
	".claude/.credentials.json":    `{"claudeAiOauth": {"accessToken": "FAKE-CLAUDE-MARKER"}}` + "\n",
	".gemini/oauth_creds.json":     `{"access_token": "FAKE-GEMINI-MARKER"}` + "\n",
	".config/rclone/rclone.conf":   "[s3]\ntype = s3\nsecret_access_key = FAKE-RCLONE-MARKER\n",
	".docker/config.json":          `{"auths": {"registry.example": {"auth": "FAKE-DOCKER-MARKER"}}}` + "\n",
	".npmrc":                       "//registry.npmjs.org/:_authToken=FAKE-NPMRC-MARKER\n",
	".netrc":                       "machine api.example login u password FAKE-NETRC-MARKER\n",
	".git-credentials":             "https://u:FAKE-GITCRED-MARKER@github.com\n",
	".bashrc":                      "# ~/.bashrc\nalias ll='ls -l'\n",
	".profile":                     "# ~/.profile\n",
	".gitconfig":                   "[user]\n\tname = Lab User\n\temail = user@lab.example\n[init]\n\tdefaultBranch = main\n",
	".npm/_cacache/index":          "",
	".cache/pip/http/index":        "",
	".local/share/pnpm/.keep":      "",
	".local/state/shellgate/.keep": "",
}

// lintStaged stands for lint-staged in the pre-commit hook a row's setup
// installs ($TOOLS/hooks/lintstaged-pre-commit): it runs each command of the
// project's .lintstagedrc.json, as lint-staged runs them on the staged files.
const lintStaged = `#!/usr/bin/env python3
import json, os, subprocess
if os.path.exists(".lintstagedrc.json"):
    for cmd in json.load(open(".lintstagedrc.json")).values():
        subprocess.run(cmd, shell=True)
`

// NewSandboxLab builds a fresh lab of attacks-sandbox.tsv under base, which must
// not be under /tmp (the sandbox hides it: a victim there proves nothing).
// The root holds little, so that rows may create what they like in it (sub/,
// docs/, …); its node_modules is ignored, as a project's is.
func NewSandboxLab(tb testing.TB, base string) *SandboxLab {
	tb.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		tb.Skip("the sandbox lab's root is a git repository, and git is not installed")
	}
	lab := filepath.Join(base, "lab")
	l := &SandboxLab{
		Lab: &Lab{Base: lab, Root: filepath.Join(lab, "root"), Outside: filepath.Join(lab, "outside"),
			Home: filepath.Join(lab, "home"), Temp: filepath.Join(lab, "tmp")},
		Net: filepath.Join(lab, "net"), Live: filepath.Join(lab, "live"), Tools: filepath.Join(lab, "tools"),
	}
	writeFiles(tb, l.Root, map[string]string{
		"README.md":    "# lab\n\nA project.\n",
		".gitignore":   "node_modules/\n",
		"package.json": `{"name": "lab", "version": "1.0.0", "private": true}` + "\n",
		"main.py":      "print('hello')\n",
	})
	gitRepo(tb, l.Root)
	writeFiles(tb, l.Home, sandboxHome)
	writeFiles(tb, l.Outside, map[string]string{
		"victim":              "victim\n",
		"sub/f":               "f\n",
		"otherproj/README.md": "# another project\n",
		"otherproj/node_modules/left-pad/index.js": "module.exports = (s, n) => s.padStart(n)\n",
	})
	writeFiles(tb, l.Tools, map[string]string{"hooks/lintstaged-pre-commit": lintStaged})
	// pnpm links a package into every project from one store: the root's copy
	// is a hard link to the other project's.
	link := filepath.Join(l.Root, "node_modules/.pnpm/left-pad@1.3.0/node_modules/left-pad/index.js")
	for _, err := range []error{
		os.MkdirAll(filepath.Dir(link), 0o755),
		os.Link(filepath.Join(l.Outside, "otherproj/node_modules/left-pad/index.js"), link),
		os.MkdirAll(l.Net, 0o755),
		os.MkdirAll(l.Live, 0o755),
		os.MkdirAll(l.Temp, 0o755),
		os.Chmod(filepath.Join(l.Home, ".ssh/id_rsa"), 0o600),
	} {
		if err != nil {
			tb.Fatal(err)
		}
	}
	return l
}

// Substitute fills in a sandbox row's placeholders: <NL>, $LAB, $ROOT,
// $OUTSIDE, $HOME, $TOOLS, and $SG (the shellgate binary). The user's spill
// directory, /tmp/shellgate-spill-UID in a row, is the one in the lab's temp
// directory: the test gives shellgate TMPDIR=l.Temp, so that nothing it
// writes lands in the host's /tmp, where other sessions' spill files are.
func (l *SandboxLab) Substitute(s, shellgate string) string {
	return strings.NewReplacer("<NL>", "\n", "$LAB", l.Base, "$ROOT", l.Root, "$OUTSIDE", l.Outside,
		"$HOME", l.Home, "$TOOLS", l.Tools, "$SG", shellgate,
		"/tmp/shellgate-spill-", filepath.Join(l.Temp, "shellgate-spill-")).Replace(s)
}
