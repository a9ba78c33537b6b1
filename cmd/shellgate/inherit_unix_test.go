//go:build unix

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shellgate/shellgate/internal/lane"
)

// A descriptor the agent left open across exec when it started shellgate (its
// own log, outside the project) reaches no command, with the sandbox or
// without: shellgate hands a command its standard files and nothing else.
func TestRunHandsNoInheritedDescriptor(t *testing.T) {
	lane.Live(t)
	bin := buildBinary(t)
	lab, err := os.MkdirTemp("/var/tmp", "shellgate-inherit-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(lab) })
	root, home := filepath.Join(lab, "root"), filepath.Join(lab, "home")
	for _, d := range []string{root, home} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "fd3.py"), []byte("import os\nos.write(3, b\"pwned\")\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"auto", "off"} {
		t.Run("sandbox="+mode, func(t *testing.T) {
			victim, err := os.Create(filepath.Join(lab, "agent-"+mode+".log"))
			if err != nil {
				t.Fatal(err)
			}
			defer victim.Close()
			// A file of the project, not python3 -c, which is asked about
			// without a sandbox.
			cmd := exec.Command(bin, "run", "--sandbox", mode, "--root", root, "--",
				`echo pwned >&3; python3 fd3.py`)
			cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"))
			cmd.ExtraFiles = []*os.File{victim} // fd 3 in shellgate, open across exec
			out, _ := cmd.CombinedOutput()
			if b, _ := os.ReadFile(victim.Name()); len(b) != 0 {
				t.Errorf("a command wrote through shellgate's inherited descriptor 3: %q\n%s", b, out)
			}
			if !strings.Contains(string(out), "Bad file descriptor") { // the shell's word for no fd 3
				t.Errorf("the command ran with a descriptor 3: %s", out)
			}
		})
	}
}
