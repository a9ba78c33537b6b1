//go:build !linux

package inotify

// Sub watches nothing here: its owner scans what it would have watched.
type Sub struct{}

// Subscribe returns a watcher that cannot watch.
func Subscribe(share int) *Sub { return &Sub{} }

// Add fails: there is no inotify here.
func (*Sub) Add(path, name string, mask uint32) error { return ErrUnsupported }

// Watching is zero.
func (*Sub) Watching() int { return 0 }

// Events is nil.
func (*Sub) Events() []Event { return nil }

// Close does nothing.
func (*Sub) Close() {}

// Available is false: there is no inotify here.
func Available() bool { return false }
