package protect

import "testing"

func TestPythonVersions(t *testing.T) {
	for _, c := range []struct {
		data string
		want bool
	}{
		{"3.12\n", true}, // uv init
		{"3.12.4", true},
		{"3.13t\n", true},
		{"3.14+freethreaded\n", true},
		{"3.13.0rc2\n", true},
		{">=3.11,<3.13\n", true},
		{"cpython@3.12\n", true},
		{"pypy3.10\n", true},
		{"PyPy\n", true},
		{"# pinned\n3.12\n3.11\n", true}, // uv python pin --global lists several
		{"", true},
		{".venv/bin/python\n", false},
		{"/usr/bin/python3\n", false},
		{"3.12\n./tools/py\n", false},
		{"evil\n", false},  // a file or directory named so where uv runs
		{"3evil\n", false}, // no version: tried as a path
		{"system\n", false},
		{"python3.12\n", false}, // a program on PATH (.venv/bin once activated)
		{"~/py\n", false},
		{"3.12 ; x\n", false},
	} {
		if got := PythonVersions([]byte(c.data)); got != c.want {
			t.Errorf("PythonVersions(%q) = %v, want %v", c.data, got, c.want)
		}
	}
}
