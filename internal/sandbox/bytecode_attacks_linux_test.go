package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shellgate/shellgate/internal/lane"
)

// FINDING: a .pyc carries its source's mtime and size, not its text. A
// command wrote __pycache__/util.cpython-3X.pyc (or a json.pyc with no
// source, which shadows the module) holding other code with util.py's mtime
// and size; util.py, git diff and git status (.gitignore's __pycache__/ and
// *.py[cod]) showed nothing, and the user's python on the host ran the
// command's code. No command makes, writes, renames or links a .pyc in the
// root now, nor makes __pycache__ a link or renames a directory onto it.
func TestAttackForgedBytecode(t *testing.T) {
	lane.Live(t)
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 here")
	}
	for _, c := range []struct{ name, command string }{
		{"made", `mkdir -p __pycache__ && cp "$FORGED" "$PYC"`},
		{"written in place", `cat "$FORGED" > "$PYC"`},
		{"renamed onto", `cp "$FORGED" x.tmp && mv -f x.tmp "$PYC"`},
		{"hard link", `cp "$FORGED" x.tmp && ln -f x.tmp "$PYC"`},
		{"symlink", `cp "$FORGED" x.tmp && ln -sf ../x.tmp "$PYC"`},
		{"directory renamed in", `mkdir -p /tmp/d && cp "$FORGED" "/tmp/d/${PYC#__pycache__/}" && rm -rf __pycache__ && mv /tmp/d __pycache__`},
		{"directory linked", `cp -r __pycache__ d && cp "$FORGED" x.tmp; rm -rf __pycache__ && ln -s d __pycache__ && cp x.tmp "d/${PYC#__pycache__/}"`},
		{"no source", `cp "$FORGED" json.pyc`},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := newLab(t)
			pwned := filepath.Join(l.outside, "PWNED")
			for name, text := range map[string]string{
				"util.py": "def greet():\n    return 'hi'\n",
				"app.py":  "import json, util\nprint(util.greet())\n",
			} {
				must(t, os.WriteFile(filepath.Join(l.root, name), []byte(text), 0o644))
			}
			// The user ran the app once: a genuine cache is there.
			hostPython := func(args ...string) string {
				cmd := exec.Command(py, args...)
				cmd.Dir, cmd.Env = l.root, []string{"PATH=" + os.Getenv("PATH"), "HOME=" + l.home}
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("python3 %v: %v\n%s", args, err, out)
				}
				return strings.TrimSpace(string(out))
			}
			hostPython("app.py")
			pyc := hostPython("-c", "import importlib.util as u; print(u.cache_from_source('util.py'))")
			if !exists(filepath.Join(l.root, pyc)) {
				t.Fatalf("the host's python left no %s", pyc)
			}
			// Code that is not util.py's, with its mtime and size.
			forged := filepath.Join(l.shared, "forged.pyc")
			hostPython("-c", `import importlib.util as u, marshal, os, struct, sys
st = os.stat("util.py")
code = compile("open(%r, 'w').close()\ndef greet():\n    return 'hi'\n" % sys.argv[2], "util.py", "exec")
open(sys.argv[1], "wb").write(u.MAGIC_NUMBER + struct.pack("<III", 0, int(st.st_mtime) & 0xFFFFFFFF, st.st_size) + marshal.dumps(code))`, forged, pwned)
			s := start(t, quarantineSpec(l))
			out, _ := run(t, s, l.root, c.command, "FORGED="+forged, "PYC="+pyc)
			s.Close()
			if got := hostPython("app.py"); got != "hi" {
				t.Errorf("the app printed %q", got)
			}
			if exists(pwned) {
				t.Errorf("the host's python ran the command's bytecode (%s)\n%s", c.command, out)
			}
			// A cache may still be removed.
			s = start(t, quarantineSpec(l))
			if out, code := run(t, s, l.root, `find . -name '*.pyc' -delete && rm -rf __pycache__`); code != 0 {
				t.Errorf("removing the caches: %d\n%s", code, out)
			}
			if exists(filepath.Join(l.root, pyc)) {
				t.Errorf("%s is still there", pyc)
			}
		})
	}
}
