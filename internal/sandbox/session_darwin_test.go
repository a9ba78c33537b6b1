package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// On a Mac, the profile does what it says: run commands in a session and try
// each guarantee as a command would.
func TestSeatbeltSession(t *testing.T) {
	if _, err := os.Stat(SandboxExec); err != nil {
		t.Skipf("no %s: %v", SandboxExec, err)
	}
	home := t.TempDir()
	root := filepath.Join(home, "proj")
	secret := filepath.Join(home, ".ssh")
	for _, d := range []string{filepath.Join(root, ".git", "hooks"), secret} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(secret, "id"), []byte("KEY"), 0o600)
	tmp := filepath.Join(home, "tmp")
	os.Mkdir(tmp, 0o700)
	s, err := Start(Spec{
		Writable:  []string{root},
		Protected: []string{filepath.Join(root, ".git", "hooks")},
		Hidden:    []string{secret},
		TempDir:   tmp,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	run := func(script string) (string, bool) {
		r, w, _ := os.Pipe()
		p, err := s.Launch([]string{"/bin/sh", "-c", script}, []string{"PATH=/usr/bin:/bin"}, root, nil, w, w)
		w.Close()
		if err != nil {
			t.Fatal(err)
		}
		out := new(strings.Builder)
		buf := make([]byte, 4096)
		for {
			n, err := r.Read(buf)
			out.WriteString(string(buf[:n]))
			if err != nil {
				break
			}
		}
		r.Close()
		code, _ := p.Wait()
		return out.String(), code != nil && *code == 0
	}
	for _, tc := range []struct {
		script string
		ok     bool
	}{
		{"echo x > inside", true},
		{"echo x > " + filepath.Join(tmp, "t"), true},
		{"echo x > " + filepath.Join(home, "outside"), false},
		{"echo x > .git/hooks/pre-commit", false},
		{"mv .git g", false},
		{"cat " + filepath.Join(secret, "id"), false},
		{"echo x > /dev/null", true},
	} {
		if out, ok := run(tc.script); ok != tc.ok {
			t.Errorf("%s: succeeded %v, want %v: %s", tc.script, ok, tc.ok, out)
		}
	}
}
