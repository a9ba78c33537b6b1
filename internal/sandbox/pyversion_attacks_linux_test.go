package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shellgate/shellgate/internal/lane"
)

// FINDING: uv runs the interpreter a line of .python-version names by path
// (.venv/evil/python), or a bare name that is a file or directory where it
// runs (build, with build/bin/python), as pdm does .pdm-python's; but
// `uv init` writes one too, a version. A .python-version a command makes is
// kept where it holds versions alone (as a copy of the bytes judged: a
// descriptor the command still holds writes nothing the host reads) and
// quarantined otherwise.
func TestAttackPythonVersionPath(t *testing.T) {
	lane.Live(t)
	for _, c := range []struct{ name, command, kept string }{
		{"uv init's version", `printf '3.12\n' > .python-version`, "3.12\n"},
		{"versions and a comment", `printf '# pinned\n3.12\ncpython@3.11\n' > .python-version`, "# pinned\n3.12\ncpython@3.11\n"},
		{"a path", `mkdir -p .venv/evil && printf '.venv/evil/python\n' > .python-version`, ""},
		{"an absolute path after a version", `printf '3.12\n/usr/local/evil/python\n' > .python-version`, ""},
		{"a bare name of a directory", `mkdir -p build/bin && printf 'build\n' > .python-version`, ""},
		{"renamed in", `printf './x\n' > v.tmp && mv v.tmp .python-version`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := newLab(t)
			spec := quarantineSpec(l)
			spec.Protected = append(spec.Protected, filepath.Join(l.root, ".python-version"))
			s := start(t, spec)
			if out, code := run(t, s, l.root, c.command); code != 0 {
				t.Fatalf("%s: %d\n%s", c.command, code, out)
			}
			b, err := os.ReadFile(filepath.Join(l.root, ".python-version"))
			if c.kept != "" && string(b) != c.kept {
				t.Errorf("the version file is %q (%v), want %q kept", b, err, c.kept)
			}
			if c.kept == "" && err == nil {
				t.Errorf("the host's uv reads %q", b)
			}
			s.Close()
			got, _ := filepath.Glob(filepath.Join(l.root, ".shellgate-quarantine", "[0-9]*", ".python-version"))
			if (c.kept == "") != (len(got) == 1) {
				t.Errorf("quarantined: %v", got)
			}
		})
	}
	t.Run("written after its judgement", func(t *testing.T) {
		l := newLab(t)
		spec := quarantineSpec(l)
		spec.Protected = append(spec.Protected, filepath.Join(l.root, ".python-version"))
		s := start(t, spec)
		vf, goOn, written := filepath.Join(l.root, ".python-version"), filepath.Join(l.root, "go-on"), filepath.Join(l.root, "written")
		launched, out := launch(t, s, l.root, `exec 3>.python-version; printf '3.12\n' >&3
(until [ -e go-on ]; do sleep 0.02; done; printf '/usr/local/evil/python\n' >&3; touch written) >/dev/null 2>&1 &`)
		if code, sig := launched.Wait(); code == nil || *code != 0 {
			t.Fatalf("%v %v\n%s", code, sig, out())
		}
		waitFor(t, "the version file in place", func() bool { b, _ := os.ReadFile(vf); return string(b) == "3.12\n" })
		must(t, os.WriteFile(goOn, nil, 0o644))
		waitFor(t, "the job's write", func() bool { return exists(written) })
		if b, _ := os.ReadFile(vf); strings.Contains(string(b), "/") {
			t.Errorf("the job wrote the version file the host reads: %q", b)
		}
	})
}
