package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// reaperArgs, in the environment, makes TestReaperChild a subreaper that runs
// the command it names (JSON) and reports how many orphans it inherited.
const reaperArgs = "SHELLGATE_TEST_REAPER_ARGS"

// A one-shot run starts its sandbox helper while it initialises, before it
// knows whether the command may run: a refused command, or one run without
// the sandbox after all, must not leave that helper behind — it is gone when
// shellgate exits, not killed afterwards by its parent-death signal. A
// subreaper inherits whatever outlives shellgate: it must inherit nothing.
func TestRunLeavesNoHelperBehind(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t)
	root := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		want string // in stdout
	}{
		{"refused", []string{"run", "--json", "--root", root, "--", "rm -rf /"}, `"status": "error"`},
		{"allowed", []string{"run", "--json", "--root", root, "--", "echo hi"}, `"status": "success"`},
		{"sandbox off in the configuration", []string{"run", "--json", "--root", root, "--config", sandboxOffConfig(t), "--", "echo hi"}, `"sandbox": "off"`},
		{"network allowed in the configuration", []string{"run", "--json", "--root", root, "--config", networkConfig(t), "--", "echo hi"}, `"status": "success"`},
		{"usage error", []string{"run", "--json", "--root", root, "--timeout", "0s", "--", "echo hi"}, `"status": "error"`},
		{"exec refused", []string{"exec", "--root", root, "rm -rf /"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			argv, _ := json.Marshal(append([]string{bin}, tc.args...))
			cmd := exec.Command(os.Args[0], "-test.run=^TestReaperChild$", "-test.v")
			cmd.Env = append(os.Environ(), reaperArgs+"="+string(argv), "HOME="+t.TempDir(), "XDG_CONFIG_HOME="+t.TempDir())
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("reaper: %v\n%s", err, out)
			}
			if !strings.Contains(string(out), "orphans: 0\n") {
				t.Errorf("shellgate left processes behind:\n%s", out)
			}
			if !strings.Contains(string(out), tc.want) {
				t.Errorf("output lacks %q:\n%s", tc.want, out)
			}
		})
	}
}

func sandboxOffConfig(t *testing.T) string {
	p := t.TempDir() + "/off.toml"
	os.WriteFile(p, []byte("[sandbox]\nmode = \"off\"\n"), 0o600)
	return p
}

func networkConfig(t *testing.T) string {
	p := t.TempDir() + "/net.toml"
	os.WriteFile(p, []byte("[policy]\nnetwork = true\n"), 0o600)
	return p
}

// TestReaperChild is TestRunLeavesNoHelperBehind's subreaper, in a process of
// its own (being one is for the whole process, and for good).
func TestReaperChild(t *testing.T) {
	spec := os.Getenv(reaperArgs)
	if spec == "" {
		t.Skip("run by TestRunLeavesNoHelperBehind")
	}
	var argv []string
	if err := json.Unmarshal([]byte(spec), &argv); err != nil {
		t.Fatal(err)
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		t.Skipf("no subreaper: %v", err)
	}
	out, _ := exec.Command(argv[0], argv[1:]...).Output() // its exit status is the command's business
	fmt.Printf("%s\n", out)
	// Orphans were reparented here as shellgate exited; a killed one may not
	// have exited yet. Reap what comes for a moment after the last one.
	orphans := 0
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); {
		pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
		switch {
		case errors.Is(err, syscall.ECHILD):
			fmt.Printf("orphans: %d\n", orphans)
			return
		case pid > 0:
			orphans++
		default:
			time.Sleep(time.Millisecond)
		}
	}
	fmt.Printf("orphans: %d and some still running\n", orphans)
}
