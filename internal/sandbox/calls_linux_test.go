package sandbox

import (
	"io"
	"os"
	"os/exec"
	"slices"
	"testing"

	"github.com/shellgate/shellgate/internal/lane"
	"github.com/shellgate/shellgate/internal/runner"
	"github.com/shellgate/shellgate/internal/sandbox/helper"
)

// A spawn whose env is the last one's does not send it again (SameEnv): each
// command still runs with its own env, whether it repeats the last one,
// differs from it, or comes in a slice its caller wrote over since.
func TestSpawnEnvSentOnce(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	s := start(t, l.spec())
	bash, err := exec.LookPath("bash")
	must(t, err)
	env := []string{"PATH=/usr/bin:/bin", "X=a", "Y=1"}
	say := func(env []string) string {
		t.Helper()
		r, w, err := os.Pipe()
		must(t, err)
		defer r.Close()
		c, err := s.Launch([]string{bash, "--noprofile", "--norc", "-c", `echo "$X$Y"`}, env, l.root, nil, w, w)
		w.Close()
		must(t, err)
		out, _ := io.ReadAll(r)
		c.Wait()
		return string(out)
	}
	for i, want := range []string{"a1", "a1", "a1"} {
		if got := say(env); got != want+"\n" {
			t.Fatalf("call %d with the same env: %q, want %q", i, got, want)
		}
	}
	env[1] = "X=b" // the caller's slice, written over
	if got := say(env); got != "b1\n" {
		t.Fatalf("an env written over in place: %q", got)
	}
	if got := say([]string{"PATH=/usr/bin:/bin", "X=c"}); got != "c\n" {
		t.Fatalf("a shorter env: %q", got)
	}
	if got := say(env); got != "b1\n" {
		t.Fatalf("the env before again: %q", got)
	}
	if got := say(append(slices.Clone(env), KeepCreated([]string{"x"}))); got != "b1\n" {
		t.Fatalf("with an approval's entry: %q", got)
	}
	if got := say(env); got != "b1\n" {
		t.Fatalf("after an approval's entry: %q", got)
	}
	// As a Supervisor's calls: each with its own run marker, the rest the
	// same (sent as a patch of the last env).
	for _, run := range []string{"s.1", "s.2", "s.3"} {
		if got := say([]string{"PATH=/usr/bin:/bin", "X=m", "Y=" + run}); got != "m"+run+"\n" {
			t.Fatalf("a marked call %s: %q", run, got)
		}
	}
	// A command that cannot start still sent its env.
	failed := []string{"PATH=/usr/bin:/bin", "X=d"}
	if _, err := s.Launch([]string{"no-such-program-here"}, failed, l.root, nil, nil, nil); err == nil {
		t.Fatal("a missing program started")
	}
	if got := say(failed); got != "d\n" {
		t.Fatalf("the env of a command that could not start, again: %q", got)
	}
}

// A call's env that differs from the last one's only in its run marker, as
// every call of a Supervisor's does, is sent as that one entry; an env that
// differs in length or in many entries is sent whole.
func TestEnvPatchIsTheRunMarker(t *testing.T) {
	last := append(slices.Clone(os.Environ()), "PATH=/usr/bin:/bin", "HOME=/root", runner.MarkerVar+"=5f2a.1")
	env := slices.Clone(last)
	env[len(env)-1] = runner.MarkerVar + "=5f2a.2"
	patch, ok := envPatch(last, env)
	if !ok || len(patch) != 1 || patch[0] != (helper.EnvEntry{I: len(env) - 1, KV: env[len(env)-1]}) {
		t.Fatalf("a marker's change: %v, %v", patch, ok)
	}
	if got, ok := helper.PatchEnv(last, patch); !ok || !slices.Equal(got, env) || last[len(last)-1] != runner.MarkerVar+"=5f2a.1" {
		t.Fatalf("patched: %v, %v (last %v)", got, ok, last)
	}
	if patch, ok := envPatch(last, last); !ok || len(patch) != 0 {
		t.Errorf("the same env: %v, %v", patch, ok)
	}
	many := slices.Clone(env)
	for i := range maxEnvPatch + 1 {
		many[i] += "x"
	}
	for name, e := range map[string][]string{"longer": append(slices.Clone(env), "Z=1"), "shorter": env[1:], "many": many} {
		if patch, ok := envPatch(last, e); ok {
			t.Errorf("%s: a patch %v", name, patch)
		}
	}
	if _, ok := envPatch(nil, env); ok {
		t.Error("a patch of no env sent")
	}
	if _, ok := helper.PatchEnv(last, []helper.EnvEntry{{I: len(last), KV: "X=1"}}); ok {
		t.Error("a patch past the env's end applied")
	}
}
