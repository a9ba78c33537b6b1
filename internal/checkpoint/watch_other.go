//go:build !linux

package checkpoint

// dirWatch is Linux's (inotify); elsewhere every checkpoint walks the whole
// root, reading only the files whose stat changed.
type dirWatch struct{}

func newDirWatch(*Store) *dirWatch                 { return nil }
func (w *dirWatch) add(pass byte, rel, abs string) {}
func (w *dirWatch) plan(pass byte) *walkPlan       { return nil }
func (w *dirWatch) failed(pass byte)               {}
