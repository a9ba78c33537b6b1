package checkpoint

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/shellgate/shellgate/internal/beneath"
)

// An ignored file over IgnoredMaxSize (a dataset, a local database, a model
// file a .gitignore names) is hand-made data nothing regenerates, and too
// big to copy into every checkpoint. It is kept by a hard link in the store
// instead (links/<inode>): no copy and no space while it is unchanged. An
// `rm` or a rename over it leaves the store's name holding the data. A write
// in place would reach the store's name too, since both names are one
// file: in the sandbox (the default) the copy-up layer puts a copy in place
// of such a file up to DefaultLinkCopyMaxSize before a command writes it, so
// the store keeps the original; over it, and without the sandbox, the write
// reaches the link: the changes mark it written in place (markInPlace), and
// undo finds the link's stat changed and says it cannot restore the file.
// The checkpoint's tree holds a stub of the file's stat (so a change shows),
// and the manifest lists it (Linked).
//
// Where no link can be made (the root and the store on different file
// systems: EXDEV) the file is recorded as not kept (notkept.go), with the
// reason. Ignored files over LinkMaxSize are left out as before; ignored
// directories are never entered. Only on systems with inode numbers (not
// Windows).

// linkedFile is what a checkpoint records of an ignored file it kept by a
// hard link: the link's name in the store's links/ directory and the file's
// stat when it was linked. No change time: removing the root's name, or
// copy-up's rename over it, changes the inode's, and that is what the link
// is for.
type linkedFile struct {
	Link  string `json:"link"`
	Size  int64  `json:"size"`
	Mtime int64  `json:"mtime"` // nanoseconds
	Ino   uint64 `json:"ino"`
	Perm  uint32 `json:"perm"`
	// Via: the root's file is another inode than the link's, of the same
	// bytes (sameAsPrev)
	Via bool `json:"via,omitempty"`
}

// stat is the stat l recorded (the link's), as linkedStub takes it.
func (l linkedFile) stat() fileStat {
	return fileStat{size: l.Size, mtime: l.Mtime, ino: l.Ino, mode: fs.FileMode(l.Perm).Perm()}
}

// maxViaCompare bounds the files sameAsPrev reads (twice) to compare: the
// copies the sandbox makes are up to ignored_link_copy_max_size (16 MiB by
// default); a bigger file of a new inode and the same size (a rename over
// it) is linked as a version of its own, as before, rather than read.
const maxViaCompare = 64 << 20

// sameAsPrev returns prev, the last checkpoint's record of the linked file
// at path, when the file there now (of stat st, another inode than prev's)
// holds the same bytes and mode as prev's link, still intact in the store:
// the file can be kept by that link. nil otherwise, or when anything
// changed meanwhile.
func (s *Store) sameAsPrev(path string, st fileStat, prev *linkedFile) *linkedFile {
	if prev == nil || st.ino == prev.Ino || st.size != prev.Size || st.size > maxViaCompare || uint32(st.mode.Perm()) != prev.Perm {
		return nil
	}
	old, _ := s.linkIntact(*prev)
	if old == nil {
		return nil
	}
	defer old.Close()
	f, err := openRegular(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil
	}
	if now, ok := statOf(fi); !ok || now.ino != st.ino || now.size != st.size || now.mtime != st.mtime || !sameContent(old, f) {
		return nil
	}
	// (the file's stat after the read: one written as it was read is read
	// again by the next checkpoint, whose walk sees its new stat)
	if again, err := f.Stat(); err != nil || again.ModTime().UnixNano() != st.mtime || again.Size() != st.size {
		return nil
	}
	v := *prev
	v.Via = true
	return &v
}

func linkedOf(st fileStat) linkedFile {
	return linkedFile{Link: strconv.FormatUint(st.ino, 10), Size: st.size, Mtime: st.mtime, Ino: st.ino, Perm: uint32(st.mode.Perm())}
}

// linkedStub is the blob a linked file has in a checkpoint's tree: its
// stat, less the change time (see linkedFile).
func linkedStub(st fileStat) []byte {
	n := linkedOf(st)
	return fmt.Appendf(nil, "shellgate: kept by a hard link (ignored, over ignored_max_size)\nsize %d\nmtime %d\nino %d\nperm %o\n", n.Size, n.Mtime, n.Ino, n.Perm)
}

// whyNoLink is the reason a not-kept record gives for an ignored file no
// link could be made to.
const whyNoLink = "ignored, and no hard link to it could be made in the store (another file system, or not the user's file)"

// linksDir is the store's directory of links.
func (s *Store) linksDir() string { return filepath.Join(s.dir, "links") }

// linkable reports whether an ignored file of this stat, not kept as a
// copy, is kept by a link.
func (s *Store) linkable(st fileStat) bool {
	return canLink && st.mode.IsRegular() && st.ino != 0 && s.o.LinkMaxSize > 0 && st.size <= s.o.LinkMaxSize && st.size <= s.maxFileSize()
}

// linkMax is the size up to which an ignored file is linked (linkable); 0
// where none is.
func (s *Store) linkMax() int64 {
	if !canLink || s.o.LinkMaxSize <= 0 {
		return 0
	}
	return min(s.o.LinkMaxSize, s.maxFileSize())
}

// linkFile links the file at path into the store and returns the stat of
// what it linked (the change time the link gave it included). One link per
// inode: a file unchanged since the last checkpoint, or written in place,
// keeps its link.
func (s *Store) linkFile(path string) (fileStat, error) {
	dir := s.linksDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fileStat{}, err
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return fileStat{}, err
	}
	st, ok := statOf(fi)
	if !ok || !fi.Mode().IsRegular() {
		return fileStat{}, fs.ErrNotExist // replaced since the walk: gone as a file
	}
	name := filepath.Join(dir, strconv.FormatUint(st.ino, 10))
	if have, err := os.Lstat(name); err == nil {
		if os.SameFile(have, fi) {
			st, err := s.afterLink(path, name, st.ino)
			if errors.Is(err, errRelinked) {
				err = fs.ErrNotExist
			}
			return st, err
		}
		// A stale name (the store moved between file systems): the inode
		// it holds is no longer what its name says, and nothing restores
		// from it (the stat check fails); replaced.
		if err := os.Remove(name); err != nil {
			return fileStat{}, err
		}
	}
	if err := os.Link(path, name); errors.Is(err, fs.ErrExist) {
		// Linked meanwhile by the reader of another of the file's names
		// (a checkpoint reads on several goroutines): kept by that link.
		if have, herr := os.Lstat(name); herr != nil || !os.SameFile(have, fi) {
			return fileStat{}, err
		}
	} else if err != nil {
		return fileStat{}, err
	}
	st, err = s.afterLink(path, name, st.ino)
	if errors.Is(err, errRelinked) {
		os.Remove(name) // another file than its name says: not kept
		return fileStat{}, fs.ErrNotExist
	}
	return st, err
}

// errRelinked: the file at a path was replaced as it was linked.
var errRelinked = errors.New("replaced as it was linked")

// afterLink is the stat of the linked file at name, which must still be
// the one at path, of inode ino (its name).
func (s *Store) afterLink(path, name string, ino uint64) (fileStat, error) {
	lf, err := os.Lstat(name)
	if err != nil {
		return fileStat{}, err
	}
	pf, err := os.Lstat(path)
	if err != nil {
		return fileStat{}, err
	}
	st, _ := statOf(pf)
	if !os.SameFile(lf, pf) || st.ino != ino {
		// replaced as it was linked: read again next time (the watch, or
		// the stat's change, says so)
		return fileStat{}, errRelinked
	}
	return st, nil
}

// linkIntact opens the store's link of l and reports whether it still holds
// what the checkpoint recorded; why says what is wrong when it does not.
func (s *Store) linkIntact(l linkedFile) (*os.File, string) {
	if l.Link == "" || strings.ContainsAny(l.Link, `/\`) || l.Link == "." || l.Link == ".." {
		return nil, "its record names no link in the store"
	}
	f, err := openRegular(filepath.Join(s.linksDir(), l.Link))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "its hard link in the store is gone"
	}
	if err != nil {
		return nil, fmt.Sprintf("its hard link in the store cannot be read (%v)", err)
	}
	fi, err := f.Stat()
	st, ok := statOf(fi)
	switch {
	case err != nil || !ok:
		f.Close()
		return nil, "its hard link in the store cannot be read"
	case st.ino != l.Ino:
		f.Close()
		return nil, "its hard link in the store is another file now"
	case st.size != l.Size || st.mtime != l.Mtime:
		f.Close()
		return nil, fmt.Sprintf("was %s, kept by a hard link, and written in place since (now %s; the store's link is the same file): it cannot be put back", ShowSize(l.Size), ShowSize(st.size))
	}
	return f, ""
}

// linkedSkips drops from entries (as notKeptSkips) the linked files of
// checkpoint target that cannot be put back, and says why: the store's
// link is gone, or holds another content (written in place without the
// sandbox). The others are written from their link (stageOne).
func (s *Store) linkedSkips(entries []diffEntry, target manifest) ([]diffEntry, []NotRestored) {
	if len(target.Linked) == 0 {
		return entries, nil
	}
	var left []NotRestored
	out := entries[:0:0]
	for _, e := range entries {
		l, ok := target.linked(e.path)
		if !ok || e.status == 'D' {
			out = append(out, e)
			continue
		}
		f, why := s.linkIntact(l)
		if f != nil {
			f.Close()
			out = append(out, e)
			continue
		}
		if e.status != 'A' {
			why += "; what is there now is left as it is"
		}
		left = append(left, NotRestored{Path: rootPath(e.path), Why: why})
	}
	return out, left
}

// linked reports whether checkpoint path p (work/…) is a file the manifest
// lists as kept by a link, and what it recorded.
func (m *manifest) linked(p string) (linkedFile, bool) {
	key := workPath(p)
	if key == "" || m.Linked == nil || !strings.HasPrefix(p, "work/") {
		return linkedFile{}, false
	}
	l, ok := m.Linked[key]
	return l, ok
}

// copyLinked writes the content of target's link for w to f.
func (s *Store) copyLinked(l linkedFile, f *os.File) error {
	src, why := s.linkIntact(l)
	if src == nil {
		return fmt.Errorf("checkpoint: cannot restore a linked file: %s", why)
	}
	defer src.Close()
	n, err := io.Copy(f, io.LimitReader(src, l.Size+1))
	if err == nil && n != l.Size {
		err = fmt.Errorf("its link in the store holds %d bytes, not %d", n, l.Size)
	}
	if err != nil {
		return fmt.Errorf("checkpoint: restoring a linked file: %w", err)
	}
	return nil
}

// pruneLinks removes the store's links no recorded checkpoint lists (nor
// the last manifest, the scan cache's): called once records were dropped.
func (s *Store) pruneLinks() error {
	ents, err := os.ReadDir(s.linksDir())
	if err != nil || len(ents) == 0 {
		return nil // none made yet
	}
	keep := map[string]bool{}
	for name := range s.modes.Linked {
		keep[s.modes.Linked[name].Link] = true
	}
	var in bytes.Buffer
	seen := map[string]bool{}
	for _, r := range s.records {
		for _, id := range []string{r.Before, r.After} {
			if id != "" && !seen[id] {
				seen[id] = true
				in.WriteString(id + ":modes\n")
			}
		}
	}
	if in.Len() > 0 {
		out, err := s.git(in.Bytes(), "", "", "cat-file", "--batch")
		if err != nil {
			return err
		}
		rd := bufio.NewReader(bytes.NewReader(out))
		for {
			header, err := rd.ReadString('\n')
			if err != nil {
				break
			}
			f := strings.Fields(header)
			if len(f) != 3 {
				continue // missing
			}
			size, err := strconv.Atoi(f[2])
			if err != nil || size < 0 {
				return fmt.Errorf("checkpoint: pruning links: bad answer %q", header)
			}
			body := make([]byte, size+1)
			if _, err := io.ReadFull(rd, body); err != nil {
				return fmt.Errorf("checkpoint: pruning links: %w", err)
			}
			var m manifest
			if json.Unmarshal(body[:size], &m) != nil {
				// A damaged manifest names no link it could be trusted for;
				// but keep every link rather than lose one.
				return nil
			}
			for _, l := range m.Linked {
				keep[l.Link] = true
			}
		}
	}
	for _, e := range ents {
		if !keep[e.Name()] {
			if err := os.Remove(filepath.Join(s.linksDir(), e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("checkpoint: %w", err)
			}
		}
	}
	return nil
}

// linksSize is what the store's links take on disk that nothing else holds:
// each link's blocks once the root (or anything) no longer has another name
// for its file. A file still in the root costs the store nothing.
func (s *Store) linksSize() int64 {
	ents, err := os.ReadDir(s.linksDir())
	if err != nil {
		return 0
	}
	var total int64
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if nlink, blocks, ok := linkCount(fi); ok && nlink == 1 {
			total += blocks
		}
	}
	return total
}

// shedLinks removes links whose files nothing else names, the oldest first
// (by change time: when the root's name went), until want bytes are freed,
// and returns how many were; never one the last checkpoint lists. Undo to a
// checkpoint that listed one says its link is gone.
func (s *Store) shedLinks(want int64) int64 {
	ents, err := os.ReadDir(s.linksDir())
	if err != nil {
		return 0
	}
	current := map[string]bool{}
	for _, l := range s.modes.Linked {
		current[l.Link] = true
	}
	type link struct {
		name          string
		ctime, blocks int64
	}
	var sole []link
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil || !fi.Mode().IsRegular() || current[e.Name()] {
			continue
		}
		st, _ := statOf(fi)
		if nlink, blocks, ok := linkCount(fi); ok && nlink == 1 {
			sole = append(sole, link{e.Name(), st.ctime, blocks})
		}
	}
	sort.Slice(sole, func(i, j int) bool { return sole[i].ctime < sole[j].ctime })
	var freed int64
	for _, l := range sole {
		if freed >= want {
			break
		}
		if os.Remove(filepath.Join(s.linksDir(), l.name)) == nil {
			freed += l.blocks
		}
	}
	return freed
}

// storeLinkedStub stores the stub blob of a linked entry (linkedStub) and
// returns its id.
func (s *Store) storeLinkedStub(st fileStat) ([sha1.Size]byte, error) {
	return s.storeBlob(linkedStub(st))
}

// stageLink makes name of stage the store's link of l, the very file the
// checkpoint recorded, which has mode perm: the root's name for it comes
// back as it was, with no copy, and two names the root had for one file (a
// hard link of the user's) come back as one file again, as does a name
// whose other is still that file. An error: copied instead (copyLinked).
// A file whose mode is no longer perm is copied rather than changed: it may
// have a name outside the root too (chmodOwn).
func (s *Store) stageLink(l linkedFile, stage *beneath.Root, name string, perm fs.FileMode) error {
	src, why := s.linkIntact(l)
	if src == nil {
		return errors.New(why)
	}
	defer src.Close()
	if fi, err := src.Stat(); err != nil || fi.Mode().Perm() != perm {
		return errors.New("its mode changed")
	}
	return fresh(stage, name, func() error { return stage.LinkFile(src, name) })
}
