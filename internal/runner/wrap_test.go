//go:build unix

package runner

import (
	"context"
	"fmt"
	"slices"
	"testing"
)

// A Wrapper runs the rewritten argv, as a child in its own process group, and
// the wrapping program then runs the command: here env(1) stands for
// sandbox-exec.
func TestWrapperRewritesArgv(t *testing.T) {
	sh := bash(t)
	s := newSupervisor(t)
	var seen []string
	s.SetLauncher(Wrapper{Argv: func(argv []string) []string {
		seen = argv
		return append([]string{"/usr/bin/env", "WRAPPED=yes"}, argv...)
	}})
	var out syncBuffer
	res, err := s.Run(context.Background(), Spec{
		Argv:   []string{sh, "-c", `echo "$WRAPPED $(ps -o pgid= -p $$ | tr -d ' ') $$"`},
		Stdout: &out,
	})
	if err != nil {
		t.Fatal(err)
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
