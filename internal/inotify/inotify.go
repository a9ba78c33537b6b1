// Package inotify shares one inotify instance among the watchers of a
// process. A user has 128 instances at most (fs.inotify.max_user_instances)
// and a bounded number of watches, and a server runs many sessions, each
// watching its root for more than one reason (nested repositories,
// checkpoints): one instance per process, and a bounded share of the
// process's watches for each watcher.
//
// A Sub is one watcher. It adds watches under names of its own, and gets the
// events of the watches it added, filtered to the events it asked for. Two
// Subs watching one directory share the kernel's watch, its mask the union of
// theirs (IN_MASK_ADD); closing one leaves the other's. When the kernel's
// queue overflows, every Sub gets an Overflow event: what it watched may have
// changed unseen. Events are read when a Sub asks for its own: no goroutine.
//
// Elsewhere than on Linux nothing is watched: Add fails with ErrUnsupported.
package inotify

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
)

// Events and flags, as Linux numbers them (the same numbers on every system,
// so that callers need no build tags).
const (
	Modify     uint32 = 0x2
	Attrib     uint32 = 0x4
	CloseWrite uint32 = 0x8
	MovedFrom  uint32 = 0x40
	MovedTo    uint32 = 0x80
	Create     uint32 = 0x100
	Delete     uint32 = 0x200
	DeleteSelf uint32 = 0x400
	MoveSelf   uint32 = 0x800
	Unmount    uint32 = 0x2000
	// Overflow: the kernel dropped events; Dir and Name are empty. Every Sub
	// gets it, whatever it asked for.
	Overflow uint32 = 0x4000
	// Ignored: the watch is gone (its directory was deleted, or its file
	// system unmounted); every Sub that had it gets it.
	Ignored uint32 = 0x8000
	// IsDir: the entry named is a directory.
	IsDir uint32 = 0x40000000

	// OnlyDir and DontFollow are flags of Add: watch path only if it is a
	// directory; do not follow a symlink at path.
	OnlyDir    uint32 = 0x1000000
	DontFollow uint32 = 0x2000000

	events = 0xfff // the bits a Sub asks for
)

// Event is one event of a Sub's watch.
type Event struct {
	Dir  string // the Sub's name for the watch ("" for Overflow)
	Name string // the entry in it the event concerns ("": the directory itself)
	Mask uint32
}

// Errors of Add.
var (
	ErrUnsupported = errors.New("inotify: not available here")
	ErrShare       = errors.New("inotify: the watcher's share of watches is taken")
	ErrTotal       = errors.New("inotify: the process's watches are taken")
	ErrClosed      = errors.New("inotify: the watcher is closed")
)

// maxQueued bounds the events a Sub holds unread (the kernel's default queue):
// past it they are dropped for an Overflow.
const maxQueued = 16384

// Total returns the most watches the process holds at once: a quarter of the
// user's (fs.inotify.max_user_watches), leaving the rest to the user's editor
// and other tools. A Sub's share is at most this.
var Total = sync.OnceValue(func() int {
	limit := 8192 // the old kernels' default
	if b, err := os.ReadFile("/proc/sys/fs/inotify/max_user_watches"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && n > 0 {
			limit = n
		}
	}
	return limit / 4
})
