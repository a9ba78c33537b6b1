package sandbox

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/shellgate/shellgate/internal/lane"
	"golang.org/x/sys/unix"
)

// listsOtherPID reads a directory as the session's /proc: a process other
// than the helper (PID 1) is a name of digits but "1", however many entries
// come before it.
func TestListsOtherPID(t *testing.T) {
	dir := t.TempDir()
	lists := func(dir string) bool {
		fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Close(fd)
		return listsOtherPID(fd, make([]byte, 4096))
	}
	mk := func(names ...string) {
		for _, n := range names {
			if err := os.Mkdir(filepath.Join(dir, n), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	mk("1", "self", "thread-self", "sys", "1a", "a1", "x")
	for i := range 300 { // more than one getdents call's worth
		mk(fmt.Sprintf("entry-%03d-with-a-long-name-to-fill-the-buffer-sooner", i))
	}
	if lists(dir) {
		t.Fatal("found another process where only PID 1 is")
	}
	mk("17")
	if !lists(dir) {
		t.Fatal("missed PID 17")
	}
	if !listsOtherPID(-1, make([]byte, 4096)) {
		t.Fatal("a /proc that cannot be read must count as busy")
	}
	if !lists("/proc") { // this test's own process, at least
		t.Fatal("missed the processes of the host's /proc")
	}
}

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
