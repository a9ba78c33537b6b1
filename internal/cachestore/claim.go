package cachestore

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
)

// KeptLayers is how many sets of cache layers a project keeps between
// sessions: one for each session of the project that runs while others do,
// up to this many (two MCP servers and a `shellgate run` beside them). A
// session beyond them has a set of its own for its time only.
const KeptLayers = 4

// layersLock, in a set of layers' directory, is held (exclusively) by the
// session that mounts them.
const layersLock = "layers.lock"

// Layers is a session's hold on one set of its project's cache layers
// (ClaimLayers), until Release.
type Layers struct {
	dir  string
	lock *os.File
	temp bool // a set beyond KeptLayers: emptied at Release
}

// Dir is the directory of the set's layers, one a cache (as Project.Dir's).
func (l *Layers) Dir() string { return l.dir }

// Fd is the hold's descriptor, for the process that mounts the layers to
// hold too (a flock holds until every descriptor of its open file is
// closed): so the hold outlasts this process as long as the mounts do.
// -1 once released.
func (l *Layers) Fd() int {
	if l == nil || l.lock == nil {
		return -1
	}
	return int(l.lock.Fd())
}

// ClaimLayers holds a set of layers of the project whose directory is
// project (Open's Dir) for one session, which mounts them until Release,
// and returns it: the project's own directory where no other session holds
// it, else the first of its further sets (named %1, %2 …: no cache's layer
// is, those being named after absolute paths, the first slash dropped) no
// other holds.
//
// A set is mounted by one session at a time because overlayfs allows an
// upper and work dir in one mount only: a second mount of the same would
// set aside the work dir the first still uses, whose copy-ups then fail
// (and two mounts writing one upper dir is undefined behaviour). Nor does a
// second session mount the held set's upper read-only below one of its own:
// a layer changed under a mount is undefined behaviour too. So a session
// beside another builds on a set of its own, which stays warm for the next
// one that runs beside another, while the project's first set stays that of
// the sessions that run alone. The hold is a flock, which ends with its
// holder's process: a crashed session's lock file holds nothing, and the
// next session takes its set. Sets beyond KeptLayers are emptied as they
// are released (and as they are claimed, should a crash have left one
// full), so the store grows with the project's busiest hour no further
// than KeptLayers copies.
func ClaimLayers(project string) (*Layers, error) {
	const most = 64 // sessions at once in one project; beyond, an error
	for n := range most {
		dir := project
		if n > 0 {
			dir = filepath.Join(project, "%"+strconv.Itoa(n))
		}
		lock, err := holdOwn(filepath.Join(dir, layersLock))
		if errors.Is(err, fs.ErrNotExist) { // a first session (of the project, or beside another)
			if err = os.MkdirAll(dir, 0o700); err == nil {
				lock, err = holdOwn(filepath.Join(dir, layersLock))
			}
		}
		if errors.Is(err, errHeld) {
			continue
		}
		if err != nil {
			return nil, err
		}
		l := &Layers{dir: dir, lock: lock, temp: n >= KeptLayers}
		if l.temp {
			if err := l.empty(); err != nil {
				lock.Close()
				return nil, err
			}
		}
		return l, nil
	}
	return nil, errors.New("cachestore: every set of the project's cache layers is held")
}

// Release ends the hold, once the session's mounts of the layers are gone:
// a set beyond KeptLayers is emptied first, while held.
func (l *Layers) Release() error {
	if l == nil || l.lock == nil {
		return nil
	}
	var err error
	if l.temp {
		err = l.empty()
	}
	if cerr := l.lock.Close(); err == nil {
		err = cerr
	}
	l.lock = nil
	return err
}

// empty removes the set's layers, its lock file aside: a session that
// opened it meanwhile waits for this hold, which removing the file would
// not make it do.
func (l *Layers) empty() error {
	entries, err := os.ReadDir(l.dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for _, e := range entries {
		if e.Name() != layersLock {
			if err := removeAll(context.Background(), filepath.Join(l.dir, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

// errHeld: another holds the lock.
var errHeld = errors.New("held")

// holdOwn takes path's lock exclusively if no one holds it (errHeld if one
// does), and makes sure the file locked is still the one at path: a file
// removed (with its project's directory, by a Sweep) between the open and
// the lock would hold nothing for the next session.
func holdOwn(path string) (*os.File, error) {
	for range 3 {
		f, err := holdExclusive(path)
		if err != nil {
			return nil, err
		}
		fi, ferr := f.Stat()
		pi, perr := os.Stat(path)
		if ferr == nil && perr == nil && os.SameFile(fi, pi) {
			return f, nil
		}
		f.Close()
		if errors.Is(perr, fs.ErrNotExist) {
			return nil, perr
		}
	}
	return nil, errors.New("cachestore: the lock file of a set of cache layers kept changing")
}
