// Package cachestore keeps the projects' copies of the tool caches: the
// sandbox lays each project's own layer over the host's Go, npm, pip … caches
// (see sandbox.Spec.CacheStore), so that builds stay warm and the host's
// caches are never written. A project's copies live in one directory of the
// store, named after its root; Sweep removes the directories no project needs
// any more, so the store does not grow with every directory shellgate ever
// ran in.
package cachestore

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// MaxUnused is how long a project's copies are kept unused before Sweep
// removes them: after that a build starts from the host's caches again.
const MaxUnused = 30 * 24 * time.Hour

// rootFile names, in a project's directory, the project root it belongs to.
const rootFile = "root"

// lockFile is held (shared) while a project's copies are in use.
const lockFile = "lock"

// Project is a project's directory in the store, held until Close: Sweep
// never removes it meanwhile.
type Project struct {
	dir  string
	lock *os.File
}

// Dir is where the project's copies go, one directory per cache.
func (p *Project) Dir() string { return p.dir }

// Close releases the project's directory.
func (p *Project) Close() error {
	if p == nil || p.lock == nil {
		return nil
	}
	return p.lock.Close()
}

// DirFor is the directory of store that holds root's copies.
func DirFor(store, root string) string {
	sum := sha256.Sum256([]byte(root))
	return filepath.Join(store, hex.EncodeToString(sum[:8]))
}

// Open returns root's directory in store, made if need be, marked with the
// root and the time of use, and held until Close.
func Open(store, root string) (*Project, error) {
	dir := DirFor(store, root)
	for range 3 { // a Sweep may remove the directory between making and holding it
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
		lock, err := holdShared(filepath.Join(dir, lockFile))
		if err != nil {
			return nil, err
		}
		if err := writeChanged(filepath.Join(dir, rootFile), []byte(root+"\n")); err != nil {
			lock.Close()
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return nil, err
		}
		now := time.Now()
		os.Chtimes(dir, now, now)
		return &Project{dir: dir, lock: lock}, nil
	}
	return nil, errors.New("cachestore: the project's directory kept being removed")
}

// SweepBatch bounds the directories one Sweep removes, so that no start pays
// for a long backlog at once: the next one goes on.
const SweepBatch = 16

// trashPrefix names the directories a sweep took out of use and did not
// finish removing (stopped, or killed): the next sweep goes on with them.
const trashPrefix = "trash-"

// Sweep removes from store up to SweepBatch project directories that nothing
// needs: those whose project root is gone, those with no root recorded (made
// before roots were), and those unused for longer than maxUnused. A directory
// in use (see Open) stays. It returns the removed directories. Each goes out
// of use at once (renamed); its files go after, until ctx is done: the rest
// at the next sweep.
func Sweep(ctx context.Context, store string, maxUnused time.Duration) (removed []string) {
	entries, err := os.ReadDir(store)
	if err != nil {
		return nil
	}
	// What an earlier sweep left first, lest it pile up behind a backlog.
	trash := func(e fs.DirEntry) int {
		if strings.HasPrefix(e.Name(), trashPrefix) {
			return 0
		}
		return 1
	}
	slices.SortStableFunc(entries, func(a, b fs.DirEntry) int { return cmp.Compare(trash(a), trash(b)) })
	for _, e := range entries {
		if len(removed) == SweepBatch || ctx.Err() != nil {
			break
		}
		dir := filepath.Join(store, e.Name())
		if !e.IsDir() {
			continue
		}
		if !strings.HasPrefix(e.Name(), trashPrefix) {
			if !unneeded(dir, maxUnused) {
				continue
			}
			lock, err := holdExclusive(filepath.Join(dir, lockFile))
			if err != nil {
				continue // in use
			}
			trash := filepath.Join(store, trashPrefix+e.Name()+"-"+strconv.FormatInt(time.Now().UnixNano(), 36))
			err = os.Rename(dir, trash)
			lock.Close()
			if err != nil {
				continue
			}
			removed, dir = append(removed, dir), trash
		}
		removeAll(ctx, dir)
	}
	return removed
}

// SweepEvery is how often SweepIfDue looks through the store.
const SweepEvery = 24 * time.Hour

// StampFile, in the store, records when SweepIfDue last looked.
const StampFile = "swept"

// SweepIfDue sweeps the store (see Sweep) if it was not swept in the last
// SweepEvery, or if the last sweep left a backlog: the cost at a start is one
// stat most days.
func SweepIfDue(ctx context.Context, store string, maxUnused time.Duration) (removed []string) {
	stamp := filepath.Join(store, StampFile)
	if fi, err := os.Stat(stamp); err == nil && time.Since(fi.ModTime()) < SweepEvery {
		return nil
	}
	removed = Sweep(ctx, store, maxUnused)
	if len(removed) < SweepBatch && ctx.Err() == nil {
		if os.MkdirAll(store, 0o700) == nil {
			os.WriteFile(stamp, nil, 0o600)
			now := time.Now()
			os.Chtimes(stamp, now, now)
		}
	}
	return removed
}

// unneeded reports whether a project directory may go, before its lock is
// tried.
func unneeded(dir string, maxUnused time.Duration) bool {
	b, err := os.ReadFile(filepath.Join(dir, rootFile))
	if err != nil {
		return true
	}
	root := string(b[:max(len(b)-1, 0)])
	if _, err := os.Stat(root); errors.Is(err, fs.ErrNotExist) {
		return true
	}
	fi, err := os.Stat(dir)
	return err == nil && time.Since(fi.ModTime()) > maxUnused
}

// removeAll removes dir, making its directories writable first where need
// be (an overlay's work directory holds one that is mode 000), and stops
// between two directories once ctx is done.
func removeAll(ctx context.Context, dir string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrPermission) && os.Chmod(dir, 0o700) == nil {
		entries, err = os.ReadDir(dir)
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if !e.IsDir() {
			if errors.Is(os.Remove(p), fs.ErrPermission) && os.Chmod(dir, 0o700) == nil {
				os.Remove(p)
			}
		} else if err := removeAll(ctx, p); err != nil {
			return err
		}
	}
	if err := os.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// writeChanged writes data to the file at path, mode 0600, unless it holds
// that already. Not writing it again spares a disk write at every session
// start: on ext4, a file truncated and rewritten is flushed at close.
func writeChanged(path string, data []byte) error {
	if old, err := os.ReadFile(path); err == nil && string(old) == string(data) {
		return nil
	}
	return os.WriteFile(path, data, 0o600)
}
