package shellstate

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// bash, run with the prologue, reports where it ended and what it exported;
// the command's own fd 3 is not the report's.
func TestReportFromBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, exports := range []bool{false, true} {
		rep, w, err := NewReport()
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bash, "-c", Prologue(exports)+`cd "$1" && export SG_A='x y' && unset SG_GONE; echo not-a-report >&3`, "bash", dir)
		cmd.Env = append(os.Environ(), "SG_GONE=1")
		cmd.ExtraFiles = []*os.File{w}
		out, err := cmd.CombinedOutput()
		w.Close()
		if err == nil {
			t.Errorf("exports %v: the command's echo to fd 3 succeeded: it wrote to the report (%s)", exports, out)
		}
		got, vars, ok := Parse(rep.Take())
		if !ok || got != dir {
			t.Fatalf("exports %v: report dir %q ok %v, want %q", exports, got, ok, dir)
		}
		_, gone := vars["SG_GONE"]
		if exports && (vars["SG_A"] != "x y" || gone) || !exports && len(vars) != 0 {
			t.Errorf("exports %v: vars %q", exports, vars)
		}
	}
}

// A report without its NUL is no report; names that are not variables are
// dropped.
func TestParse(t *testing.T) {
	if _, _, ok := Parse([]byte("/half/written")); ok {
		t.Error("a report without a NUL after the directory was taken")
	}
	dir, vars, ok := Parse([]byte("/p\x00A=1\x00B==2\x00not a name=3\x00noequals\x00"))
	if !ok || dir != "/p" || len(vars) != 2 || vars["A"] != "1" || vars["B"] != "=2" {
		t.Errorf("Parse: %q %q %v", dir, vars, ok)
	}
}

// What a command exported goes to the next commands, what it unset is
// unset for them, and the shell's, shellgate's and loaders' variables never
// go.
func TestExportsCarry(t *testing.T) {
	var e Exports
	if got := e.Apply([]string{"A=1"}); !slices.Equal(got, []string{"A=1"}) {
		t.Errorf("nothing carried yet: %q", got)
	}
	given := []string{"A=1", "B=2", "GONE=x", "PATH=/bin", "HOME=/h"}
	e.Carry(given, map[string]string{
		"A": "1", "B": "3", "C": "4", "PATH": "/bin", "HOME": "/elsewhere",
		"LD_PRELOAD": "/x.so", "BASH_FUNC_f%%": "() { :; }", "SHELLGATE_X": "1", "PWD": "/p",
	})
	got := e.Apply(given)
	slices.Sort(got)
	want := []string{"A=1", "B=3", "C=4", "HOME=/h", "PATH=/bin"}
	if !slices.Equal(got, want) {
		t.Errorf("Apply = %q, want %q", got, want)
	}
}
