//go:build !linux

package repowatch

// watcher watches nothing here: a Tree finds what appeared by walking the
// whole root when it closes.
type watcher struct{}

var theWatcher = &watcher{}

func shared() *watcher { return theWatcher }

func (*watcher) add(t *Tree, rel, dir string) bool { return false }
func (*watcher) forget(*Tree)                      {}
func (*watcher) drain()                            {}
