package inotify

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/shellgate/shellgate/internal/lane"

	"github.com/shellgate/shellgate/internal/inotify/inotifytest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// labDir is a directory under /var/tmp (the sandbox hides the host's /tmp),
// removed when the test ends.
func labDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("/var/tmp", "shellgate-inotify-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

func touch(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// names are the events' "dir/name mask-name" lines, for comparing.
func names(evs []Event) []string {
	var out []string
	for _, e := range evs {
		kind := fmt.Sprintf("%#x", e.Mask&^IsDir)
		switch e.Mask &^ IsDir {
		case Create:
			kind = "create"
		case Delete:
			kind = "delete"
		case Ignored:
			kind = "ignored"
		case Overflow:
			kind = "overflow"
		case DeleteSelf:
			kind = "delete-self"
		}
		out = append(out, e.Dir+"/"+e.Name+" "+kind)
	}
	return out
}

func wantEvents(t *testing.T, who string, s *Sub, want ...string) {
	t.Helper()
	got := names(s.Events())
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s's events:\n%s\nwant:\n%s", who, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// kernelWatches is how many watches the process's instance holds, as the
// kernel counts them.
func kernelWatches(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/fdinfo/" + strconv.Itoa(the().fd))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "inotify wd:")
}

// instances counts the process's inotify instances.
func instances(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, fd := range fds {
		if l, _ := os.Readlink("/proc/self/fd/" + fd.Name()); l == "anon_inode:inotify" {
			n++
		}
	}
	return n
}

func need(t *testing.T) {
	if the().fd < 0 {
		t.Skip("no inotify here")
	}
}

// Two watchers of one directory each get the events they asked for, under
// their own names; closing one leaves the other's watch, and closing both
// leaves the kernel none.
func TestTwoSubsOneDir(t *testing.T) {
	need(t)
	dir := labDir(t)
	before := kernelWatches(t)
	a, b := Subscribe(10), Subscribe(10)
	defer a.Close()
	defer b.Close()
	if err := a.Add(dir, "A", Create|OnlyDir); err != nil {
		t.Fatal(err)
	}
	if err := b.Add(dir, "B", Create|Delete|OnlyDir); err != nil {
		t.Fatal(err)
	}
	if n := kernelWatches(t) - before; n != 1 {
		t.Errorf("the kernel holds %d watches for one directory watched twice", n)
	}
	touch(t, filepath.Join(dir, "one"))
	os.Remove(filepath.Join(dir, "one"))
	wantEvents(t, "a", a, "A/one create") // not the delete: a did not ask for it
	wantEvents(t, "b", b, "B/one create", "B/one delete")

	a.Close()
	touch(t, filepath.Join(dir, "two"))
	wantEvents(t, "a after its close", a)
	wantEvents(t, "b after a's close", b, "B/two create")
	if a.Watching() != 0 || b.Watching() != 1 {
		t.Errorf("watching: a %d, b %d; want 0, 1", a.Watching(), b.Watching())
	}
	if err := a.Add(dir, "A", Create); !errors.Is(err, ErrClosed) {
		t.Errorf("Add after Close: %v", err)
	}

	b.Close()
	if n := kernelWatches(t) - before; n != 0 {
		t.Errorf("the kernel holds %d watches after both closed", n)
	}
	if n := instances(t); n != 1 {
		t.Errorf("%d inotify instances in the process, want 1", n)
	}
}

// A second watcher of a directory widens the kernel's mask without
// narrowing the first's (IN_MASK_ADD), whichever asked first.
func TestMaskUnion(t *testing.T) {
	need(t)
	dir := labDir(t)
	a, b := Subscribe(10), Subscribe(10)
	defer a.Close()
	defer b.Close()
	if err := a.Add(dir, "A", Delete); err != nil {
		t.Fatal(err)
	}
	if err := b.Add(dir, "B", Create); err != nil {
		t.Fatal(err)
	}
	touch(t, filepath.Join(dir, "f"))
	os.Remove(filepath.Join(dir, "f"))
	wantEvents(t, "a", a, "A/f delete")
	wantEvents(t, "b", b, "B/f create")
}

// A watcher holds its share and no more; the same directory again is a new
// name for the watch it has, not another.
func TestShare(t *testing.T) {
	need(t)
	dir := labDir(t)
	for _, d := range []string{"x", "y", "z"} {
		os.Mkdir(filepath.Join(dir, d), 0o755)
	}
	s := Subscribe(2)
	defer s.Close()
	for _, step := range []struct {
		path, name string
		want       error
	}{
		{"x", "x", nil},
		{"y", "y", nil},
		{"z", "z", ErrShare},
		{"x", "renamed", ErrShare}, // the share is checked before the kernel is asked
	} {
		if err := s.Add(filepath.Join(dir, step.path), step.name, Create); !errors.Is(err, step.want) {
			t.Errorf("Add %s: %v, want %v", step.path, err, step.want)
		}
	}
	if s.Watching() != 2 {
		t.Errorf("watching %d, want 2", s.Watching())
	}
	t2 := Subscribe(2)
	defer t2.Close()
	if err := t2.Add(filepath.Join(dir, "x"), "x", Create); err != nil {
		t.Fatal(err)
	}
	if err := t2.Add(filepath.Join(dir, "x"), "x again", Create); err != nil || t2.Watching() != 1 {
		t.Errorf("the same directory again: %v, watching %d", err, t2.Watching())
	}
	touch(t, filepath.Join(dir, "x", "f"))
	wantEvents(t, "t2", t2, "x again/f create")
}

// A watched directory deleted is gone for every watcher of it, and counts
// against none.
func TestDeletedDir(t *testing.T) {
	need(t)
	dir := labDir(t)
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	a, b := Subscribe(10), Subscribe(10)
	defer a.Close()
	defer b.Close()
	a.Add(sub, "A", Create)
	b.Add(sub, "B", DeleteSelf)
	os.Remove(sub)
	wantEvents(t, "a", a, "A/ ignored")
	wantEvents(t, "b", b, "B/ delete-self", "B/ ignored")
	if a.Watching() != 0 || b.Watching() != 0 {
		t.Errorf("watching: a %d, b %d after the directory went", a.Watching(), b.Watching())
	}
}

// When the kernel's queue overflows, every watcher hears of it, the one
// whose directory was quiet too: what it watched may have changed unseen.
func TestOverflow(t *testing.T) {
	lane.Live(t)
	need(t)
	dir := labDir(t)
	busy, quiet := filepath.Join(dir, "busy"), filepath.Join(dir, "quiet")
	os.Mkdir(busy, 0o755)
	os.Mkdir(quiet, 0o755)
	a, q := Subscribe(10), Subscribe(10)
	defer a.Close()
	defer q.Close()
	if err := a.Add(busy, "busy", Create|Delete); err != nil {
		t.Fatal(err)
	}
	if err := q.Add(quiet, "quiet", Create); err != nil {
		t.Fatal(err)
	}
	inotifytest.Overflow(t, busy)
	evs := a.Events()
	if len(evs) == 0 || evs[len(evs)-1].Mask != Overflow {
		t.Fatalf("the busy watcher's %d events do not end in an overflow", len(evs))
	}
	wantEvents(t, "the quiet watcher", q, "/ overflow")
	touch(t, filepath.Join(quiet, "after"))
	wantEvents(t, "the quiet watcher, then", q, "quiet/after create")
}
