package checkpoint

import (
	"runtime"
	"strings"
	"sync"

	"github.com/shellgate/shellgate/internal/inotify"
)

// dirWatch tells which directories of the root (and of its .git) changed
// since the last checkpoint, from inotify (package inotify: the process's one
// instance): a directory walked once is watched, so the next checkpoint reads
// again only the directories something happened in (a file written, made,
// removed, renamed, its mode or times changed) and takes the others as they
// were. An overflow of the kernel's queue, a changed ignore file, or a watch
// that could not be added makes the next walk a whole one; so does every
// process's first. Without inotify (other systems) every checkpoint walks the
// whole root, reading only the files whose stat changed.
type dirWatch struct {
	sub *inotify.Sub // its watches are named by pass ('w' or 'g') and path in it

	mu    sync.Mutex
	dirty map[string]bool // keys as the watches are named, since the last drain
	// names: of a dirty directory, the entries its events named; whole: one
	// an event without a name concerned (the directory itself: moved,
	// removed, its mode), or that was made, moved or removed as an entry of
	// its parent, or with too many names: it is read again whole.
	names   map[string]map[string]bool
	whole   map[string]bool
	full    [2]bool // work, git: the next walk of the pass is a whole one
	healthy [2]bool // the pass's last walk left every directory watched
}

const watchMask = inotify.Modify | inotify.Attrib | inotify.CloseWrite | inotify.Create | inotify.Delete |
	inotify.DeleteSelf | inotify.MoveSelf | inotify.MovedFrom | inotify.MovedTo | inotify.OnlyDir | inotify.DontFollow

// maxNames bounds the entries of one directory a walk looks at by name;
// past it the directory is read whole.
const maxNames = 256

// watchShare bounds the directories one Store watches: half the process's
// watches, at most 4096 (with the 2048 of package repowatch's watch of the
// same root). A project with more directories is walked whole at each
// checkpoint.
func watchShare() int { return min(inotify.Total()/2, 4096) }

// newDirWatch is the watch of owner's root, nil without inotify; its watches
// go when owner closes or is collected.
func newDirWatch(owner *Store) *dirWatch {
	if !inotify.Available() {
		return nil
	}
	w := &dirWatch{sub: inotify.Subscribe(watchShare()), dirty: map[string]bool{},
		names: map[string]map[string]bool{}, whole: map[string]bool{}}
	runtime.AddCleanup(owner, (*inotify.Sub).Close, w.sub)
	return w
}

// close drops the watches.
func (w *dirWatch) close() {
	if w != nil {
		w.sub.Close()
	}
}

func passIndex(pass byte) int {
	if pass == 'g' {
		return 1
	}
	return 0
}

// add watches directory abs, path rel of pass; called before the directory
// is read, so that nothing done to it after the read goes unseen.
func (w *dirWatch) add(pass byte, rel, abs string) {
	if w == nil {
		return
	}
	if err := w.sub.Add(abs, string(pass)+rel, watchMask); err != nil {
		// Out of watches (or the directory went): this pass is walked whole
		// next time.
		w.mu.Lock()
		w.full[passIndex(pass)] = true
		w.mu.Unlock()
	}
}

// plan drains the events and says how the pass's next walk goes: nil, a
// whole walk; else what it may take as it was.
func (w *dirWatch) plan(pass byte) *walkPlan {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, e := range w.sub.Events() {
		w.event(e)
	}
	i := passIndex(pass)
	full := w.full[i] || !w.healthy[i]
	w.full[i] = false
	w.healthy[i] = true // until a watch fails during this walk (add sets full)
	p := &walkPlan{dirty: map[string]bool{}, below: map[string]bool{}, names: map[string]map[string]bool{},
		kids: map[string]map[string]bool{}}
	for k := range w.dirty {
		if k[0] != pass {
			continue
		}
		delete(w.dirty, k)
		rel := k[1:]
		p.dirty[rel] = true
		if names := w.names[k]; names != nil && !w.whole[k] {
			p.names[rel] = names
		}
		delete(w.names, k)
		delete(w.whole, k)
		for {
			j := strings.LastIndexByte(rel, '/')
			if j < 0 {
				break
			}
			rel = rel[:j]
			p.below[rel] = true
		}
		if k[1:] != "" {
			p.below[""] = true
		}
	}
	if full {
		return nil
	}
	// A directory something happened in or beneath is a child its parent's
	// walk must visit, even one the last checkpoint left out (it was empty).
	for _, set := range []map[string]bool{p.dirty, p.below} {
		for rel := range set {
			if rel == "" {
				continue
			}
			parent, name := "", rel
			if j := strings.LastIndexByte(rel, '/'); j >= 0 {
				parent, name = rel[:j], rel[j+1:]
			}
			if p.kids[parent] == nil {
				p.kids[parent] = map[string]bool{}
			}
			p.kids[parent][name] = true
		}
	}
	return p
}

// failed marks the pass's walk as one that did not finish: walked whole
// next time.
func (w *dirWatch) failed(pass byte) {
	if w == nil {
		return
	}
	w.mu.Lock()
	w.healthy[passIndex(pass)] = false
	w.mu.Unlock()
}

// event marks what e says changed, with w.mu held.
func (w *dirWatch) event(e inotify.Event) {
	if e.Mask&inotify.Overflow != 0 {
		w.full = [2]bool{true, true}
		return
	}
	key := e.Dir
	w.dirty[key] = true
	if e.Name == "" {
		w.whole[key] = true
		return
	}
	if names := w.names[key]; names == nil {
		w.names[key] = map[string]bool{e.Name: true}
	} else if len(names) < maxNames {
		names[e.Name] = true
	} else {
		w.whole[key] = true
	}
	child := key + "/" + e.Name
	if len(key) == 1 {
		child = key + e.Name
	}
	// The entry itself: a directory made again under the same name has no
	// watch of its own yet.
	w.dirty[child] = true
	w.whole[child] = true
	switch {
	case e.Name == ".gitignore" && key[0] == 'w':
		w.full[0] = true // ignore rules changed: every directory may be concerned
	case key == "w" && e.Name == ".git":
		w.full[1] = true // a new .git has no watches yet
	case key == "ginfo" && e.Name == "exclude",
		key[0] == 'w' && strings.HasSuffix(key, "/.git/info") && e.Name == "exclude": // a nested repository's
		w.full[0] = true
	}
}
