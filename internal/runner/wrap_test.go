//go:build unix

package runner

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

// A Wrapper runs the rewritten argv, as a child in its own process group, and
// the wrapping program then runs the command: here env(1) stands for
// sandbox-exec.
func TestWrapperRewritesArgv(t *testing.T) {
	sh := bash(t)
	s := newSupervisor(t)
	var seen []string
	seenFiles := -1
	s.SetLauncher(Wrapper{Argv: func(argv []string, files int) []string {
		seen, seenFiles = argv, files
		return append([]string{"/usr/bin/env", "WRAPPED=yes"}, argv...)
	}})
	var out syncBuffer
	handed, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer handed.Close()
	res, err := s.Run(context.Background(), Spec{
		Argv:       []string{sh, "-c", `echo "$WRAPPED $(ps -o pgid= -p $$ | tr -d ' ') $$"`},
		Stdout:     &out,
		ExtraFiles: []*os.File{handed},
	})
	if err != nil {
		t.Fatal(err)
	}
	if seenFiles != 1 {
		t.Errorf("Argv told of %d handed descriptors, want 1", seenFiles)
	}
	if !slices.Equal(seen, []string{sh, "-c", `echo "$WRAPPED $(ps -o pgid= -p $$ | tr -d ' ') $$"`}) {
		t.Errorf("Argv got %q", seen)
	}
	var wrapped string
	var pgid, pid int
	if _, err := fmt.Sscan(out.String(), &wrapped, &pgid, &pid); err != nil {
		t.Fatalf("output %q: %v", out.String(), err)
	}
	if wrapped != "yes" {
		t.Errorf("the wrapper did not run: %q", out.String())
	}
	if pgid != res.PID || pid != res.PID {
		t.Errorf("command pid %d in group %d, want both %d (env execs the command in place)", pid, pgid, res.PID)
	}
}

// A Wrapper starts a terminal command rewritten too, on the terminal: the
// wrapping program and then the command have it as stdin and as their
// controlling terminal.
func TestWrapperTerminal(t *testing.T) {
	sh := bash(t)
	s := newSupervisor(t)
	s.SetLauncher(Wrapper{Argv: func(argv []string, _ int) []string {
		return append([]string{"/usr/bin/env", "WRAPPED=yes"}, argv...)
	}})
	r := startOnTerminal(t, s, Spec{}, sh, "-c", `echo "$WRAPPED"; test -t 0 && tty >/dev/null && echo on-a-tty`)
	if res := r.wait(t); res.ExitCode == nil || *res.ExitCode != 0 {
		t.Fatalf("exit %v %s", res.ExitCode, res.Signal)
	}
	r.waitOutput(t, "on-a-tty")
	if !strings.Contains(r.output.String(), "yes") {
		t.Errorf("the wrapper did not run: %q", r.output.String())
	}
}
