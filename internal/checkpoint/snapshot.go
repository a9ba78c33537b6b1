package checkpoint

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/adler32"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/shellgate/shellgate/internal/protect"
)

// EmptyTree is git's empty tree.
const EmptyTree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

// stagePrefix names the directories Restore stages files in, inside the root
// (a rename does not cross file systems); checkpoints leave them out.
const stagePrefix = ".shellgate-undo-"

// snapshot checkpoints the root as it is now and returns the checkpoint's
// tree. The caller holds the locks.
func (s *Store) snapshot() (top string, err error) {
	if fi, err := os.Lstat(s.root); errors.Is(err, fs.ErrNotExist) {
		// The root itself was deleted (rm -rf "$(pwd)"): it is kept as empty.
		if err := os.MkdirAll(s.root, 0o755); err != nil {
			return "", fmt.Errorf("checkpoint: the root is gone and cannot be made again: %w", err)
		}
	} else if err != nil {
		return "", fmt.Errorf("checkpoint: %w", err)
	} else if !fi.IsDir() {
		return "", fmt.Errorf("checkpoint: the root %s is not a directory", s.root)
	}
	replaced := s.loadScanCache()
	if s.watch == nil && !s.noWatch {
		s.watch = newDirWatch(s)
		s.noWatch = s.watch == nil
	}
	// What the watch saw since the last checkpoint; nothing that can be
	// trusted when the cache came from another process's checkpoint.
	workPlan, gitPlan := s.watch.plan('w'), s.watch.plan('g')
	if replaced {
		workPlan, gitPlan = nil, nil
	}
	// When the last one left out other paths (SetLeave), the directories
	// that hold them are read again: taken as they were, they would keep,
	// or lack, what this one leaves out.
	leaveKey := s.leave.key()
	s.indexAgain = false
	if leaveKey != s.leftOut {
		replan(workPlan, false, s.leftLeave, s.leave)
		replan(gitPlan, true, s.leftLeave, s.leave)
		// The index files and todo lists kept as the guard would leave
		// them are read again, wherever they are in .git.
		if s.leave != nil && s.leave.GitIndex || s.leftLeave != nil && s.leftLeave.GitIndex {
			s.indexAgain, gitPlan = true, nil
		}
	}
	if replaced && s.leave != nil && s.leave.GitIndex {
		s.indexAgain = true // another process's cache: its ids of an index are not this Leave's
	}
	defer func() {
		if err != nil {
			s.watch.failed('w')
			s.watch.failed('g')
		}
	}()
	var (
		wg      sync.WaitGroup
		gitDir  *scanDir
		gitErr  error
		gitRead int
		gitPass = &scanPass{} // none: no .git directory
	)
	dotgit := filepath.Join(s.root, ".git")
	if fi, err := os.Lstat(dotgit); err == nil && fi.IsDir() {
		scanGit := func() {
			gitDir, gitPass, gitRead, gitErr = s.scan(dotgit, true, s.cache.git, nil, gitPlan)
		}
		if workPlan != nil && gitPlan != nil {
			scanGit() // the watch names the few directories to read: no handoff
		} else {
			wg.Add(1)
			go func() {
				defer wg.Done()
				scanGit()
			}()
		}
	}
	workDir, workPass, workRead, err := s.scan(s.root, false, s.cache.work, s.globalIgnore(), workPlan)
	wg.Wait()
	if err == nil {
		err = gitErr
	}
	if err != nil {
		return "", err
	}
	groups, shared := sameFiles(workPass.names, gitPass.names)
	m := manifest{Work: workPass.modes, Git: gitPass.modes, NotKeptWork: workPass.big, NotKeptGit: gitPass.big,
		Linked: workPass.linked, HardLinks: groups}
	if err := s.setModes(m); err != nil {
		return "", err
	}
	entries := []treeEntry{
		{"40000", "git", treeOf(gitDir)},
		{"100644", "modes", s.modes.blob},
		{"40000", "work", treeOf(workDir)},
	}
	if workDir != nil && workDir.repos > 0 {
		var nested []treeEntry
		reposOf(workDir, "", &nested)
		h, err := s.writeTree(nested)
		if err != nil {
			return "", err
		}
		entries = append(entries, treeEntry{"40000", "nested", h})
	}
	// A .git file (a worktree's or a submodule's pointer to its repository),
	// which git add never takes: kept as the blob "gitfile".
	gitfile := ""
	if fi, err := os.Lstat(dotgit); err == nil && fi.Mode().IsRegular() && fi.Size() <= 1<<20 && !(s.leave != nil && s.leave.GitFile) {
		b, err := readSmall(dotgit, 1<<20)
		if err != nil {
			return "", fmt.Errorf("checkpoint: %w", err)
		}
		h, err := s.writeObject("blob", b)
		if err != nil {
			return "", err
		}
		gitfile = h
		entries = append(entries, treeEntry{"100644", "gitfile", h})
	}
	top, err = s.writeTree(entries)
	if err != nil {
		return "", err
	}
	s.cache = scanCache{work: workDir, git: gitDir}
	s.shared = shared
	s.leftOut, s.leftLeave = leaveKey, s.leave
	s.unsaved += workRead + gitRead
	if s.unsaved >= 64 || s.cacheStat == nil {
		if s.deferUpkeep {
			s.due.cache = true // Upkeep writes it
		} else {
			s.saveScanCache()
		}
	}
	s.remember(top, snapState{work: workDir, git: gitDir, modes: s.modes, gitfile: gitfile})
	return top, nil
}

// reposOf lists the nested repositories in d (path rel) and beneath as the
// entries of the checkpoint's "nested" tree: named by their path
// (nestedName), a .git directory's tree or a .git file's blob.
func reposOf(d *scanDir, rel string, out *[]treeEntry) {
	for i := range d.entries {
		e := &d.entries[i]
		switch {
		case e.name == ".git":
			mode := "40000"
			if e.mode != modeTree {
				mode = fmt.Sprintf("%o", e.mode)
			} else if e.dir == nil || len(e.dir.entries) == 0 {
				continue
			}
			*out = append(*out, treeEntry{mode, nestedName(rel), hex.EncodeToString(e.id[:])})
		case e.mode == modeTree && e.dir != nil && e.dir.repos > 0:
			reposOf(e.dir, joinRel(rel, e.name), out)
		}
	}
}

// nestedName is the name in the "nested" tree of the repository at path p
// of the root: its slashes (and percent signs) escaped.
func nestedName(p string) string {
	return strings.NewReplacer("%", "%25", "/", "%2F").Replace(p)
}

// nestedPath is the inverse of nestedName.
func nestedPath(name string) string {
	return strings.NewReplacer("%2F", "/", "%25", "%").Replace(name)
}

// setModes makes m (what the passes found: the exact modes, the files not
// kept, kept by a link, or with other names) the current manifest, saved and
// written as a blob, unless it is the current one.
func (s *Store) setModes(m manifest) error {
	m.LinkMax = s.linkMax()
	if maps.Equal(s.modes.Work, m.Work) && maps.Equal(s.modes.Git, m.Git) &&
		maps.Equal(s.modes.NotKeptWork, m.NotKeptWork) && maps.Equal(s.modes.NotKeptGit, m.NotKeptGit) &&
		maps.Equal(s.modes.Linked, m.Linked) && s.modes.LinkMax == m.LinkMax &&
		slices.EqualFunc(s.modes.HardLinks, m.HardLinks, slices.Equal) && s.modes.blob != "" {
		return nil
	}
	if len(m.Work) == 0 {
		m.Work = nil
	}
	if len(m.Git) == 0 {
		m.Git = nil
	}
	if len(m.NotKeptWork) == 0 {
		m.NotKeptWork = nil
	}
	if len(m.NotKeptGit) == 0 {
		m.NotKeptGit = nil
	}
	if len(m.Linked) == 0 {
		m.Linked = nil
	}
	if err := m.save(filepath.Join(s.dir, "modes.json")); err != nil {
		return err
	}
	h, err := s.writeObject("blob", m.bytes())
	if err != nil {
		return err
	}
	m.blob = h
	s.modes = m
	return nil
}

// sameFiles groups the kept files with other names by their inode (work:
// the work pass's, by path in the root; git: the .git pass's) into the
// names each file has in the checkpoint, where it has more than one: each
// group sorted, the groups by their first name; and the set of their inodes.
func sameFiles(work, git map[string]uint64) ([][]string, map[uint64]bool) {
	if len(work)+len(git) < 2 {
		return nil, nil
	}
	byIno := map[uint64][]string{}
	for p, ino := range work {
		byIno[ino] = append(byIno[ino], p)
	}
	for p, ino := range git {
		byIno[ino] = append(byIno[ino], ".git/"+p)
	}
	var out [][]string
	shared := map[uint64]bool{}
	for ino, names := range byIno {
		if len(names) > 1 {
			slices.Sort(names)
			out = append(out, names)
			shared[ino] = true
		}
	}
	slices.SortFunc(out, func(a, b []string) int { return strings.Compare(a[0], b[0]) })
	return out, shared
}

// treeOf is a pass's tree id (the empty tree for none).
func treeOf(d *scanDir) string {
	if d == nil || len(d.entries) == 0 {
		return EmptyTree
	}
	return hex.EncodeToString(d.tree[:])
}

// ownDirs are the directories of shellgate's own at the root that no
// checkpoint keeps, as an ignore file says it: those Restore stages files in,
// and the sandbox's quarantine (what it moved aside stays there, whatever
// is undone).
const ownDirs = "\n/" + stagePrefix + "*/\n/" + protect.QuarantineDir + "/\n"

// globalIgnore is what the root's pass ignores besides its .gitignore files:
// the project's own .git/info/exclude, and shellgate's own directories.
func (s *Store) globalIgnore() *ignoreList {
	var b bytes.Buffer
	own, _ := readSmall(filepath.Join(s.root, ".git", "info", "exclude"), maxIgnoreFile)
	b.Write(own)
	b.WriteString(ownDirs)
	return parseIgnore("", b.Bytes())
}

// keepIgnored reports an ignored path whose base name KeepIgnored names.
func (s *Store) keepIgnored(p string) bool {
	base := path.Base(p)
	for _, pat := range s.o.KeepIgnored {
		if ok, _ := path.Match(pat, base); ok {
			return true
		}
	}
	return false
}

// treeEntry is one entry of a tree object.
type treeEntry struct {
	mode, name, hash string
}

// writeTree writes a tree object of entries (sorted as git sorts them).
func (s *Store) writeTree(entries []treeEntry) (string, error) {
	sort.Slice(entries, func(i, j int) bool {
		a, b := entries[i].name, entries[j].name
		if entries[i].mode == "40000" {
			a += "/"
		}
		if entries[j].mode == "40000" {
			b += "/"
		}
		return a < b
	})
	var b bytes.Buffer
	for _, e := range entries {
		raw, err := hex.DecodeString(e.hash)
		if err != nil || len(raw) != sha1.Size {
			return "", fmt.Errorf("checkpoint: bad object id %q", e.hash)
		}
		b.WriteString(e.mode + " " + e.name + "\x00")
		b.Write(raw)
	}
	return s.writeObject("tree", b.Bytes())
}

// writeObject writes a loose object to the store (SHA-1, the store's format).
func (s *Store) writeObject(kind string, data []byte) (string, error) {
	head := fmt.Sprintf("%s %d\x00", kind, len(data))
	h := sha1.New()
	h.Write([]byte(head))
	h.Write(data)
	id := hex.EncodeToString(h.Sum(nil))
	dir := filepath.Join(s.gitDir, "objects", id[:2])
	p := filepath.Join(dir, id[2:])
	if _, err := os.Stat(p); err == nil {
		return id, nil
	}
	if err := s.fanout(id); err != nil {
		return "", err
	}
	var z bytes.Buffer
	if len(head)+len(data) <= storedMax {
		z.Write(storedZlib([]byte(head), data))
	} else {
		w := getZlib(&z)
		w.Write([]byte(head))
		w.Write(data)
		w.Close()
		zlibs.Put(w)
	}
	tmp, err := os.CreateTemp(dir, "tmp_obj_")
	if errors.Is(err, fs.ErrNotExist) {
		// git's gc removed the directory once it packed its objects
		s.fanouts.Delete(id[:2])
		if err = s.fanout(id); err == nil {
			tmp, err = os.CreateTemp(dir, "tmp_obj_")
		}
	}
	if err != nil {
		return "", fmt.Errorf("checkpoint: %w", err)
	}
	_, err = tmp.Write(z.Bytes())
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), p)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("checkpoint: %w", err)
	}
	return id, nil
}

// storedMax bounds the objects written without compression: stored, such
// an object still fits the one disk block that compressing it would leave
// it in (git's count-objects, and Size, count a loose object by its
// blocks), and a pack compresses it again anyway. Most of a checkpoint's
// objects are such (a changed small file, the trees above it): deflate was
// ~6 % of a keeper's time for a command that changes one file.
const storedMax = 4096 - 64

// storedZlib is a zlib stream of parts (at most 65 535 bytes together) in
// one stored (uncompressed) deflate block, as zlib writes at level 0.
func storedZlib(parts ...[]byte) []byte {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	b := make([]byte, 0, 2+5+n+4)
	b = append(b, 0x78, 0x01, 0x01, byte(n), byte(n>>8), ^byte(n), ^byte(n>>8))
	a := adler32.New()
	for _, p := range parts {
		b = append(b, p...)
		a.Write(p)
	}
	return a.Sum(b)
}

// zlibs are compressors at git's level for loose objects
// (core.looseCompression: best speed), each some hundreds of KiB to make.
var zlibs sync.Pool

func getZlib(dst io.Writer) *zlib.Writer {
	if w, ok := zlibs.Get().(*zlib.Writer); ok {
		w.Reset(dst)
		return w
	}
	w, _ := zlib.NewWriterLevel(dst, zlib.BestSpeed)
	return w
}

// setRef points refs/cp/name at id (a loose ref file, written in place).
func (s *Store) setRef(name, id string) error {
	p := filepath.Join(s.gitDir, "refs", "cp", name)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return writeFile(p, []byte(id+"\n"), false)
}
