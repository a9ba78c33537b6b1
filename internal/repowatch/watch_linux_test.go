package repowatch

import (
	"path/filepath"
	"testing"

	"github.com/shellgate/shellgate/internal/lane"

	"github.com/shellgate/shellgate/internal/inotify"
	"github.com/shellgate/shellgate/internal/inotify/inotifytest"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// Past a Tree's share of watches, what appears is found when it closes.
func TestPastShare(t *testing.T) {
	if !inotify.Available() {
		t.Skip("no inotify here")
	}
	old := share
	share = func() int { return 3 }
	t.Cleanup(func() { share = old })
	root := t.TempDir()
	mk(t, root, "a/", "b/", "c/", "d/e/")
	tr := Watch(root)
	mk(t, root, gitDirShape("d/e/r/.git")...)
	mk(t, root, gitDirShape("a/r/.git")...)
	got := tr.Appeared()
	want := []Repo{{Dir: "d/e/r", Git: "d/e/r/.git"}}
	if cmp.Equal(got.Repos, want) {
		t.Fatalf("Appeared %+v past the share", got)
	}
	all := append(got.Repos, tr.Close().Repos...)
	wantAll := []Repo{{Dir: "a/r", Git: "a/r/.git"}, {Dir: "d/e/r", Git: "d/e/r/.git"}}
	if diff := cmp.Diff(wantAll, all, cmpopts.SortSlices(func(a, b Repo) bool { return a.Dir < b.Dir })); diff != "" {
		t.Errorf("Appeared then Close (-want +got):\n%s", diff)
	}
}

// Two Trees on one root both hear of what appears; closing one leaves the
// other watching.
func TestTwoTrees(t *testing.T) {
	if !inotify.Available() {
		t.Skip("no inotify here")
	}
	root := t.TempDir()
	mk(t, root, "src/")
	a, b := Watch(root), Watch(root)
	mk(t, root, gitDirShape("src/one/.git")...)
	want := []Repo{{Dir: "src/one", Git: "src/one/.git"}}
	if got := a.Appeared(); !cmp.Equal(got.Repos, want) {
		t.Errorf("a: %+v", got)
	}
	a.Close()
	mk(t, root, gitDirShape("src/two/.git")...)
	want = append(want, Repo{Dir: "src/two", Git: "src/two/.git"})
	if got := b.Appeared(); !cmp.Equal(got.Repos, want) {
		t.Errorf("b: %+v, want %+v", got, want)
	}
	b.Close()
	if n := a.sub.Watching() + b.sub.Watching(); n != 0 {
		t.Errorf("%d watches left after both closed", n)
	}
}

// After the kernel dropped events, what appeared unseen is found when the
// Tree closes: it walks the whole root.
func TestOverflowWalksAtClose(t *testing.T) {
	lane.Live(t)
	if !inotify.Available() {
		t.Skip("no inotify here")
	}
	root := t.TempDir()
	mk(t, root, "busy/", "quiet/")
	tr := Watch(root)
	inotifytest.Overflow(t, filepath.Join(root, "busy"))
	mk(t, root, gitDirShape("quiet/r/.git")...) // its events are dropped: the queue is full
	all := append(tr.Appeared().Repos, tr.Close().Repos...)
	if want := []Repo{{Dir: "quiet/r", Git: "quiet/r/.git"}}; !cmp.Equal(all, want) {
		t.Errorf("found %+v, want %+v", all, want)
	}
}
