package sandbox

import (
	"io"
	"os"
	"os/exec"
	"slices"
	"testing"

	"github.com/shellgate/shellgate/internal/lane"
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
	// A command that cannot start still sent its env.
	failed := []string{"PATH=/usr/bin:/bin", "X=d"}
	if _, err := s.Launch([]string{"no-such-program-here"}, failed, l.root, nil, nil, nil); err == nil {
		t.Fatal("a missing program started")
	}
	if got := say(failed); got != "d\n" {
		t.Fatalf("the env of a command that could not start, again: %q", got)
	}
}
