package checkpoint

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
)

// EmptyTree is git's empty tree.
const EmptyTree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

// stagePrefix names the directories Restore stages files in, inside the root
// (a rename does not cross file systems); checkpoints leave them out.
const stagePrefix = ".shellgate-undo-"

// noCommit is git add's refusal of a nested repository without a commit.
var noCommit = regexp.MustCompile(`'([^']+)' does not have a commit checked out`)

// snapshot checkpoints the root as it is now and returns the checkpoint's
// tree. The caller holds the locks.
func (s *Store) snapshot() (string, error) {
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
	var (
		wg       sync.WaitGroup
		gitTree  = EmptyTree
		gitErr   error
		gitModes map[string]uint32
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		gitTree, gitModes, gitErr = s.gitPass()
	}()
	workTree, workModes, err := s.workPass()
	wg.Wait()
	if err == nil {
		err = gitErr
	}
	if err != nil {
		return "", err
	}
	changed := s.modes.update(false, workModes)
	changed = s.modes.update(true, gitModes) || changed
	if changed || s.modes.blob == "" {
		if err := s.modes.save(filepath.Join(s.dir, "modes.json")); err != nil {
			return "", err
		}
		h, err := s.writeObject("blob", s.modes.bytes())
		if err != nil {
			return "", err
		}
		s.modes.blob = h
	}
	entries := []treeEntry{
		{"40000", "git", gitTree},
		{"100644", "modes", s.modes.blob},
		{"40000", "work", workTree},
	}
	// A .git file (a worktree's or a submodule's pointer to its repository),
	// which git add never takes: kept as the blob "gitfile".
	if fi, err := os.Lstat(filepath.Join(s.root, ".git")); err == nil && fi.Mode().IsRegular() && fi.Size() <= 1<<20 {
		b, err := os.ReadFile(filepath.Join(s.root, ".git"))
		if err != nil {
			return "", fmt.Errorf("checkpoint: %w", err)
		}
		h, err := s.writeObject("blob", b)
		if err != nil {
			return "", err
		}
		entries = append(entries, treeEntry{"100644", "gitfile", h})
	}
	return s.writeTree(entries)
}

// workPass adds the root's files to the work index and writes its tree; the
// modes it returns are those of the paths git added (0: removed).
func (s *Store) workPass() (string, map[string]uint32, error) {
	index := filepath.Join(s.dir, "index.work")
	excludes, err := s.excludes()
	if err != nil {
		return "", nil, err
	}
	ex := []string{"-c", "core.excludesFile=" + excludes}
	// Small ignored files (.env): git lists the ignored files outside ignored
	// directories, without entering those. It runs beside git add: the
	// ignored files it lists are not in the index before or after.
	type listing struct {
		out []byte
		err error
	}
	var lists chan listing
	if s.o.IgnoredMaxSize >= 0 || len(s.o.KeepIgnored) > 0 {
		lists = make(chan listing, 1)
		go func() {
			out, err := s.git(nil, s.root, index, append(ex, "ls-files", "-z", "-o", "-i", "--exclude-standard", "--directory")...)
			lists <- listing{out, err}
		}()
	}
	var out []byte
	for tries := 0; ; tries++ {
		out, err = s.git(nil, s.root, index, append(ex, "add", "-A", "-v")...)
		m := noCommit.FindStringSubmatch(errText(err))
		if m == nil || tries > 64 {
			break
		}
		// A nested repository with no commit yet: git cannot add it as a
		// gitlink, and will not add its files. It is left out (said in
		// the docs) rather than failing every checkpoint.
		s.nested = append(s.nested, "/"+strings.TrimSuffix(m[1], "/")+"/")
		if err := os.WriteFile(filepath.Join(s.dir, "nested"), []byte(strings.Join(s.nested, "\n")+"\n"), 0o600); err != nil {
			return "", nil, fmt.Errorf("checkpoint: %w", err)
		}
		if _, err := s.excludes(); err != nil { // the same file, which the next try reads
			return "", nil, err
		}
	}
	var list listing
	if lists != nil {
		list = <-lists
	}
	if err != nil {
		return "", nil, err
	}
	if list.err != nil {
		return "", nil, list.err
	}
	modes := map[string]uint32{}
	s.addedModes(s.root, out, modes)
	var keep bytes.Buffer
	for _, p := range strings.Split(string(list.out), "\x00") {
		if p == "" || strings.HasSuffix(p, "/") || strings.HasPrefix(p, stagePrefix) {
			continue
		}
		fi, err := os.Lstat(filepath.Join(s.root, filepath.FromSlash(p)))
		if err != nil || !fi.Mode().IsRegular() && fi.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		if fi.Size() <= s.o.IgnoredMaxSize || fi.Size() <= MaxKeptIgnoredSize && s.keepIgnored(p) {
			keep.WriteString(p)
			keep.WriteByte(0)
		}
	}
	if keep.Len() > 0 {
		out, err := s.git(keep.Bytes(), s.root, index, append([]string{"--literal-pathspecs"}, append(ex, "add", "-f", "-v", "--pathspec-from-file=-", "--pathspec-file-nul")...)...)
		if err != nil {
			return "", nil, err
		}
		s.addedModes(s.root, out, modes)
	}
	tree, err := s.writeIndexTree(s.root, index, len(modes) == 0)
	return tree, modes, err
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
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

// excludes writes the work pass's exclude file: the project's own
// .git/info/exclude, the store's staging directories and the nested
// repositories left out; it returns its path.
func (s *Store) excludes() (string, error) {
	p := filepath.Join(s.dir, "exclude")
	var b bytes.Buffer
	own, _ := os.ReadFile(filepath.Join(s.root, ".git", "info", "exclude"))
	b.Write(own)
	b.WriteString("\n/" + stagePrefix + "*/\n")
	for _, n := range s.nested {
		b.WriteString(n + "\n")
	}
	if old, err := os.ReadFile(p); err == nil && bytes.Equal(old, b.Bytes()) {
		return p, nil
	}
	if err := os.WriteFile(p, b.Bytes(), 0o600); err != nil {
		return "", fmt.Errorf("checkpoint: %w", err)
	}
	return p, nil
}

// gitPass adds the files of the root's .git directory to the git index and
// writes their tree; without a .git directory, the empty tree.
func (s *Store) gitPass() (string, map[string]uint32, error) {
	index := filepath.Join(s.dir, "index.git")
	dotgit := filepath.Join(s.root, ".git")
	if fi, err := os.Lstat(dotgit); err != nil || !fi.IsDir() {
		os.Remove(index)
		return EmptyTree, map[string]uint32{}, nil
	}
	out, err := s.git(nil, dotgit, index, "-c", "core.excludesFile="+os.DevNull, "add", "-A", "-v")
	if err != nil {
		return "", nil, err
	}
	modes := map[string]uint32{}
	s.addedModes(dotgit, out, modes)
	tree, err := s.writeIndexTree(dotgit, index, len(modes) == 0)
	return tree, modes, err
}

// indexTree is the tree last written from an index file, and the file's
// size and time then.
type indexTree struct {
	tree string
	size int64
	mod  time.Time
}

// writeIndexTree is git write-tree of index, or, when git add changed
// nothing (unchanged) and the file is as the last write-tree left it, that
// tree again without starting git.
func (s *Store) writeIndexTree(work, index string, unchanged bool) (string, error) {
	s.treesMu.Lock()
	last, ok := s.trees[index]
	s.treesMu.Unlock()
	fi, err := os.Stat(index)
	if unchanged && ok && err == nil && fi.Size() == last.size && fi.ModTime().Equal(last.mod) {
		return last.tree, nil
	}
	out, err := s.git(nil, work, index, "write-tree")
	if err != nil {
		return "", err
	}
	tree := strings.TrimSpace(string(out))
	if fi, err := os.Stat(index); err == nil {
		s.treesMu.Lock()
		if s.trees == nil {
			s.trees = map[string]indexTree{}
		}
		s.trees[index] = indexTree{tree, fi.Size(), fi.ModTime()}
		s.treesMu.Unlock()
	}
	return tree, nil
}

// addedModes reads git add -v's lines ("add 'p'", "remove 'p'") and records
// each added path's permission bits (0 for a removed one, or a symlink).
func (s *Store) addedModes(dir string, out []byte, modes map[string]uint32) {
	for _, line := range strings.Split(string(out), "\n") {
		var p string
		var removed bool
		switch {
		case strings.HasPrefix(line, "add '") && strings.HasSuffix(line, "'"):
			p = line[len("add '") : len(line)-1]
		case strings.HasPrefix(line, "remove '") && strings.HasSuffix(line, "'"):
			p, removed = line[len("remove '"):len(line)-1], true
		default:
			continue
		}
		if removed {
			modes[p] = 0
			continue
		}
		fi, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(p)))
		if err != nil || !fi.Mode().IsRegular() {
			modes[p] = 0
			continue
		}
		modes[p] = uint32(fi.Mode().Perm()) | 1<<31 // set: a regular file seen
	}
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
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("checkpoint: %w", err)
	}
	var z bytes.Buffer
	w := zlib.NewWriter(&z)
	w.Write([]byte(head))
	w.Write(data)
	w.Close()
	tmp, err := os.CreateTemp(dir, "tmp_obj_")
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

// setRef points refs/cp/name at id (a loose ref file, written in place).
func (s *Store) setRef(name, id string) error {
	p := filepath.Join(s.gitDir, "refs", "cp", name)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return writeFile(p, []byte(id+"\n"), false)
}
