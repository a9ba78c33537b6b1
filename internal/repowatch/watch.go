package repowatch

import "github.com/shellgate/shellgate/internal/inotify"

// share is the most watches one Tree holds: a quarter of the process's, at
// most 2048, the levels nearest its top (see walk), where repositories are
// made; the checkpoints watch the same root (package checkpoint).
var share = func() int { return min(inotify.Total()/4, 2048) }

// watchMask is what a Tree hears of: names made or moved into a directory.
const watchMask = inotify.Create | inotify.MovedTo | inotify.OnlyDir

// watch watches dir, the Tree's rel, with t.mu held; false past the Tree's
// share or without inotify.
func (t *Tree) watch(rel, dir string) bool {
	return t.sub.Add(dir, rel, watchMask) == nil
}

// drain handles what the watch saw since it last looked, with t.mu held.
func (t *Tree) drain() {
	for _, e := range t.sub.Events() {
		switch {
		case e.Mask&inotify.Overflow != 0:
			t.lost = true
		case e.Mask&inotify.Ignored != 0 || e.Name == "":
		default:
			t.event(e.Dir, e.Name, e.Mask&inotify.IsDir != 0)
		}
	}
}
